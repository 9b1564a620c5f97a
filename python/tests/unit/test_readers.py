"""Readers outside Spark on tables built here, file by file, on the local file system and on S3
(the session's moto endpoint): ``txcommit.dataset`` (pyarrow), DuckDB, polars, the
``txcommit+`` fsspec file systems and ``txcommit ls``/``txcommit log`` all apply the reader
rule of docs/protocol.md to committed, uncommitted, aborted, failed-attempt, overwritten,
write-id-replaced and non-txcommit files, and refuse corrupt records naming the file. Every
test runs again on the same table with a checkpoint of its first two replacing commits (I20):
what the readers show is the same, what they read is less.

The expected visible files are written out by hand from the rule, not computed by the code
under test.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import txcommit
from txcommit.cli.doctor import HIDDEN_FILES_FOUND
from txcommit.cli.doctor import main as doctor_main
from txcommit.cli.log import main as log_main
from txcommit.cli.ls import main as ls_main
from txcommit.errors import CorruptCommitRecordError, StoreError
from txcommit.table.checkpoints import Checkpoint, encode_checkpoint
from txcommit.table.layout import checkpoint_name, replace_record_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import (
    AddedFile,
    CommitRecord,
    RemovedFile,
    decode_record,
    encode_record,
)
from txcommit.table.view import open_table
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import TEST_BUCKET
from support.tables import TableRef

BASE_MS = 1_800_000_000_000
T = {name: generate_txn(BASE_MS + i * 1000) for i, name in enumerate("ABCDEFG")}


def parquet(ids: list[int]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), sink)
    return sink.getvalue()


def name(txn: str, attempt: int, split: int = 0) -> str:
    return data_file_name("", split, txn, attempt, ".c000.snappy.parquet")


def removals(*files: AddedFile) -> tuple[RemovedFile, ...]:
    """Removals by path (as an older writer recorded them, also for files without a txn id)."""
    return tuple(RemovedFile(f.path, f.size) for f in files)


@dataclass
class Built:
    ref: TableRef
    url: str  # what a user passes: a path or s3:// URL
    options: dict[str, Any]
    visible: set[str]  # by hand, from the reader rule
    visible_ids: list[int]
    checkpointed: bool = False


def add_checkpoint(built: Built) -> Built:
    """Checkpoint 1 of ``built``'s table as the JVM writes it after E (through sequence 2):
    A (less D's removal of a1), D and E; old-legacy removed. F (sequence 3) comes after it."""
    ref = built.ref

    def added(key: str) -> tuple[AddedFile, ...]:
        data = ref.read(key)
        assert data is not None
        return decode_record(data, key, key.rpartition("/")[2][:-5]).added

    a = tuple(f for f in added(f"_txcommit/commits/{T['A']}.json") if f.path in built.visible)
    d, e = (added(f"_txcommit/commits/{T[t]}.json") for t in "DE")
    old = "k=1/old-legacy.parquet"
    size = len(ref.read(old) or b"")
    checkpoint = Checkpoint(
        number=1,
        created_at=BASE_MS + 900,
        app_id=None,
        writer="test",
        through=2,
        committed={T["A"]: a, T["D"]: d, T["E"]: e},
        removed=(RemovedFile(old, size),),
    )
    ref.write(f"_txcommit/checkpoints/{checkpoint_name(1)}", encode_checkpoint(checkpoint))
    built.checkpointed = True
    return built


def build(ref: TableRef, url: str, options: dict[str, Any]) -> Built:
    """A table with every kind of file (A..G are transactions, in time order)."""
    sizes: dict[str, int] = {}

    def data(rel: str, ids: list[int]) -> AddedFile:
        body = parquet(ids)
        ref.write(rel, body)
        sizes[rel] = len(body)
        return AddedFile(rel, len(body))

    def record(txn: str, added: list[AddedFile], **v2: Any) -> CommitRecord:
        return CommitRecord(
            txn, "tok", "job", BASE_MS, BASE_MS + 500, tuple(added), None, "test", **v2
        )

    def marker(kind: str, txn: str) -> None:
        body = {"txn": txn, "jobId": "job", "startedAt": BASE_MS + 7, "state": kind}
        ref.write(f"_txcommit/{kind}/{txn}.json", json.dumps(body).encode())

    # A: committed append, written as a version 1 record (before replacing commits existed);
    # its task 0 failed once (attempt 9 left a file the record does not name).
    a1 = data(f"k=1/{name(T['A'], 1)}", [1, 2])
    a2 = data(f"k=2/{name(T['A'], 2, 1)}", [3])
    data(f"k=1/{name(T['A'], 9)}", [99])
    v1 = encode_record(record(T["A"], [a1, a2]))
    v1 = v1.replace(b'"version" : 2', b'"version" : 1').replace(b',\n  "operation" : "append"', b"")
    ref.write(f"_txcommit/commits/{T['A']}.json", v1)
    marker("pending", T["A"])
    # B: uncommitted (started, never committed: running or its driver died).
    data(f"k=1/{name(T['B'], 3)}", [100])
    marker("pending", T["B"])
    # C: aborted.
    data(f"k=2/{name(T['C'], 4)}", [101])
    marker("pending", T["C"])
    marker("aborted", T["C"])
    # Data written without txcommit: one stays, one is replaced by D's overwrite.
    legacy = data("k=2/legacy.parquet", [50])
    old = data("k=1/old-legacy.parquet", [60])
    # D: dynamic overwrite of k=1 (sequence 1): removes A's k=1 file and old-legacy.
    d1 = data(f"k=1/{name(T['D'], 5)}", [10, 11])
    rec_d = record(
        T["D"],
        [d1],
        operation="overwrite-partitions",
        sequence=1,
        scope=("k=1",),
        removed=removals(a1, old),
    )
    ref.write(f"_txcommit/replace/{replace_record_name(1)}", encode_record(rec_d))
    ref.write(f"_txcommit/commits/{T['D']}.json", encode_record(rec_d))
    # E: append with write id "daily" (sequence 2); F re-runs it (sequence 3) and replaces
    # exactly E's file. F's commits/ copy was never written (its driver died right after the
    # replace/ record, which alone commits it).
    e1 = data(f"k=3/{name(T['E'], 6)}", [20])
    rec_e = record(T["E"], [e1], operation="write-id", write_id="daily", sequence=2)
    ref.write(f"_txcommit/replace/{replace_record_name(2)}", encode_record(rec_e))
    ref.write(f"_txcommit/commits/{T['E']}.json", encode_record(rec_e))
    f1 = data(f"k=3/{name(T['F'], 7)}", [21])
    f2 = data(f"k=3/{name(T['F'], 8, 1)}", [22])
    rec_f = record(
        T["F"], [f1, f2], operation="write-id", write_id="daily", sequence=3, removed=removals(e1)
    )
    ref.write(f"_txcommit/replace/{replace_record_name(3)}", encode_record(rec_f))
    # Not data: the summary, a checksum, a staging directory, a hidden partition.
    ref.write("_SUCCESS", b"{}")
    ref.write(f"k=1/.{name(T['D'], 5)}.crc", b"crc")
    ref.write("_temporary/0/part-00000.parquet", parquet([666]))
    ref.write(".hidden/part-00000.parquet", parquet([667]))
    visible = {a2.path, legacy.path, d1.path, f1.path, f2.path}
    return Built(ref, url, options, visible, [3, 10, 11, 21, 22, 50])


def s3_options(s3: LocalS3) -> dict[str, Any]:
    return {
        "endpoint": s3.endpoint,
        "region": "us-east-1",
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
    }


_count = iter(range(10**6))


@pytest.fixture(params=["local", "s3", "local-checkpoint", "s3-checkpoint"])
def built(request: pytest.FixtureRequest, tmp_path: Path) -> Built:
    n = next(_count)
    store, _, checkpoint = request.param.partition("-")
    if store == "local":
        path = tmp_path / "table"
        made = build(TableRef("local", str(path), local=path), str(path), {})
    else:
        s3: LocalS3 = request.getfixturevalue("local_s3")
        prefix = f"readers/t{n}"
        ref = TableRef(
            "s3",
            f"s3://{TEST_BUCKET}/{prefix}",
            s3=request.getfixturevalue("s3_client"),
            bucket=TEST_BUCKET,
            prefix=prefix,
        )
        made = build(ref, ref.url, s3_options(s3))
    return add_checkpoint(made) if checkpoint else made


@pytest.fixture
def s3_env(monkeypatch: pytest.MonkeyPatch, built: Built) -> None:
    """The CLI takes S3 credentials from the environment only."""
    if built.options:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
        monkeypatch.setenv("AWS_REGION", "us-east-1")


def cli_args(built: Built) -> list[str]:
    return ["--endpoint", built.options["endpoint"]] if built.options else []


def ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


# --- the view, pyarrow, DuckDB, polars ------------------------------------------------------


def test_the_view_applies_the_reader_rule(built: Built) -> None:
    view = open_table(built.url, built.options)
    assert {f.path for f in view.visible_files()} == built.visible
    assert view.is_table
    # Every kind of hidden file really is in the table (the raw listing has them).
    raw = set(built.ref.objects())
    assert len(raw - built.visible) >= 10


def test_dataset_returns_the_committed_rows_with_hive_partitions(built: Built) -> None:
    ds = txcommit.dataset(built.url, storage_options=built.options)
    table = ds.to_table()
    assert ids(table) == built.visible_ids
    by_id = dict(zip(table.column("id").to_pylist(), table.column("k").to_pylist(), strict=True))
    assert by_id == {3: 2, 10: 1, 11: 1, 21: 3, 22: 3, 50: 2}
    # Filters prune on the partition column like any pyarrow dataset.
    import pyarrow.dataset as pads

    assert ids(ds.to_table(filter=pads.field("k") == 3)) == [21, 22]


def test_duckdb_and_polars_see_the_same_rows(built: Built) -> None:
    import duckdb

    con = duckdb.connect()
    rel = txcommit.duckdb_relation(built.url, connection=con, storage_options=built.options)
    assert sorted(r[0] for r in rel.project("id").fetchall()) == built.visible_ids
    assert rel.filter("k = 1").count("*").fetchall() == [(2,)]
    default = txcommit.duckdb_relation(built.url, storage_options=built.options)
    assert default.count("*").fetchall() == [(len(built.visible_ids),)]
    frame = txcommit.polars_frame(built.url, storage_options=built.options)
    assert sorted(frame.select("id").collect()["id"].to_list()) == built.visible_ids


def test_a_directory_inside_a_table_follows_the_tables_rule(
    built: Built, s3_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reading one partition directory: the enclosing table's records decide, as in Spark."""
    sub = f"{built.url}/k=1"
    view = open_table(sub, built.options)
    assert [f.path for f in view.visible_files()] == [name(T["D"], 5)]
    assert view.url.endswith("/k=1") and not view.table_url.endswith("/k=1")
    ds = txcommit.dataset(sub, storage_options=built.options)
    assert ids(ds.to_table()) == [10, 11]
    assert ls_main([sub, "--json", *cli_args(built)]) == 0
    assert [f["path"] for f in json.loads(capsys.readouterr().out)] == [name(T["D"], 5)]


def test_an_empty_or_missing_table_is_an_empty_dataset(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64())])
    assert txcommit.dataset(tmp_path / "nothing", schema=schema).to_table().num_rows == 0
    assert txcommit.dataset(tmp_path / "nothing").count_rows() == 0


def test_a_directory_without_a_log_shows_every_data_file(tmp_path: Path) -> None:
    """I7: txcommit-named files outside any txcommit table are someone else's: all shown."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / name(T["A"], 1)).write_bytes(parquet([1]))
    (tmp_path / "plain" / "other.parquet").write_bytes(parquet([2]))
    assert ids(txcommit.dataset(tmp_path / "plain").to_table()) == [1, 2]
    (tmp_path / "plain" / "_txcommit").mkdir()  # an (empty) log makes it a table
    assert ids(txcommit.dataset(tmp_path / "plain").to_table()) == [2]


def test_records_are_read_once_and_cached(built: Built) -> None:
    first = open_table(built.url, built.options)
    # 3 records in commits/ (A, D, E) and 3 in replace/ (D, E, F), each read once; with the
    # checkpoint, it and F's replace/ record only.
    assert first.store.requests.snapshot().get("GET", 0) == (2 if built.checkpointed else 6)
    again = open_table(built.url, built.options)
    assert again.store.requests.snapshot().get("GET", 0) == 0
    assert {f.path for f in again.visible_files()} == built.visible


# --- the fsspec file systems ---------------------------------------------------------------


def committed_fs(built: Built) -> tuple[Any, str]:
    if built.options:
        fs = fsspec.filesystem("txcommit+s3", **built.options)
        return fs, f"{TEST_BUCKET}/{built.ref.prefix}"
    fs = fsspec.filesystem("txcommit+file")
    return fs, str(Path(built.url).resolve())


def test_the_fsspec_file_system_lists_and_opens_committed_files_only(built: Built) -> None:
    fs, root = committed_fs(built)
    rel = {p[len(root) + 1 :] for p in fs.find(root)}
    assert rel == built.visible
    assert {p[len(root) + 1 :] for p in fs.glob(f"{root}/k=*/*.parquet")} == built.visible
    assert sorted(e["name"][len(root) + 1 :] for e in fs.ls(root)) == ["k=1", "k=2", "k=3"]
    assert all(e["type"] == "directory" for e in fs.ls(root))
    walked = {d[len(root) + 1 :]: sorted(files) for d, _, files in fs.walk(root)}
    assert walked["k=1"] == [name(T["D"], 5)]
    hidden = f"{root}/k=1/{name(T['B'], 3)}"  # uncommitted
    replaced = f"{root}/k=1/old-legacy.parquet"  # removed by D's overwrite
    for path in (hidden, replaced, f"{root}/_SUCCESS", f"{root}/_txcommit"):
        assert not fs.exists(path)
        with pytest.raises(FileNotFoundError):
            fs.info(path)
    with pytest.raises(FileNotFoundError, match="no such committed file"):
        fs.open(hidden).read()
    d1 = f"{root}/k=1/{name(T['D'], 5)}"
    info = fs.info(d1)
    assert info["type"] == "file" and info["size"] == len(fs.cat_file(d1))
    with fs.open(d1) as f:
        assert pq.read_table(f).column("id").to_pylist() == [10, 11]
    with pytest.raises(PermissionError, match="read-only"):
        fs.open(f"{root}/k=1/new.parquet", "wb")
    with pytest.raises(PermissionError, match="read-only"):
        fs.rm(d1)


def test_pyarrow_reads_a_table_through_the_fsspec_file_system(built: Built) -> None:
    fs, root = committed_fs(built)
    table = pq.read_table(root, filesystem=fs)
    assert ids(table) == built.visible_ids


def test_the_protocols_are_registered_by_url(tmp_path: Path, built: Built) -> None:
    if built.options:
        url = f"txcommit+s3://{TEST_BUCKET}/{built.ref.prefix}"
        fs, path = fsspec.core.url_to_fs(url, **built.options)
    else:
        fs, path = fsspec.core.url_to_fs(f"txcommit+file://{Path(built.url).resolve()}")
    assert {p[len(path) + 1 :] for p in fs.find(path)} == built.visible


def test_fsspec_finds_the_protocols_by_entry_point_without_importing_txcommit() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fsspec; assert 'txcommit' not in sys.modules; "
        "print(fsspec.get_filesystem_class('txcommit+s3').__name__, "
        "fsspec.get_filesystem_class('txcommit+file').__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CommittedS3FileSystem", "CommittedLocalFileSystem"]


def test_the_file_system_keeps_one_snapshot_until_invalidated(tmp_path: Path) -> None:
    ref = TableRef("local", str(tmp_path / "t"), local=tmp_path / "t")
    built = build(ref, ref.url, {})
    fs = fsspec.filesystem("txcommit+file")
    root = str((tmp_path / "t").resolve())
    assert len(fs.find(root)) == len(built.visible)
    g = generate_txn(BASE_MS + 10_000)
    body = parquet([30])
    ref.write(f"k=4/{name(g, 1)}", body)
    rec = CommitRecord(g, "t", "j", 1, 2, (AddedFile(f"k=4/{name(g, 1)}", len(body)),))
    ref.write(f"_txcommit/commits/{g}.json", encode_record(rec))
    assert len(fs.find(root)) == len(built.visible)
    fs.invalidate_cache()
    assert len(fs.find(root)) == len(built.visible) + 1
    assert ids(txcommit.dataset(root).to_table()) == sorted([*built.visible_ids, 30])


# --- the CLI --------------------------------------------------------------------------------


def test_txcommit_ls_lists_the_committed_files(
    built: Built, s3_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ls_main([built.url, "--json", "--no-progress", *cli_args(built)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {f["path"] for f in listed} == built.visible
    assert {f["txn"] for f in listed} == {T["A"], T["D"], T["F"], None}
    assert ls_main([built.url, *cli_args(built)]) == 0
    out = capsys.readouterr().out
    assert "5 committed files" in out and "legacy.parquet" in out and T["B"] not in out
    assert DUMMY_SECRET not in out


def test_txcommit_log_shows_the_history(
    built: Built, s3_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert log_main([built.url, "--json", *cli_args(built)]) == 0
    rows = {r["txn"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rows) == sorted(rows, reverse=True)  # newest first
    assert {t: r["state"] for t, r in rows.items()} == {
        T["A"]: "committed",
        T["B"]: "pending",
        T["C"]: "aborted",
        T["D"]: "committed",
        T["E"]: "committed",
        T["F"]: "committed",
    }
    d = rows[T["D"]]
    assert (d["operation"], d["sequence"], d["removedFiles"], d["files"]) == (
        "overwrite-partitions",
        1,
        2,
        1,
    )
    f = rows[T["F"]]
    assert (f["operation"], f["writeId"], f["sequence"], f["removedFiles"]) == (
        "write-id",
        "daily",
        3,
        1,
    )
    assert rows[T["A"]]["operation"] == "append" and rows[T["A"]]["removedFiles"] == 0
    assert rows[T["B"]]["startedAt"] == BASE_MS + 7 and rows[T["B"]]["files"] is None
    assert all(r["rows"] is None for r in rows.values())
    assert set(d) == {
        "txn",
        "state",
        "startedAt",
        "committedAt",
        "operation",
        "writeId",
        "files",
        "bytes",
        "rows",
        "removedFiles",
        "removedBytes",
        "sequence",
        "schema",
        "version",
        "storeTime",
        "restoredFiles",
        "transaction",
    }
    # Committed transactions are numbered in commit order: A, the first, is version 1 (I30).
    assert sorted((r["version"], t) for t, r in rows.items() if r["state"] == "committed")[0] == (
        1,
        T["A"],
    )
    assert log_main([built.url, "--progress", *cli_args(built)]) == 0
    captured = capsys.readouterr()
    assert "6 transactions (4 committed, 1 pending, 1 aborted)" in captured.out
    assert "overwrite-partitions" in captured.out and "reading commit records" in captured.err
    assert DUMMY_SECRET not in captured.out + captured.err


def test_txcommit_doctor_names_what_a_plain_listing_shows_beyond_the_readers(
    built: Built, s3_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert doctor_main([built.url, "--json", "--no-progress", *cli_args(built)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["committed"]["files"] == len(built.visible) == 5
    # Every data file a plain listing shows (not _temporary/ or .hidden/, which engines skip).
    assert found["listed"]["files"] == 11
    by_reason = {k: (r["files"], r["transactions"]) for k, r in found["hidden"]["byReason"].items()}
    assert by_reason == {
        "uncommitted": (1, 1),  # B
        "aborted": (1, 1),  # C
        "attempt": (1, 1),  # A's attempt 9, which A's record does not name
        "replaced": (3, 2),  # A's k=1 file and old-legacy (by D), E's file (by F's re-run)
    }
    assert found["hidden"]["files"] == 6 and found["hidden"]["pastHorizon"] == 0
    listed_bytes = found["committed"]["bytes"] + found["hidden"]["bytes"]
    assert found["listed"]["bytes"] == listed_bytes
    # A scheduled check fails while such files exist; the text names the reasons and VACUUM.
    assert doctor_main([built.url, "--check", "--no-progress", *cli_args(built)]) == 3
    out = capsys.readouterr().out
    assert HIDDEN_FILES_FOUND == 3 and "of an aborted job" in out and "TXCOMMIT VACUUM" in out
    assert "6 files" in out and DUMMY_SECRET not in out
    # With a horizon of 0 hours every hidden file is past it (their age alone).
    assert doctor_main([built.url, "--json", "--retain-hours", "0", *cli_args(built)]) == 0
    assert json.loads(capsys.readouterr().out)["hidden"]["pastHorizon"] == 6


def test_txcommit_doctor_on_a_clean_table_and_on_paths_that_are_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "t"
    ref = TableRef("local", str(table), local=table)
    a1 = f"k=1/{name(T['A'], 1)}"
    ref.write(a1, parquet([1]))
    record = CommitRecord(
        T["A"],
        "tok",
        "job",
        BASE_MS,
        BASE_MS + 1,
        (AddedFile(a1, len(ref.read(a1) or b"")),),
        None,
        "test",
    )
    ref.write(f"_txcommit/commits/{T['A']}.json", encode_record(record))
    assert doctor_main([str(table), "--check", "--no-progress"]) == 0
    assert "exactly what txcommit readers see" in capsys.readouterr().out
    # A partition of the table, a directory holding it, a path with no table: exit 2, named.
    assert doctor_main([str(table / "k=1"), "--no-progress"]) == 2
    assert f"inside the table file://{table};" in capsys.readouterr().err
    assert doctor_main([str(tmp_path), "--no-progress"]) == 2
    assert "holds tables below it" in capsys.readouterr().err
    assert doctor_main([str(tmp_path / "nope"), "--no-progress"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_cli_commands_have_help(capsys: pytest.CaptureFixture[str]) -> None:
    from txcommit.cli import main

    for command in ("ls", "log", "doctor"):
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0
        out = capsys.readouterr().out
        for flag in ("--json", "--endpoint", "--region", "--ignore-corrupt-records", "--progress"):
            assert flag in out
    assert main(["log", "/x", "--limit", "-1"]) == 2


# --- corrupt and bad input ------------------------------------------------------------------


def test_corrupt_records_fail_every_reader_naming_the_file(
    built: Built,
    s3_env: None,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = f"_txcommit/replace/{replace_record_name(3)}"
    good = built.ref.read(key)
    assert good is not None
    built.ref.write(key, good.replace(f"k=3/{name(T['E'], 6)}".encode(), b"../../etc/passwd"))
    with pytest.raises(CorruptCommitRecordError, match="outside its table directory") as caught:
        txcommit.dataset(built.url, storage_options=built.options)
    assert key in str(caught.value)
    fs, root = committed_fs(built)
    with pytest.raises(CorruptCommitRecordError):
        fs.find(root)
    assert ls_main([built.url, *cli_args(built)]) == 1
    err = capsys.readouterr().err
    assert key in err and "corrupt" in err
    # Opting in hides that transaction (F) and applies none of its removals (E is back).
    ds = txcommit.dataset(built.url, storage_options=built.options, ignore_corrupt_records=True)
    assert ids(ds.to_table()) == [3, 10, 11, 20, 50]
    assert key in caplog.text and "hiding its files" in caplog.text
    built.ref.write(key, good[: len(good) // 2])
    with pytest.raises(CorruptCommitRecordError, match="truncated"):
        txcommit.dataset(built.url, storage_options=built.options)


def test_bad_locations_get_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StoreError, match="carries credentials"):
        txcommit.dataset("s3://key:secret@bucket/t")
    (tmp_path / "f.parquet").write_bytes(parquet([1]))
    with pytest.raises(StoreError, match="is a file; pass the table's directory"):
        txcommit.dataset(tmp_path / "f.parquet")
    assert ls_main(["wasb://bucket/t"]) == 1
    assert "no store adapter serves scheme 'wasb'" in capsys.readouterr().err
    assert ls_main([str(tmp_path), "--endpoint", "http://x"]) == 1
    assert "--endpoint and --region are for s3://" in capsys.readouterr().err


def test_nested_partitions_list_level_by_level(tmp_path: Path) -> None:
    ref = TableRef("local", str(tmp_path / "n"), local=tmp_path / "n")
    g = T["G"]
    added = []
    for rel, rows in ((f"a=1/b=2/{name(g, 1)}", [1]), (f"a=1/b=3/{name(g, 2, 1)}", [2])):
        body = parquet(rows)
        ref.write(rel, body)
        added.append(AddedFile(rel, len(body)))
    ref.write(f"a=2/b=9/{name(T['A'], 3)}", parquet([9]))  # never committed: a=2 vanishes
    rec = CommitRecord(g, "t", "j", 1, 2, tuple(added))
    ref.write(f"_txcommit/commits/{g}.json", encode_record(rec))
    fs = fsspec.filesystem("txcommit+file")
    root = str((tmp_path / "n").resolve())
    assert fs.ls(root, detail=False) == [f"{root}/a=1"]
    assert fs.ls(f"{root}/a=1", detail=False) == [f"{root}/a=1/b=2", f"{root}/a=1/b=3"]
    assert fs.isdir(f"{root}/a=1/b=2") and not fs.exists(f"{root}/a=2")
    assert sorted(fs.find(root)) == sorted(f"{root}/{f.path}" for f in added)
    table = txcommit.dataset(root).to_table()
    assert sorted(zip(table["id"].to_pylist(), table["b"].to_pylist(), strict=True)) == [
        (1, 2),
        (2, 3),
    ]


def test_store_walk_lists_every_depth_in_one_flat_listing_on_s3(built: Built) -> None:
    from txcommit.adapters import open_store

    store = open_store(built.url, **built.options)
    keys = [f.key for f in store.walk()]
    assert keys == sorted(built.ref.objects()) and f"_txcommit/replace/{'0' * 19}3.json" in keys
    assert [f.key for f in store.walk("_txcommit/replace")] == [
        f"_txcommit/replace/{replace_record_name(n)}" for n in (1, 2, 3)
    ]
    assert store.walk("no/such/dir") == []
    if built.options:  # S3: one LIST request per 1000 keys, whatever the depth
        before = store.requests.snapshot().get("LIST", 0)
        store.walk()
        assert store.requests.snapshot()["LIST"] - before == 1
