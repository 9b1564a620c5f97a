"""The plans of a log-only table (docs/protocol.md, I32) shared by the reads of a process: a
second read of an unchanged table reuses the file list (and the reader's dataset) the first one
built, as the JVM's plans share one (``LogFirstReader.committedStatuses``); any commit since,
whatever its kind, gives the next read the new state."""

from __future__ import annotations

from pathlib import Path

import pytest

import txcommit
from txcommit.table import view as view_module
from txcommit.table.checkpoints import READS_LISTING, READS_LOG, Checkpoint, encode_checkpoint
from txcommit.table.groups import COMMITTED, Decision, Participant, encode_decision
from txcommit.table.layout import LogLayout, checkpoint_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, GroupRef, RemovedFile, encode_record
from txcommit.table.view import open_table

SIZE = 3  # each data file is a CSV of one column, one row


class Table:
    """A log-only table on the local file system, written commit by commit."""

    def __init__(self, root: Path, reads: str = READS_LOG) -> None:
        self.root = root
        self.layout = LogLayout("")
        self.sequence = 0
        self.clock = 1_800_000_000_000
        first = Checkpoint(1, 1, None, "test", 0, {}, schema_known=True, reads=reads)
        self.put(f"_txcommit/checkpoints/{checkpoint_name(1)}", encode_checkpoint(first))

    def put(self, rel: str, data: bytes) -> None:
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).write_bytes(data)

    def txn(self) -> str:
        self.clock += 1000
        return generate_txn(self.clock)

    def files(self, txn: str, n: int) -> tuple[AddedFile, ...]:
        added = tuple(
            AddedFile(data_file_name(f"k={i}/", 0, txn, i, ".csv"), SIZE) for i in range(n)
        )
        for f in added:
            self.put(f.path, b"a\n1")
        return added

    def record(self, txn: str, added: tuple[AddedFile, ...], **fields: object) -> CommitRecord:
        return CommitRecord(txn, "t", "j", 1, 2, added, None, "test", **fields)  # type: ignore[arg-type]

    def append(self, n: int = 2, group: GroupRef | None = None) -> tuple[str, set[str]]:
        txn = self.txn()
        added = self.files(txn, n)
        self.put(
            self.layout.commit_record(txn).lstrip("/"),
            encode_record(self.record(txn, added, group=group)),
        )
        return txn, {f.path for f in added}

    def replace(
        self,
        removed: set[str],
        restored: frozenset[str] | set[str] = frozenset(),
        n: int = 1,
    ) -> set[str]:
        """A replacing commit of the whole table: ``n`` new files, ``removed`` removed and
        ``restored`` re-added (a RESTORE's record)."""
        txn = self.txn()
        self.sequence += 1
        added = self.files(txn, n)
        record = self.record(
            txn,
            added,
            operation="overwrite",
            sequence=self.sequence,
            scope=("",),
            removed=tuple(RemovedFile(p, SIZE) for p in sorted(removed)),
            restored=tuple(RemovedFile(p, SIZE) for p in sorted(restored)),
        )
        self.put(self.layout.replace_record(self.sequence).lstrip("/"), encode_record(record))
        return {f.path for f in added}


def shown(root: Path) -> set[str]:
    return {f.path for f in open_table(root).visible_files()}


def dataset_files(root: Path) -> set[str]:
    return {
        Path(p).relative_to(root).as_posix() for p in txcommit.dataset(root, format="csv").files
    }


def test_a_second_read_of_an_unchanged_table_reuses_the_first_ones_files(tmp_path: Path) -> None:
    table = Table(tmp_path)
    table.append(3)
    table.append(3)
    first, second = open_table(tmp_path), open_table(tmp_path)
    a, b = first.visible_files(), second.visible_files()
    assert len(a) == 6
    assert all(x is y for x, y in zip(a, b, strict=True)), "the second read built its own list"
    assert a is not b, "each view gets its own list (a caller may change it)"
    built = view_module.plans_built
    open_table(tmp_path).visible_files()
    assert view_module.plans_built == built, "a third read built the list again"
    # The reader's dataset too: the same arguments, the same (immutable) dataset.
    ds = txcommit.dataset(tmp_path, format="csv")
    assert txcommit.dataset(tmp_path, format="csv") is ds
    assert len(ds.files) == 6
    assert txcommit.dataset(tmp_path, format="csv", partitioning=None) is not ds
    assert txcommit.dataset(tmp_path, format="csv").to_table().num_rows == 6


def test_every_kind_of_commit_gives_the_next_read_the_new_state(tmp_path: Path) -> None:
    table = Table(tmp_path)
    _, a = table.append()
    assert shown(tmp_path) == dataset_files(tmp_path) == a
    _, b = table.append()  # an append
    assert shown(tmp_path) == dataset_files(tmp_path) == a | b
    c = table.replace(removed=a | b)  # an overwrite replacing everything
    assert shown(tmp_path) == dataset_files(tmp_path) == c
    d = table.replace(removed=c, restored=a)  # a RESTORE to the first append
    assert shown(tmp_path) == dataset_files(tmp_path) == a | d


def test_a_decision_appearing_later_shows_its_prepared_write_on_the_next_read(
    tmp_path: Path,
) -> None:
    table = Table(tmp_path)
    _, a = table.append()
    group = generate_txn(table.clock)
    decision = tmp_path / "_txcommit" / "groups" / f"{group}.json"
    ref = GroupRef(group, "file:" + decision.as_posix(), 900_000)
    txn, prepared = table.append(group=ref)
    assert shown(tmp_path) == dataset_files(tmp_path) == a, "undecided: nothing of it shows"
    committed = Decision(
        group,
        COMMITTED,
        "t",
        5,
        "commit",
        None,
        "test",
        (Participant("file:" + tmp_path.as_posix(), txn),),
    )
    table.put(f"_txcommit/groups/{group}.json", encode_decision(committed))
    assert shown(tmp_path) == dataset_files(tmp_path) == a | prepared


def test_a_table_deleted_and_written_anew_under_the_same_names_is_read_anew(
    tmp_path: Path,
) -> None:
    table = Table(tmp_path / "t")
    txn, a = table.append()
    assert shown(table.root) == a
    record = (table.root / table.layout.commit_record(txn).lstrip("/")).read_bytes()
    # The same txn's record names other files: a log deleted and written again.
    other = record.replace(b"k=0/", b"k=9/")
    assert other != record
    (table.root / table.layout.commit_record(txn).lstrip("/")).write_bytes(other)  # same size
    table.put(data_file_name("k=9/", 0, txn, 0, ".csv"), b"a\n1")
    assert shown(table.root) == {p.replace("k=0/", "k=9/") for p in a}


def test_a_table_read_by_listing_is_listed_by_every_read(tmp_path: Path) -> None:
    table = Table(tmp_path, reads=READS_LISTING)
    _, a = table.append()
    first = open_table(tmp_path)
    assert first.plan is None
    assert {f.path for f in first.visible_files()} == a
    table.put("k=0/written-without-txcommit.csv", b"a\n1")  # shown: the table is listed
    assert shown(tmp_path) == dataset_files(tmp_path) == a | {"k=0/written-without-txcommit.csv"}


def test_a_past_snapshot_and_the_present_are_planned_apart(tmp_path: Path) -> None:
    table = Table(tmp_path)
    first, a = table.append()
    _, b = table.append()
    assert shown(tmp_path) == a | b
    assert {f.path for f in open_table(tmp_path, as_of=first).visible_files()} == a
    assert shown(tmp_path) == a | b


def test_the_plans_kept_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view_module, "_plans", {})
    monkeypatch.setattr(view_module, "PLAN_CACHE_TABLES", 2)
    monkeypatch.setattr(view_module, "PLAN_CACHE_FILES", 5)
    tables = [Table(tmp_path / str(i)) for i in range(3)]
    for t in tables:
        t.append(2)
        open_table(t.root)
    assert len(view_module._plans) == 2, "three tables read, two kept"
    tables[0].append(4)  # now 6 files: over the bound of files, kept alone
    open_table(tables[0].root)
    assert [len(p.files) for p in view_module._plans.values()] == [6]
