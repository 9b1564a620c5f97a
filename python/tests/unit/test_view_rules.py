"""The view's record cache and its use of every record, as the JVM's read filter does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from txcommit import paths
from txcommit.adapters.local import LocalStore
from txcommit.table.layout import replace_record_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import CommitRecord, RemovedFile, encode_record
from txcommit.table.view import open_table

from support.layout import record, write


def visible(table: Path) -> set[str]:
    return {f.path for f in open_table(table).visible_files()}


def test_a_table_created_anew_does_not_reuse_its_predecessors_cached_record(
    tmp_path: Path,
) -> None:
    txn = generate_txn()
    a, b = (data_file_name(p, 0, txn, 1, ".parquet") for p in ("a/", "b/"))
    write(tmp_path, a)
    write(tmp_path, b)
    key = f"_txcommit/commits/{txn}.json"
    write(tmp_path, key, encode_record(record(txn, [a])))
    assert visible(tmp_path) == {a}
    # The table is deleted and written again: a record of the same key and size, later.
    first = (tmp_path / key).stat()
    write(tmp_path, key, encode_record(record(txn, [b])))
    assert (tmp_path / key).stat().st_size == first.st_size
    os.utime(tmp_path / key, ns=(first.st_atime_ns, first.st_mtime_ns + 2_000_000_000))
    assert visible(tmp_path) == {b}


def replacing(txn: str, sequence: int, added: list[str], removed: list[str]) -> CommitRecord:
    return record(
        txn,
        added,
        operation="overwrite-partitions",
        sequence=sequence,
        scope=("",),
        removed=tuple(RemovedFile(p, 3) for p in removed),
    )


def test_every_replace_record_removes_its_files_even_two_of_one_txn(tmp_path: Path) -> None:
    # As the JVM's ReplaceLog: every replace/ record's removals apply; the txn's files are
    # those of its highest-sequence record.
    plain = [f"part-0000{i}-plain.parquet" for i in range(3)]
    for p in plain:
        write(tmp_path, p)
    txn = generate_txn()
    first, second = (data_file_name("", 0, txn, n, ".parquet") for n in (1, 2))
    write(tmp_path, first)
    write(tmp_path, second)
    for seq, added, removed in ((1, [first], [plain[0]]), (2, [second], [plain[1]])):
        rel = "_txcommit/replace/" + replace_record_name(seq)
        write(tmp_path, rel, encode_record(replacing(txn, seq, added, removed)))
    assert visible(tmp_path) == {plain[2], second}


def test_a_commits_copy_commits_nothing_without_its_replace_record(tmp_path: Path) -> None:
    # A listing that found the copy but not the replace/ record must not show the overwrite's
    # new files without its removals (as the JVM's reader): the copy commits nothing.
    plain = "part-00000-plain.parquet"
    write(tmp_path, plain)
    txn = generate_txn()
    mine = data_file_name("", 0, txn, 1, ".parquet")
    write(tmp_path, mine)
    rec = encode_record(replacing(txn, 1, [mine], [plain]))
    write(tmp_path, f"_txcommit/commits/{txn}.json", rec)
    assert visible(tmp_path) == {plain}


def test_an_overwrite_committed_while_the_data_is_listed_is_not_half_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The view lists the log, then the data. An overwrite that commits in between (its new
    # files written and listed, its record not in the log listing) is not in the view: the
    # old generation shows whole, never both and never neither.
    old = generate_txn()
    old_file = data_file_name("k=1/", 0, old, 1, ".parquet")
    write(tmp_path, old_file)
    write(tmp_path, f"_txcommit/commits/{old}.json", encode_record(record(old, [old_file])))
    new = generate_txn()
    new_file = data_file_name("k=1/", 0, new, 2, ".parquet")
    real_walk = LocalStore.walk

    def walk_then_commit(self: LocalStore, prefix: str = "", progress=None):
        found = real_walk(self, prefix, progress)
        if prefix == paths.LOG_DIR_NAME:  # the overwrite commits right after the log listing
            write(tmp_path, new_file)
            rec = encode_record(replacing(new, 1, [new_file], [old_file]))
            write(tmp_path, "_txcommit/replace/" + replace_record_name(1), rec)
            write(tmp_path, f"_txcommit/commits/{new}.json", rec)
        return found

    monkeypatch.setattr(LocalStore, "walk", walk_then_commit)
    assert visible(tmp_path) == {old_file}
    monkeypatch.setattr(LocalStore, "walk", real_walk)
    assert visible(tmp_path) == {new_file}, "the next view sees the overwrite"


def test_the_history_shows_the_rows_counted_after_the_commit(tmp_path: Path) -> None:
    counted, uncounted, odd = (generate_txn() for _ in range(3))
    for txn in (counted, uncounted, odd):
        write(tmp_path, f"_txcommit/commits/{txn}.json", encode_record(record(txn, [])))
    rows = b'{"format": "txcommit-rows", "version": 1, "txn": "%s", "rows": 42}'
    write(tmp_path, f"_txcommit/rows/{counted}.json", rows % counted.encode())
    write(tmp_path, f"_txcommit/rows/{odd}.json", rows % counted.encode())  # names another txn
    history = {r.txn: r.rows for r in open_table(tmp_path, with_markers=True).history()}
    assert history == {counted: 42, uncounted: None, odd: None}
