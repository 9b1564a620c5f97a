"""Tables as listings (``conformance/vectors/tables.json``): each is built on a temporary
directory (files named in ``stat`` with that size and modification time) and every Python
reader must show exactly its ``visible`` set, as the JVM's TablesSuite checks Spark's read
filter does. Tables with checkpoints show the same set with and
without their history read (a view that reads the history reads every record too). A case's
``reads`` are reads at other roots (a table, a partition directory, a directory of tables, a
table inside a table), each held to its own ``visible`` set as the JVM's TablesSuite holds
Spark's read filter; the ``txcommit+file`` fsspec file system finds the same data files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pytest

from txcommit.cli.log import main as log_main
from txcommit.errors import CorruptTablePropertiesError
from txcommit.readers import dataset
from txcommit.table.checkpoints import encode_checkpoint
from txcommit.table.groups import encode_decision
from txcommit.table.records import encode_record
from txcommit.table.view import is_data_path, open_table
from txcommit.testing.vectors import load

from support.vectors import (
    logical,
    logical_checkpoint,
    logical_decision,
    place_files,
    rooted,
    table_reads,
)

CASES = load("tables.json")["cases"]


def build(table: Path, case: dict[str, Any]) -> None:
    place_files(table, case)
    root = "file:" + table.as_posix()
    for r in case["records"]:
        f = table / r["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(encode_record(rooted(logical(r["record"]), root)))
    for d in case.get("decisions", []):
        f = table / d["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(encode_decision(logical_decision(d["decision"], root)))
    for c in case.get("checkpoints", []):
        f = table / c["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(encode_checkpoint(logical_checkpoint(c["checkpoint"])))
    for r in case.get("raw", []):
        f = table / r["file"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(r["content"].encode("utf-8"))


READS = [(c, root, visible) for c in CASES for root, visible in table_reads(c)]
READ_IDS = [f"{c['name']}@{root or '.'}" for c, root, _ in READS]


@pytest.mark.parametrize(("case", "root", "visible"), READS, ids=READ_IDS)
def test_the_view_shows_exactly_the_visible_set(
    tmp_path: Path, case: dict[str, Any], root: str, visible: list[str]
) -> None:
    build(tmp_path, case)
    at = tmp_path / root if root else tmp_path
    assert sorted(f.path for f in open_table(at).visible_files()) == visible
    with_history = open_table(at, with_markers=True)
    assert sorted(f.path for f in with_history.visible_files()) == visible


@pytest.mark.parametrize(("case", "root", "visible"), READS, ids=READ_IDS)
def test_the_dataset_reads_exactly_the_visible_set(
    tmp_path: Path, case: dict[str, Any], root: str, visible: list[str]
) -> None:
    build(tmp_path, case)
    at = tmp_path / root if root else tmp_path
    # A schema given: pyarrow opens no file to build the dataset (these are not Parquet).
    files = dataset(at, partitioning=None, schema=pa.schema([])).files
    assert sorted(Path(f).relative_to(at).as_posix() for f in files) == visible


@pytest.mark.parametrize(("case", "root", "visible"), READS, ids=READ_IDS)
def test_the_fsspec_file_system_finds_exactly_the_visible_set(
    tmp_path: Path, case: dict[str, Any], root: str, visible: list[str]
) -> None:
    build(tmp_path, case)
    at = (tmp_path / root if root else tmp_path).resolve().as_posix()
    found = [f[len(at) + 1 :] for f in fsspec.filesystem("txcommit+file").find(at)]
    # Outside every table the file system shows the store as it is, names of no data included.
    assert sorted(f for f in found if is_data_path(f)) == visible


def test_a_view_shows_the_table_properties_in_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The newest ``properties/<n>.json`` is in force; a corrupt one is an error naming it."""
    case = next(c for c in CASES if c["name"] == "table-properties")
    build(tmp_path, case)
    view = open_table(tmp_path)
    assert view.properties is not None and view.properties.number == 1
    assert view.properties.manifests is True
    assert log_main([str(tmp_path)]) == 0
    assert "table properties (change 1): manifests=true" in capsys.readouterr().out
    newer = tmp_path / "_txcommit/properties/00000000000000000002.json"
    newer.write_bytes(b'{"format": "txcommit-properties"')
    with pytest.raises(CorruptTablePropertiesError, match="00000000000000000002.json"):
        _ = open_table(tmp_path).properties
    newer.unlink()
    (tmp_path / "_txcommit/properties/00000000000000000001.json").unlink()
    assert open_table(tmp_path).properties is None
