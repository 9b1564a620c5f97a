"""Reads through links on the local file system (``conformance/vectors/links.json``, which the
JVM's LinksVectorsSuite holds Spark's read filter to): every Python reader shows exactly a
read's ``visible`` files, listing through links as Spark does, or refuses the read where Spark
does (a link that leads inside a table at another place than the path as written names)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from txcommit.errors import StoreError, UnsupportedReadError
from txcommit.readers import dataset
from txcommit.table.records import encode_record
from txcommit.table.view import open_table
from txcommit.testing.vectors import load

from support.vectors import logical

CASES = load("links.json")["cases"]
READS = [(c, r) for c in CASES for r in c["reads"]]
READ_IDS = [f"{c['name']}@{r['root']}" for c, r in READS]


def build(base: Path, case: dict[str, Any]) -> None:
    for rel in case["files"]:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(b"abc")
    for r in case["records"]:
        (base / r["file"]).parent.mkdir(parents=True, exist_ok=True)
        (base / r["file"]).write_bytes(encode_record(logical(r["record"])))
    for link in case["links"]:
        at = base / link["link"]
        at.parent.mkdir(parents=True, exist_ok=True)
        at.symlink_to(base / link["target"] if link.get("absolute") else Path(link["target"]))


@pytest.mark.parametrize(("case", "read"), READS, ids=READ_IDS)
def test_every_reader_shows_the_visible_files_or_refuses(
    tmp_path: Path, case: dict[str, Any], read: dict[str, Any]
) -> None:
    build(tmp_path, case)
    at = tmp_path / read["root"]
    if read.get("refused"):
        with pytest.raises(UnsupportedReadError, match="(is a link|leads through a link) to"):
            open_table(at)
        with pytest.raises(UnsupportedReadError):
            dataset(at, partitioning=None, schema=pa.schema([]))
        return
    assert sorted(f.path for f in open_table(at).visible_files()) == read["visible"]
    # A schema given: pyarrow opens no file to build the dataset (these are not Parquet).
    files = dataset(at, partitioning=None, schema=pa.schema([])).files
    assert sorted(Path(f).relative_to(at.resolve()).as_posix() for f in files) == read["visible"]


def test_a_link_back_to_a_directory_the_listing_is_in_is_an_error_naming_it(tmp_path: Path) -> None:
    """Such a listing would never end (os.walk would follow it round and round)."""
    (tmp_path / "t" / "k=1").mkdir(parents=True)
    (tmp_path / "t" / "k=1" / "part-00000-plain.parquet").write_bytes(b"abc")
    os.symlink("..", tmp_path / "t" / "k=1" / "up")
    with pytest.raises(StoreError, match=r"k=1/up is a link to .*, a directory it lies in"):
        open_table(tmp_path / "t")
