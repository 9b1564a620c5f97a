"""The golden vectors: cases of the rules the JVM plugin and the Python readers share.

They live once, in the repository's ``conformance/vectors/`` (see its README.md), and are
loaded by the JVM's ScalaTest suites, by the Python tests and by the kit's checks, so the two
languages cannot drift apart unnoticed. The package holds them as ``txcommit/_vectors``, a link
to that directory in the tree.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from txcommit.errors import TxCommitError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def vectors_root() -> Traversable:
    """The package's ``_vectors`` (in the tree, a link to ``conformance/vectors``)."""
    packaged = resources.files("txcommit").joinpath("_vectors")
    if not packaged.is_dir():
        raise TxCommitError(
            f"txcommit: no golden vectors found at {packaged}. Reinstall txcommit; a wheel must "
            "contain txcommit/_vectors/."
        )
    return packaged


@cache
def load(name: str) -> Any:
    """A vector file's JSON, e.g. ``load("paths.json")``."""
    return json.loads(vectors_root().joinpath(name).read_text(encoding="utf-8"))


def golden(name: str) -> bytes:
    """A golden record's bytes as the JVM writes them, e.g. ``golden("append-v2")``."""
    return vectors_root().joinpath("records", f"{name}.json").read_bytes()


def unsafe_paths() -> tuple[str, ...]:
    """Relative paths both languages refuse (outside a table, or not canonical)."""
    return tuple(c["path"] for c in load("paths.json")["cases"] if c["unsafe"] is not None)


__all__ = ["golden", "load", "unsafe_paths", "vectors_root"]
