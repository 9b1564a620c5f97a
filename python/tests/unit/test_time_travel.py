"""Past snapshots outside Spark (docs/protocol.md, I30): what a version is and what ``as_of``
names, by the golden vectors the JVM's TableVersionsSuite loads too
(``conformance/vectors/versions.json``), then ``txcommit.dataset(path, as_of=...)``,
``txcommit ls --as-of`` and the ``txcommit+`` file systems' ``as_of`` on a table laid out
on disk with the store times its records' modification times give."""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import re
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from txcommit.adapters import LocalStore
from txcommit.cli.log import main as log_main
from txcommit.cli.ls import main as ls_main
from txcommit.errors import TimeTravelError
from txcommit.readers import dataset
from txcommit.table.checkpoints import encode_checkpoint
from txcommit.table.layout import replace_record_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, RemovedFile, encode_record
from txcommit.table.versions import AsOfTime, AsOfTxn, at_time, of_txn, order, parse_as_of, whole
from txcommit.table.view import open_table
from txcommit.testing.vectors import load

from support.vectors import logical, logical_checkpoint, place_files

VECTORS = load("versions.json")
HOUR = 3_600_000
T0 = 1_795_809_600_000  # 2026-11-27T20:00:00Z


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["about"] for c in VECTORS["cases"]])
def test_version_order(case: dict[str, Any]) -> None:
    versions = order(
        [(a["txn"], a["storeTime"]) for a in case["appends"]],
        [(r["sequence"], r["txn"], r["storeTime"]) for r in case["replaces"]],
        [(r["txn"], r["storeTime"], r["sequence"]) for r in case.get("decided", [])],
    )
    assert [v.txn for v in versions] == case["order"]
    assert [v.number for v in versions] == list(range(1, len(versions) + 1))
    for q in case["asOf"]:
        named = parse_as_of(q["value"])
        assert named is not None, q["value"]
        found = (
            of_txn(versions, named.text)
            if isinstance(named, AsOfTxn)
            else at_time(versions, named.epoch_ms)
        )
        group_of = {r["txn"]: r["group"] for r in case.get("decided", []) if "group" in r}
        found = found and whole(versions, found, group_of)
        assert (found.number if found else None) == q["version"], q["value"]


@pytest.mark.parametrize("case", VECTORS["parse"], ids=[c["value"] for c in VECTORS["parse"]])
def test_as_of_values(case: dict[str, Any]) -> None:
    value = case["value"]
    expected: AsOfTxn | AsOfTime | None = None
    if "txn" in case:
        expected = AsOfTxn(case["txn"])
    elif "epochMs" in case:
        expected = AsOfTime(value.strip(), case["epochMs"])
    assert parse_as_of(value) == expected


class Table:
    """A table on disk whose records the store dated as the tests say (their mtimes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sequence = 0

    def _data(self, txn: str, ids: list[int]) -> str:
        rel = "k=0/" + data_file_name("part-", 0, txn, 0, ".parquet")
        (self.root / "k=0").mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": ids}), self.root / rel)
        return rel

    def write_record(self, rel: str, record: CommitRecord, store_time: int) -> None:
        f = self.root / "_txcommit" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(encode_record(record))
        os.utime(f, ns=(store_time * 1_000_000, store_time * 1_000_000))

    def append(self, ids: list[int], store_time: int, clock: int = 0) -> str:
        txn = generate_txn(store_time + clock)
        rel = self._data(txn, ids)
        size = (self.root / rel).stat().st_size
        at = store_time + clock  # what the writer's clock says
        r = CommitRecord(txn, "t", "j", at, at, (AddedFile(rel, size),))
        self.write_record(f"commits/{txn}.json", r, store_time)
        return txn

    def overwrite(self, ids: list[int], store_time: int, removed: list[str]) -> str:
        txn = generate_txn(store_time)
        rel = self._data(txn, ids)
        self.sequence += 1
        added = (AddedFile(rel, (self.root / rel).stat().st_size),)
        r = CommitRecord(
            txn,
            "t",
            "j",
            store_time,
            store_time,
            added,
            operation="overwrite",
            sequence=self.sequence,
            scope=("",),
            removed=tuple(RemovedFile(p, (self.root / p).stat().st_size) for p in removed),
        )
        self.write_record(f"replace/{replace_record_name(self.sequence)}", r, store_time)
        self.write_record(f"commits/{txn}.json", r, store_time + 5)
        return txn

    def restore(self, store_time: int, removed: list[str], restored: list[str]) -> str:
        """A restore as ``TXCOMMIT RESTORE`` writes it: no data, files removed and re-added."""
        txn = generate_txn(store_time)
        self.sequence += 1
        r = CommitRecord(
            txn,
            "t",
            "j",
            store_time,
            store_time,
            (),
            operation="overwrite",
            sequence=self.sequence,
            scope=("",),
            removed=tuple(RemovedFile(p, (self.root / p).stat().st_size) for p in removed),
            restored=tuple(RemovedFile(p, (self.root / p).stat().st_size) for p in restored),
        )
        self.write_record(f"replace/{replace_record_name(self.sequence)}", r, store_time)
        self.write_record(f"commits/{txn}.json", r, store_time + 5)
        return txn

    def files(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.glob("k=0/*.parquet"))

    def ids(self, as_of: str | None = None) -> list[int]:
        return sorted(dataset(self.root, as_of=as_of).to_table().column("id").to_pylist())


def _iso(ms: int) -> str:
    t = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@pytest.fixture
def table(tmp_path: Path) -> tuple[Table, list[str]]:
    """Write (v1), append by a writer whose clock is an hour ahead (v2), overwrite (v3)."""
    t = Table(tmp_path / "t")
    first = t.append([1, 2], T0)
    second = t.append([3], T0 + 1000, clock=HOUR)
    third = t.overwrite([9], T0 + 2000, t.files())
    return t, [first, second, third]


def test_each_version_by_txn_and_by_store_time(table: tuple[Table, list[str]]) -> None:
    t, txns = table
    expected = [[1, 2], [1, 2, 3], [9]]
    for txn, rows, at in zip(txns, expected, (T0, T0 + 1000, T0 + 2000), strict=True):
        assert t.ids(txn) == rows
        assert t.ids(_iso(at)) == rows
    # The writer an hour ahead is dated by the store: a time before its commit names v1.
    assert t.ids(_iso(T0 + 999)) == [1, 2]
    assert t.ids() == [9]
    # The history numbers them so, with the store's times (what `txcommit log --json` shows).
    history = {r.txn: r for r in open_table(t.root).history()}
    assert [(history[x].version, history[x].store_time) for x in txns] == [
        (1, T0),
        (2, T0 + 1000),
        (3, T0 + 2000),
    ]


def test_history_shows_what_a_restore_re_added(
    table: tuple[Table, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    t, txns = table
    older = [f for f in t.files() if txns[2] not in f]
    back = t.restore(T0 + 3000, [f for f in t.files() if txns[2] in f], older)
    assert t.ids() == [1, 2, 3]
    assert log_main([str(t.root), "--json"]) == 0
    rows = {r["txn"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows[back]["restoredFiles"], rows[back]["removedFiles"], rows[back]["version"]) == (
        2,
        1,
        4,
    )
    assert rows[txns[2]]["restoredFiles"] == 0 and rows[txns[0]]["restoredFiles"] == 0
    assert log_main([str(t.root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "RESTORED" in lines[0] and "VERSION" in lines[0]


def test_ls_and_the_fsspec_file_system_list_a_past_snapshot(
    table: tuple[Table, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    t, txns = table
    before_overwrite = sorted(f for f in t.files() if txns[2] not in f)
    assert ls_main([str(t.root), "--json", "--as-of", txns[1]]) == 0
    assert sorted(f["path"] for f in json.loads(capsys.readouterr().out)) == before_overwrite
    assert ls_main([str(t.root), "--json", "--as-of", _iso(T0 + 2000)]) == 0
    assert [f["txn"] for f in json.loads(capsys.readouterr().out)] == [txns[2]]
    assert ls_main([str(t.root), "--as-of", "yesterday"]) == 1
    assert "yesterday" in capsys.readouterr().err
    fs = fsspec.filesystem("txcommit+file", as_of=txns[0])
    assert [posixpath.basename(p) for p in fs.find(str(t.root))] == [
        posixpath.basename(f) for f in t.files() if txns[0] in f
    ]
    now = fsspec.filesystem("txcommit+file")
    assert [posixpath.basename(p) for p in now.find(str(t.root))] == [
        posixpath.basename(f) for f in t.files() if txns[2] in f
    ]


def test_what_names_no_snapshot_fails_naming_table_and_value(
    table: tuple[Table, list[str]], tmp_path: Path
) -> None:
    t, _ = table
    unknown = generate_txn(T0)
    with pytest.raises(TimeTravelError, match=f"as_of '{unknown}' of table .*t: .*not committed"):
        t.ids(unknown)
    with pytest.raises(TimeTravelError, match="'last tuesday' .* neither a transaction id"):
        t.ids("last tuesday")
    with pytest.raises(TimeTravelError, match="no commit of this table is dated at or before"):
        t.ids("2001-01-01T00:00:00Z")
    fenced = generate_txn(T0)
    fence = CommitRecord(fenced, "t", "j", T0, T0, operation="fence")
    t.write_record(f"commits/{fenced}.json", fence, T0 + 3000)
    with pytest.raises(TimeTravelError, match="VACUUM fenced it"):
        t.ids(fenced)
    plain = tmp_path / "plain"
    plain.mkdir()
    pq.write_table(pa.table({"id": [1]}), plain / "a.parquet")
    with pytest.raises(TimeTravelError, match="no txcommit table"):
        dataset(plain, as_of=_iso(T0))


def test_a_snapshot_vacuum_took_files_of_is_refused_naming_the_horizon(
    table: tuple[Table, list[str]],
) -> None:
    t, txns = table
    horizon = T0 + 3 * HOUR
    (t.root / "_txcommit/vacuum").mkdir(parents=True)
    (t.root / "_txcommit/vacuum" / replace_record_name(horizon)).write_text("{}")
    for old in txns[:2]:
        gone = r"VACUUM has deleted \(its horizon: 2026-11-27T23:00:00Z\)"
        with pytest.raises(TimeTravelError, match=gone):
            t.ids(old)
    assert t.ids(txns[2]) == [9]


def build(root: Path, case: dict[str, Any]) -> None:
    """A table of ``versions.json``'s ``tables``: its records dated by ``storeTime``."""

    def place(rel: str, data: bytes, store_time: int | None = None) -> None:
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
        if store_time is not None:
            os.utime(f, ns=(store_time * 1_000_000, store_time * 1_000_000))

    place_files(root, case)
    for r in case["records"]:
        place(r["file"], encode_record(logical(r["record"])), r["storeTime"])
    for c in case["checkpoints"]:
        place(c["file"], encode_checkpoint(logical_checkpoint(c["checkpoint"])))
    for horizon in case["vacuum"]:
        place(f"_txcommit/vacuum/{replace_record_name(horizon)}", b"{}")


@pytest.mark.parametrize("case", VECTORS["tables"], ids=[c["name"] for c in VECTORS["tables"]])
def test_vector_tables(case: dict[str, Any], tmp_path: Path) -> None:
    build(tmp_path, case)
    for read in case["reads"]:
        value = read["asOf"]
        if "error" in read:
            with pytest.raises(TimeTravelError, match=re.escape(read["error"])):
                open_table(tmp_path, as_of=value).visible_files()
        else:
            shown = [f.path for f in open_table(tmp_path, as_of=value).visible_files()]
            assert sorted(shown) == sorted(read["visible"]), value


def test_a_vacuum_between_the_log_listing_and_the_data_listing_fails_the_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """VACUUM runs after a past view listed the log (no horizon then) and before it lists the
    data: the view, checking its data listing, fails naming the file instead of showing the
    snapshot without it."""
    case = next(c for c in VECTORS["tables"] if c["name"] == "four-versions")
    build(tmp_path, case)
    gone = "k=1/part-00000-tid-mwzeo3k0aaaaaaaa-1-c000.parquet"
    walk = LocalStore.walk
    vacuumed: list[str] = []

    def vacuum_first(self: LocalStore, prefix: str = "", progress: Any = None) -> Any:
        if prefix == "" and not vacuumed:  # the data listing: the log was listed before it
            horizon = tmp_path / "_txcommit/vacuum" / replace_record_name(T0 + 10 * HOUR)
            horizon.parent.mkdir(parents=True)
            horizon.write_text("{}")
            (tmp_path / gone).unlink()
            vacuumed.append(gone)
        return walk(self, prefix, progress)

    monkeypatch.setattr(LocalStore, "walk", vacuum_first)
    with pytest.raises(TimeTravelError, match=f"version 1, transaction mwzeo3k0aaaaaaaa.*'{gone}'"):
        open_table(tmp_path, as_of="mwzeo3k0aaaaaaaa")
    assert vacuumed == [gone], "VACUUM ran between the two listings"
    monkeypatch.setattr(LocalStore, "walk", walk)
    assert [f.path for f in open_table(tmp_path, as_of="mwzeo3k0cccccccc").visible_files()] == [
        "k=1/part-00000-tid-mwzeo3k0rrrrrrrr-1-c000.parquet",
        "k=2/part-00000-tid-mwzeo3k0bbbbbbbb-1-c000.parquet",
        "k=2/part-00000-tid-mwzeo3k0cccccccc-1-c000.parquet",
    ]
