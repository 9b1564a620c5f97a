"""Tables as listings (``conformance/vectors/tables.json``): each is built on a temporary
directory (files named in ``stat`` with that size and modification time) and every Python
reader must show exactly its ``visible`` set, as the JVM's TablesSuite checks Spark's read
filter does. Tables with checkpoints show the same set with and
without their history read (a view that reads the history reads every record too)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from txcommit.conformance.vectors import load
from txcommit.readers import dataset
from txcommit.table import format as log
from txcommit.table.view import open_table

from support.vectors import logical, logical_checkpoint

CASES = load("tables.json")["cases"]


def build(table: Path, case: dict[str, Any]) -> None:
    for rel in case["files"]:
        f = table / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        stat = case.get("stat", {}).get(rel)
        f.write_bytes(b"a" * stat["size"] if stat else b"abc")
        if stat:
            ns = stat["modifiedAt"] * 1_000_000
            os.utime(f, ns=(ns, ns))
    for r in case["records"]:
        f = table / r["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(log.encode_record(logical(r["record"])))
    for c in case.get("checkpoints", []):
        f = table / c["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(log.encode_checkpoint(logical_checkpoint(c["checkpoint"])))
    for r in case.get("raw", []):
        f = table / r["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(r["content"].encode("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_view_shows_exactly_the_visible_set(tmp_path: Path, case: dict[str, Any]) -> None:
    build(tmp_path, case)
    assert sorted(f.path for f in open_table(tmp_path).visible_files()) == case["visible"]
    with_history = open_table(tmp_path, with_markers=True)
    assert sorted(f.path for f in with_history.visible_files()) == case["visible"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_dataset_reads_exactly_the_visible_set(tmp_path: Path, case: dict[str, Any]) -> None:
    build(tmp_path, case)
    # A schema given: pyarrow opens no file to build the dataset (these are not Parquet).
    files = dataset(tmp_path, partitioning=None, schema=pa.schema([])).files
    assert sorted(Path(f).relative_to(tmp_path).as_posix() for f in files) == case["visible"]
