"""The package's layers only point down: a module imports from its own layer or lower ones,
never from a higher one, and the top-level modules and subpackages import one another in no
cycle. Every import counts, including one inside a function and a relative one; the layers are
listed in docs/architecture.md ("Layers"). The stores' packages (adapters/txcommit_store_<name>)
sit above ``testing`` and below ``server``: the package never imports one (the registry names
them as text), and they import nothing above ``testing``; their ``devkit`` subpackages sit with
txcommit's devkit, at the top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import txcommit

PACKAGE = Path(txcommit.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[3]
#: The stores' packages, each its folder: adapters/txcommit_store_<name>.
STORE_PACKAGES = sorted(REPO.glob("adapters/txcommit_store_*"))
#: What only trying and testing on one machine needs (the devkit distribution): at the top.
DEVKIT = ("devkit", "bench")

#: Bottom to top. A unit is a top-level module or subpackage of txcommit ("" is the package
#: root, txcommit/__init__.py); every module of a subpackage is in the subpackage's layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_names", "_session", "_cache", "_spark_home", "_maven", "_console", "paths"),
    ("stores",),
    ("adapters",),
    ("table",),
    ("readers", "maintenance"),
    ("testing",),
    ("server",),
    ("client",),
    ("",),
    ("conformance",),
    ("cli",),
    ("devkit",),
    ("bench",),
)
LAYER_OF = {unit: i + 1 for i, units in enumerate(LAYERS) for unit in units}


def _show(unit: str) -> str:
    return f"txcommit.{unit}" if unit else "txcommit"


def module_name(path: Path) -> str:
    """``txcommit.adapters.base`` for adapters/base.py, ``txcommit.adapters`` for its
    ``__init__.py``; ``txcommit_store_s3.store`` for a store package's store.py."""
    if PACKAGE in path.parents:
        parts = ["txcommit", *path.relative_to(PACKAGE).with_suffix("").parts]
    else:
        parts = list(path.relative_to(path.parents[1]).with_suffix("").parts)
        for package in STORE_PACKAGES:
            if package in path.parents:
                parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    """The top-level module or subpackage ``module`` belongs to ("" for the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_submodule(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (PACKAGE / rel).is_dir() or (PACKAGE / rel).with_suffix(".py").is_file()


def imports(path: Path) -> list[tuple[int, str]]:
    """Every txcommit module ``path`` imports, with the line: at the top, under
    ``TYPE_CHECKING`` or inside a function; ``from txcommit import x`` names ``txcommit.x`` when
    ``x`` is a module."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                named = sub if sub.startswith("txcommit") and _is_submodule(sub) else target
                found.append((node.lineno, named))
    wanted = {(line, t) for line, t in found if t.split(".")[0].startswith("txcommit")}
    return sorted(wanted)


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_is_the_one_checked() -> None:
    assert SOURCES, f"no modules under {PACKAGE}"
    assert (PACKAGE / "__init__.py") in SOURCES


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(module_name(p)) for p in SOURCES}
    missing = sorted(_show(u) for u in units - LAYER_OF.keys())
    assert not missing, f"no layer for {', '.join(missing)}: add it to LAYERS"


def test_the_store_packages_are_checked() -> None:
    names = {p.name for p in STORE_PACKAGES}
    assert {"txcommit_store_local", "txcommit_store_s3"} <= names, names


def test_the_package_imports_no_store_package() -> None:
    """A store is named in the registry (``txcommit.stores``) as text, never imported by name
    (the devkit's benchmark and demo aside: they run S3's emulator): a store's folder holds
    everything that is that store's."""
    offences = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: imports {target}"
        for path in SOURCES
        if unit_of(module_name(path)) not in DEVKIT
        for line, target in imports(path)
        if target.startswith("txcommit_store_")
    ]
    assert not offences, "the package imports a store's package:\n" + "\n".join(offences)


def test_the_store_packages_import_nothing_above_testing() -> None:
    offences = []
    for package in STORE_PACKAGES:
        for path in sorted(p for p in package.rglob("*.py") if "devkit" not in p.parts):
            for line, target in imports(path):
                if target.startswith("txcommit_store_"):
                    if target.split(".")[0] != package.name:
                        offences.append(f"{path.relative_to(REPO)}:{line}: imports {target}")
                elif LAYER_OF.get(unit_of(target), 0) > LAYER_OF["testing"]:
                    offences.append(
                        f"{path.relative_to(REPO)}:{line}: imports {target} "
                        f"({_show(unit_of(target))}, layer {LAYER_OF.get(unit_of(target))})"
                    )
    assert not offences, "a store's package imports above testing:\n" + "\n".join(offences)


def test_imports_only_point_down() -> None:
    offences = []
    for path in SOURCES:
        source = unit_of(module_name(path))
        for line, target in imports(path):
            to = unit_of(target)
            if LAYER_OF.get(to, 0) > LAYER_OF.get(source, 0):
                offences.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: imports {target}: "
                    f"{_show(source)} (layer {LAYER_OF.get(source)}) -> "
                    f"{_show(to)} (layer {LAYER_OF.get(to)})"
                )
    assert not offences, "imports that point up:\n" + "\n".join(offences)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, or of a node that imports
    itself (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _graph(key: object) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in SOURCES:
        source = module_name(path)
        for _, target in imports(path):
            a, b = (unit_of(source), unit_of(target)) if key == "unit" else (source, target)
            if a != b:
                edges.setdefault(a, set()).add(b)
    return edges


@pytest.mark.parametrize("key", ["unit", "module"])
def test_no_import_cycles(key: str) -> None:
    """Neither between top-level units nor between modules, a package's ``__init__`` included."""
    cycles = _cycles(_graph(key))
    shown = [" <-> ".join(_show(n) if key == "unit" else n for n in c) for c in cycles]
    assert not cycles, "import cycles:\n" + "\n".join(shown)
