"""The golden vectors: cases of the rules the JVM plugin and the Python readers share.

They live once, in the repository's ``conformance/vectors/`` (see its README.md), and are
loaded by the JVM's ScalaTest suites, by the Python tests and by the kit's checks, so the two
languages cannot drift apart unnoticed. The package ships them as ``txcommit/_vectors``
(mapped by setuptools, never copied in git); a source checkout or an editable install reads
the repository's directory instead.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from txcommit.errors import TxCommitError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def vectors_root() -> Traversable:
    """The installed package's ``_vectors``, else the source checkout's ``conformance/vectors``."""
    packaged = resources.files("txcommit").joinpath("_vectors")
    if packaged.is_dir():
        return packaged
    # python/src/txcommit/testing/vectors.py -> the repository root is 4 levels up.
    checkout = Path(__file__).resolve().parents[4] / "conformance" / "vectors"
    if checkout.is_dir():
        return checkout
    raise TxCommitError(
        f"txcommit: no golden vectors found: neither {packaged} (an installed package) nor "
        f"{checkout} (a source checkout) exists. Reinstall txcommit; a wheel must contain "
        "txcommit/_vectors/."
    )


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
