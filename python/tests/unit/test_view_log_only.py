"""Log-only tables in the view (docs/protocol.md, I32): the readers take such a table's files
from its log alone, as a planned Spark read does, and list nothing below the root; a table read by
listing is listed as before. The visible sets of hand-built tables are in test_tables.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import txcommit
from txcommit.adapters.local import LocalStore
from txcommit.table.checkpoints import Checkpoint, encode_checkpoint
from txcommit.table.layout import checkpoint_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, encode_record
from txcommit.table.view import open_table

A, B = generate_txn(1_800_000_000_000), generate_txn(1_800_000_001_000)


def _table(root: Path, reads: str) -> dict[str, str]:
    """Append A (covered by checkpoint 1, which says ``reads``), append B after it, a file
    written without txcommit and a file of a transaction that never committed."""
    paths = {
        "a": data_file_name("k=1/", 0, A, 1, ".parquet"),
        "b": data_file_name("k=2/", 0, B, 1, ".parquet"),
        "plain": "k=1/part-0.parquet",
        "lost": data_file_name("k=2/", 0, generate_txn(), 1, ".parquet"),
    }
    for rel in paths.values():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"a\n1")  # 3 bytes: a CSV of one column, one row
    commits = root / "_txcommit" / "commits"
    commits.mkdir(parents=True)
    for txn, rel in ((A, paths["a"]), (B, paths["b"])):
        record = CommitRecord(txn, "t", "j", 1, 2, (AddedFile(rel, 3),), None, "test")
        (commits / f"{txn}.json").write_bytes(encode_record(record))
    checkpoints = root / "_txcommit" / "checkpoints"
    checkpoints.mkdir()
    checkpoint = Checkpoint(1, 3, None, "test", 0, {A: (AddedFile(paths["a"], 3),)}, reads=reads)
    (checkpoints / checkpoint_name(1)).write_bytes(encode_checkpoint(checkpoint))
    return paths


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The prefixes the local store walks (lists recursively)."""
    seen: list[str] = []
    original = LocalStore.walk

    def walk(self: LocalStore, prefix: str = "", **kwargs: Any) -> Any:
        seen.append(prefix)
        return original(self, prefix, **kwargs)

    monkeypatch.setattr(LocalStore, "walk", walk)
    return seen


def test_a_log_only_table_is_read_from_its_log_without_listing_its_data(
    tmp_path: Path, walked: list[str]
) -> None:
    paths = _table(tmp_path, "log")
    view = open_table(tmp_path)
    assert sorted(f.path for f in view.visible_files()) == sorted([paths["a"], paths["b"]])
    assert all(p.startswith("_txcommit") for p in walked), f"listed below the root: {walked}"
    assert [f.size for f in view.visible_files()] == [3, 3], "sizes from the records"
    # A partition directory of it: its part of the log, nothing listed either.
    walked.clear()
    part = open_table(tmp_path / "k=1")
    assert [f.path for f in part.visible_files()] == [paths["a"].split("/", 1)[1]]
    assert all(p.startswith("_txcommit") for p in walked), walked
    assert txcommit.dataset(str(tmp_path), format="csv").files == sorted(
        str(tmp_path / p) for p in (paths["a"], paths["b"])
    )


def test_a_table_read_by_listing_shows_its_files_written_without_txcommit(
    tmp_path: Path, walked: list[str]
) -> None:
    paths = _table(tmp_path, "listing")
    view = open_table(tmp_path)
    assert sorted(f.path for f in view.visible_files()) == sorted(
        [paths["a"], paths["b"], paths["plain"]]
    )
    assert "" in walked, "the table is listed"
