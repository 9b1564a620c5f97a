"""Adapter declarations: what each store promises, as data (``<name>.json`` in its folder).

The JVM plugin reads the same file, packaged in the adapter's jar as the resource
``txcommit/adapters/<name>/adapter.json``, and validates it the same way
(``AdapterDeclaration.parse``): a declaration one side refuses the other refuses too, with an
error naming the file and the bad key or value.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
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
#: the Python store (readers, CLI, conformance kit Level 1).
IMPLEMENTATIONS = ("jvm", "python")
#: What a declaration without ``implementations`` means: the format's first users were JVM
#: adapters, loaded from the declaration packaged in their jar.
DEFAULT_IMPLEMENTATIONS = ("jvm",)


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
        """Whether the Python store has this adapter."""
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
        raise bad(f"'name' is '{name}' but its store's descriptor names '{expected_name}'")
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


def load_declaration(file: Traversable | Path, name: str) -> AdapterDeclaration:
    """The declaration in ``file`` of the store ``name``, validated."""
    return parse_declaration(file.read_bytes(), str(file), expected_name=name)


@functools.lru_cache(maxsize=1)
def known_adapters() -> tuple[AdapterDeclaration, ...]:
    """Every store's declaration, sorted by name, each read from the file its descriptor names
    (:mod:`txcommit.stores`); cached (``known_adapters.cache_clear()`` reads them again)."""
    from txcommit.stores import store_descriptors

    return tuple(load_declaration(d.declaration, d.name) for d in store_descriptors())


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
    "load_declaration",
    "DEFAULT_IMPLEMENTATIONS",
    "FORMAT",
    "IMPLEMENTATIONS",
    "LISTINGS",
    "PRIMITIVES",
    "AdapterDeclaration",
    "parse_declaration",
]
