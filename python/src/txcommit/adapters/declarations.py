"""Adapter declarations: what each store adapter promises, as data.

A declaration is ``adapters/<name>/adapter.json`` in the source tree. The JVM plugin packages
it as the resource ``txcommit/adapters/<name>/adapter.json``; the Python package ships the same
files as ``txcommit/_adapters/<name>/adapter.json`` (mapped from ``adapters/`` by setuptools,
never copied in git). From a source checkout or an editable install, where
``txcommit/_adapters`` does not exist, the repository's ``adapters/`` is read instead.

Validation follows ``AdapterDeclaration.parse`` of the JVM plugin, so a declaration the JVM
refuses is refused here too, with an error naming the file and the bad key or value; in
addition the ``name`` must be the name of the declaration's directory.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from txcommit.errors import InvalidDeclarationError, UnknownAdapterError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

FORMAT = "txcommit-adapter"
FORMAT_VERSION = 1
PRIMITIVES = ("rename", "conditional-put", "multipart-complete")
LISTINGS = ("consistent", "eventual")
#: Where an adapter is implemented: the JVM plugin (Spark writes and reads through it) and/or
#: the Python mirror (readers, CLI, conformance kit Level 1).
IMPLEMENTATIONS = ("jvm", "python")
#: What a declaration without ``implementations`` means: the format's first users were JVM
#: adapters, loaded from the declaration packaged in their jar.
DEFAULT_IMPLEMENTATIONS = ("jvm",)
DECLARATION_FILE = "adapter.json"


@dataclass(frozen=True)
class AdapterDeclaration:
    """One adapter's declaration (``adapter.json``), validated."""

    name: str
    title: str
    primitive: str
    exclusive_create: bool
    listing: str
    schemes: tuple[str, ...]
    default_for: tuple[str, ...]
    notes: str = ""
    #: Where the adapter is implemented (``jvm``, ``python``); only a ``jvm`` adapter can
    #: serve Spark, and only it can be certified at Level 2 (the protocol through Spark).
    implementations: tuple[str, ...] = DEFAULT_IMPLEMENTATIONS

    @property
    def on_jvm(self) -> bool:
        """Whether the JVM plugin has this adapter (Spark can write tables through it)."""
        return "jvm" in self.implementations

    @property
    def in_python(self) -> bool:
        """Whether the Python mirror has this adapter."""
        return "python" in self.implementations

    @property
    def summary(self) -> str:
        """``name (primitive; schemes a, b)``, as the JVM lists known adapters."""
        return f"{self.name} ({self.primitive}; schemes {', '.join(self.schemes)})"


def parse_declaration(
    data: bytes | str, where: str, expected_name: str | None = None
) -> AdapterDeclaration:
    """Parses and validates one declaration; ``where`` (the file) is named in every error."""

    def bad(why: str) -> InvalidDeclarationError:
        return InvalidDeclarationError(
            f"txcommit: adapter declaration {where} is invalid: {why}. Fix that file (the JVM "
            "plugin refuses it the same way), or reinstall txcommit if you did not edit it."
        )

    try:
        root = json.loads(data)
    except (ValueError, TypeError) as e:
        raise bad(f"it is not JSON ({e})") from None
    if not isinstance(root, dict):
        raise bad("it is not a JSON object")

    def text(key: str) -> str:
        v = root.get(key)
        if not isinstance(v, str):
            raise bad(f"'{key}' is missing or not a string (found {_show(v)})")
        return v

    def texts(key: str) -> tuple[str, ...]:
        v = root.get(key)
        if not isinstance(v, list):
            raise bad(f"'{key}' is missing or not a list (found {_show(v)})")
        for item in v:
            if not isinstance(item, str):
                raise bad(f"'{key}' must hold strings only (found {_show(item)})")
        return tuple(v)

    if text("format") != FORMAT:
        raise bad(f"'format' must be '{FORMAT}' (found {_show(root.get('format'))})")
    version = root.get("formatVersion")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise bad(
            f"'formatVersion' must be {FORMAT_VERSION} (this txcommit reads version "
            f"{FORMAT_VERSION}; found {_show(version)})"
        )
    name = text("name")
    if expected_name is not None and name != expected_name:
        raise bad(f"'name' is '{name}' but the declaration's directory is '{expected_name}'")
    primitive = text("primitive")
    if primitive not in PRIMITIVES:
        raise bad(f"unknown primitive '{primitive}'; expected one of {', '.join(PRIMITIVES)}")
    listing = text("listing")
    if listing not in LISTINGS:
        raise bad(f"unknown listing '{listing}'; expected one of {', '.join(LISTINGS)}")
    exclusive = root.get("exclusiveCreate")
    if not isinstance(exclusive, bool):
        raise bad(f"'exclusiveCreate' is missing or not true/false (found {_show(exclusive)})")
    schemes = texts("schemes")
    if not schemes:
        raise bad("'schemes' is empty")
    defaults = texts("defaultFor")
    for scheme in defaults:
        if scheme not in schemes:
            raise bad(f"'defaultFor' names scheme '{scheme}', which is not in 'schemes'")
    notes = root.get("notes", "")
    if not isinstance(notes, str):
        raise bad(f"'notes' must be a string (found {_show(notes)})")
    implementations: tuple[str, ...] = DEFAULT_IMPLEMENTATIONS
    if "implementations" in root:
        implementations = texts("implementations")
        if not implementations:
            raise bad("'implementations' is empty; list 'jvm' and/or 'python'")
        for where_ in implementations:
            if where_ not in IMPLEMENTATIONS:
                raise bad(
                    f"unknown implementation '{where_}' in 'implementations'; expected "
                    f"{' or '.join(IMPLEMENTATIONS)}"
                )
    return AdapterDeclaration(
        name=name,
        title=text("title"),
        primitive=primitive,
        exclusive_create=exclusive,
        listing=listing,
        schemes=schemes,
        default_for=defaults,
        notes=notes,
        implementations=implementations,
    )


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    shown = json.dumps(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def declarations_root() -> Traversable:
    """Where the declarations are: the installed package's ``_adapters``, else the source
    checkout's ``adapters/`` (editable installs and running from the repository)."""
    packaged = resources.files("txcommit").joinpath("_adapters")
    if packaged.is_dir():
        return packaged
    # python/src/txcommit/adapters/declarations.py -> the repository root is 4 levels up.
    checkout = Path(__file__).resolve().parents[4] / "adapters"
    if checkout.is_dir():
        return checkout
    raise InvalidDeclarationError(
        f"txcommit: no adapter declarations found: neither {packaged} (an installed package) "
        f"nor {checkout} (a source checkout) exists. Reinstall txcommit; a wheel must contain "
        "txcommit/_adapters/<name>/adapter.json."
    )


def load_declarations(root: Traversable | Path | None = None) -> tuple[AdapterDeclaration, ...]:
    """Every declaration under ``root`` (default: :func:`declarations_root`), sorted by name.

    Each ``<root>/<name>/adapter.json`` is validated; directories without one are ignored
    (``adapters/<name>/`` may also hold an adapter's JVM sources).
    """
    base: Traversable = declarations_root() if root is None else root
    found: list[AdapterDeclaration] = []
    for child in _sorted(base.iterdir()):
        if not child.is_dir():
            continue
        file = child.joinpath(DECLARATION_FILE)
        if not file.is_file():
            continue
        where = f"adapters/{child.name}/{DECLARATION_FILE}"
        found.append(parse_declaration(file.read_bytes(), where, expected_name=child.name))
    if not found:
        raise InvalidDeclarationError(
            f"txcommit: {base} holds no <name>/{DECLARATION_FILE}; reinstall txcommit."
        )
    return tuple(found)


def _sorted(children: Iterable[Traversable]) -> list[Traversable]:
    return sorted(children, key=lambda c: c.name)


@functools.lru_cache(maxsize=1)
def shipped_adapters() -> tuple[AdapterDeclaration, ...]:
    """Every adapter declaration shipped with txcommit, sorted by name."""
    return load_declarations()


def known_adapters() -> tuple[AdapterDeclaration, ...]:
    """Every adapter declaration, sorted by name: txcommit's own and those of the stores other
    distributions register (:mod:`txcommit.adapters.plugin`) with their own ``adapter.json``."""
    from txcommit.adapters.plugin import store_plugins

    found = {d.name: d for d in shipped_adapters()}
    for plugin in store_plugins():
        file = plugin.declaration_file
        if file is not None and plugin.name not in found:
            found[plugin.name] = parse_declaration(file.read_bytes(), str(file), plugin.name)
    return tuple(sorted(found.values(), key=lambda d: d.name))


def known_summary(declarations: tuple[AdapterDeclaration, ...] | None = None) -> str:
    """``hdfs (rename; schemes hdfs, viewfs); local (rename; schemes file); ...``."""
    return "; ".join(d.summary for d in declarations or known_adapters())


def declaration_named(name: str) -> AdapterDeclaration:
    """The declaration of adapter ``name``; UnknownAdapterError when there is none."""
    for d in known_adapters():
        if d.name == name:
            return d
    raise UnknownAdapterError(
        f"txcommit: unknown store adapter '{name}'; known adapters: {known_summary()}. "
        "Check the spelling."
    )


__all__ = [
    "declaration_named",
    "known_adapters",
    "known_summary",
    "shipped_adapters",
    "DEFAULT_IMPLEMENTATIONS",
    "FORMAT",
    "IMPLEMENTATIONS",
    "LISTINGS",
    "PRIMITIVES",
    "AdapterDeclaration",
    "declarations_root",
    "load_declarations",
    "parse_declaration",
]
