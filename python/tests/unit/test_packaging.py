"""Packaging: every subpackage ships, each store's Python ships from its folder
(adapters/<name>/python) and is registered from it (setup.py), and the wheel holds exactly the
adapter declarations. A new store's folder is picked up with no other edit."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from txcommit.adapters.declarations import declarations_root
from txcommit.adapters.plugin import GROUP, StorePlugin

from support.build import setuptools_dist as _setuptools_dist

REPO = Path(__file__).resolve().parents[3]
#: Each store's own package, in its folder: adapters/<name>/python/txcommit_store_<name>.
STORE_PACKAGES = sorted(p.parent for p in REPO.glob("adapters/*/python/*/__init__.py"))


def _descriptors() -> list[str]:
    """Every descriptor of every store's plugin.py (its StorePlugin objects, imported), as the
    entry point that must register it: ``<store name> = <package>.plugin:<attribute>``."""
    found = []
    for package in STORE_PACKAGES:
        module = importlib.import_module(f"{package.name}.plugin")
        found += [
            f"{value.name} = {module.__name__}:{attr}"
            for attr, value in vars(module).items()
            if isinstance(value, StorePlugin)
        ]
    return sorted(found)


#: The entry points of the stores: one per descriptor, whatever the folders hold.
STORE_ENTRY_POINTS = _descriptors()


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    listed = set(_setuptools_dist(REPO).packages)
    src = REPO / "python" / "src"
    found = {
        ".".join(p.parent.relative_to(src).parts) for p in (src / "txcommit").rglob("__init__.py")
    }
    missing = found - listed
    assert not missing, f"add {sorted(missing)} to [tool.setuptools] packages in pyproject.toml"


def test_every_store_package_is_listed_and_mapped_to_its_folder() -> None:
    dist = _setuptools_dist(REPO)
    assert {"txcommit_store_local", "txcommit_store_s3"} <= {p.name for p in STORE_PACKAGES}
    for package in STORE_PACKAGES:
        name = package.name
        assert name.startswith("txcommit_store_"), f"{package}: name it txcommit_store_<name>"
        assert name in dist.packages, f"add {name} to [tool.setuptools] packages"
        where = str(package.relative_to(REPO))
        assert dist.package_dir.get(name) == where, (
            f'map it in [tool.setuptools.package-dir]: "{name}" = "{where}"'
        )
        sub = {".".join(p.parent.relative_to(package.parent).parts) for p in package.rglob("*.py")}
        assert sub <= set(dist.packages), f"add {sorted(sub - set(dist.packages))} to packages"
    # Each store's ENTRY_POINTS names every descriptor of its plugin.py, under its own name.
    assert {"local = txcommit_store_local.plugin:LOCAL"} <= set(STORE_ENTRY_POINTS)
    assert dist.entry_points[GROUP] == STORE_ENTRY_POINTS
    assert "txcommit = txcommit.cli:console" in dist.entry_points["console_scripts"]
    assert len(dist.entry_points["fsspec.specs"]) == 3


#: A store added the way a contributor adds one: a folder and nothing else.
EXAMPLE_PLUGIN = """
from txcommit.adapters.plugin import StorePlugin

EXAMPLE = StorePlugin(name="example", summary="a store added by its folder alone",
                      python_store="txcommit_store_example.store:ExampleStore")
ENTRY_POINTS = {"example": "EXAMPLE"}
"""


def test_the_package_ships_only_the_adapter_json_files_and_reads_them(tmp_path: Path) -> None:
    # A copy of the project, with JVM sources next to a declaration, as adapters/s3/jvm/ is,
    # and a new store's folder, adapters/example/: its declaration and its Python only.
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(REPO / name, project / name)
    for d in ("adapters", "conformance/vectors", "python/src/txcommit"):
        for f in (REPO / d).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and "_jars" not in f.parts:
                (project / f.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
                (project / f.relative_to(REPO)).write_bytes(f.read_bytes())
    (project / "adapters" / "s3" / "jvm").mkdir(exist_ok=True)
    (project / "adapters" / "s3" / "jvm" / "Probe.scala").write_text("object Probe")
    example = project / "adapters" / "example"
    declaration = json.loads((REPO / "adapters" / "local" / "adapter.json").read_text())
    (example / "python" / "txcommit_store_example").mkdir(parents=True)
    (example / "adapter.json").write_text(json.dumps({**declaration, "name": "example"}))
    (example / "python" / "txcommit_store_example" / "__init__.py").write_text("")
    (example / "python" / "txcommit_store_example" / "plugin.py").write_text(EXAMPLE_PLUGIN)
    (example / "python" / "txcommit_store_example" / "store.py").write_text(
        "from txcommit.adapters.local import LocalStore as ExampleStore\n"
    )
    lib = tmp_path / "lib"
    dist = _setuptools_dist(project)
    # Registered and shipped from its folder, beside the six.
    assert dist.entry_points[GROUP] == sorted(
        [*STORE_ENTRY_POINTS, "example = txcommit_store_example.plugin:EXAMPLE"]
    )
    where = "adapters/example/python/txcommit_store_example"
    assert dist.package_dir["txcommit_store_example"] == where
    cwd = os.getcwd()
    os.chdir(project)  # setuptools resolves package-dir against the working directory
    try:
        build_py = dist.get_command_obj("build_py")
        build_py.build_lib = str(lib)
        build_py.compile = False
        build_py.ensure_finalized()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build_py.run()
    finally:
        os.chdir(cwd)
    shipped = sorted(
        str(p.relative_to(lib)) for p in (lib / "txcommit" / "_adapters").rglob("*") if p.is_file()
    )
    expected = sorted(
        f"txcommit/_adapters/{p.parent.name}/adapter.json"
        for p in (project / "adapters").glob("*/adapter.json")
    )
    assert "txcommit/_adapters/example/adapter.json" in expected
    assert shipped == expected
    # The installed layout finds its own copy, not a source checkout's.
    probe = (
        "from txcommit.adapters.declarations import declarations_root, load_declarations;"
        "print(declarations_root()); print(len(load_declarations()))"
    )
    assert _installed(lib, probe) == [str(lib / "txcommit" / "_adapters"), str(len(expected))]
    # The golden vectors ship too (the kit's checks use them), and are found there.
    vectors = sorted(
        str(p.relative_to(REPO / "conformance" / "vectors"))
        for p in (REPO / "conformance" / "vectors").rglob("*.json")
    )
    assert vectors and vectors == sorted(
        str(p.relative_to(lib / "txcommit" / "_vectors"))
        for p in (lib / "txcommit" / "_vectors").rglob("*")
        if p.is_file()
    )
    probe = "from txcommit.testing.vectors import vectors_root; print(vectors_root())"
    assert _installed(lib, probe) == [str(lib / "txcommit" / "_vectors")]
    # Each store's Python ships from its folder as a package of its own, and every built-in
    # entry point loads from the built layout (descriptor, then its Python mirror), the new
    # store's too.
    for package in [*STORE_PACKAGES, example / "python" / "txcommit_store_example"]:
        sources = sorted(str(p.relative_to(package)) for p in package.rglob("*.py"))
        assert sources == sorted(
            str(p.relative_to(lib / package.name)) for p in (lib / package.name).rglob("*.py")
        )
    probe = (
        "from importlib import metadata\n"
        "from txcommit.adapters.plugin import GROUP, builtin_stores\n"
        "for name, value in sorted(builtin_stores().items()):\n"
        "    p = metadata.EntryPoint(name, value, GROUP).load()\n"
        "    module = __import__(value.partition(':')[0], fromlist=['_'])\n"
        "    mirror = p.store_class() if p.python_store else None\n"
        "    print(p.name, module.__file__, mirror.__module__ if mirror else None)"
    )
    shown = _installed(lib, probe)
    assert shown[0::3] == sorted([*(e.partition(" = ")[0] for e in STORE_ENTRY_POINTS), "example"])
    assert all(f.startswith(str(lib) + os.sep) for f in shown[1::3]), shown
    assert {"txcommit_store_s3.store", "txcommit.adapters.local"} <= set(shown[2::3])


def _installed(lib: Path, code: str) -> list[str]:
    """What ``code`` prints, run against the package as built into ``lib`` (not a checkout)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(lib)},
        cwd=lib.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def test_a_source_checkout_reads_the_repositorys_declarations() -> None:
    assert Path(str(declarations_root())).resolve() == REPO / "adapters"
