"""The Python mirror of the store adapters: the shared contract bound to every adapter on its
real store (local directories, and S3 through ``txcommit.testing.local_s3.LocalS3``), plus the
declarations, the registry, the file rules of ``txcommit.table.format`` and the packaging."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
import uuid
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from txcommit.adapters import (
    AdapterDeclaration,
    LocalStore,
    adapter_for,
    known_adapters,
    load_declarations,
    open_store,
    overrides_from_conf,
    parse_declaration,
    scheme_of,
)
from txcommit.adapters.declarations import declarations_root
from txcommit.adapters.s3 import S3MultipartStore, S3Store
from txcommit.errors import (
    AlreadyExistsError,
    CorruptCommitRecordError,
    InvalidDeclarationError,
    StoreError,
    UnknownAdapterError,
    UnsupportedStoreError,
)
from txcommit.table import format as log
from txcommit.testing.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3, fetch_requests

from conftest import LYING_BUCKET
from conftest import TEST_BUCKET as BUCKET
from contract import MultipartStoreContract, StoreContract

REPO = Path(__file__).resolve().parents[2]
SECRET = "do-not-show-me-" + uuid.uuid4().hex


# --- S3 endpoints: the session's shared ones (conftest: local_s3, lying_s3) ----------------


def s3_options(s3: LocalS3, **extra: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "endpoint": s3.endpoint,
        "region": "us-east-1",
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
        "max_retries": 1,
    }
    options.update(extra)
    return options


def fresh_s3_url(scheme: str = "s3", bucket: str = BUCKET) -> str:
    return f"{scheme}://{bucket}/adapters-py/t-{uuid.uuid4().hex[:12]}"


# --- the contract, bound to every adapter ---------------------------------------------------


class TestLocalStoreContract(StoreContract):
    adapter = "local"

    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(tmp_path / "table")


class TestLocalStoreWithObstoreCreateContract(StoreContract):
    """obstore's own ``put(mode="create")`` (link(2) without fsync) keeps the contract too."""

    adapter = "local"

    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(f"file://{tmp_path}/table", durable=False)


class TestS3StoreContract(StoreContract):
    adapter = "s3"

    @pytest.fixture
    def store(self, local_s3: LocalS3) -> S3Store:
        return S3Store(fresh_s3_url(), **s3_options(local_s3))


class TestS3MultipartStoreContract(MultipartStoreContract):
    adapter = "s3-multipart"

    @pytest.fixture
    def store(self, local_s3: LocalS3) -> S3MultipartStore:
        return S3MultipartStore(fresh_s3_url("s3a"), **s3_options(local_s3))


# --- S3 specifics ---------------------------------------------------------------------------


def test_s3_create_is_a_conditional_put_refused_with_412(local_s3: LocalS3) -> None:
    store = S3Store(fresh_s3_url(), **s3_options(local_s3))
    since = fetch_requests(local_s3.endpoint)["next"]
    store.create_exclusive("_txcommit/commits/a.json", b"1")
    with pytest.raises(AlreadyExistsError):
        store.create_exclusive("_txcommit/commits/a.json", b"2")
    puts = [r for r in fetch_requests(local_s3.endpoint, since)["requests"] if r["op"] == "PUT"]
    assert [r["status"] for r in puts] == [200, 412]
    store.check_ready()  # an honest endpoint passes the probe, which cleans up after itself
    assert store.list("_txcommit/probe") == []


def test_an_endpoint_ignoring_if_none_match_overwrites_and_check_ready_catches_it(
    lying_s3: LocalS3,
) -> None:
    store = S3Store(fresh_s3_url(bucket=LYING_BUCKET), **s3_options(lying_s3))
    store.create_exclusive("_txcommit/commits/a.json", b"first")
    store.create_exclusive("_txcommit/commits/a.json", b"second")  # the liar accepts it
    assert store.read("_txcommit/commits/a.json") == b"second"
    with pytest.raises(UnsupportedStoreError) as caught:
        store.check_ready()
    message = str(caught.value)
    assert "ignored If-None-Match: *" in message and lying_s3.endpoint in message
    assert store.list("_txcommit/probe") == []


def test_s3_request_counts_match_what_the_endpoint_served(local_s3: LocalS3) -> None:
    store = S3MultipartStore(fresh_s3_url(), **s3_options(local_s3))
    since = fetch_requests(local_s3.endpoint)["next"]
    store.create_exclusive("c.json", b"c")
    store.write_replacing("_SUCCESS", b"s")
    store.write_replacing("big", os.urandom(11 * 1024 * 1024))
    store.read("c.json")
    store.read("missing")
    store.list("")
    store.exists("c.json")
    store.delete("c.json")
    store.delete("missing")
    upload = store.start_multipart("d/f")
    part = store.upload_part(upload, 1, b"x")
    store.complete_multipart(upload, [part])
    store.abort_multipart(store.start_multipart("d/g"))
    store.list_multipart_uploads("d")
    served = Counter(r["op"] for r in fetch_requests(local_s3.endpoint, since)["requests"])
    assert store.requests.snapshot() == dict(served)
    assert served["MULTIPART_PART"] == 3 + 1  # 11 MiB in 5 MiB parts, and one explicit part


def test_s3_credentials_never_show_in_reprs_or_errors(local_s3: LocalS3) -> None:
    store = S3MultipartStore(
        f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/t",
        **s3_options(local_s3, secret_access_key=SECRET, session_token=SECRET + "-token"),
    )
    assert SECRET not in repr(store) and SECRET not in str(vars(store))
    failures: list[BaseException] = []
    for attempt in (
        lambda: store.read("k"),
        lambda: store.list(""),
        lambda: store.create_exclusive("k", b"1"),
        lambda: store.start_multipart("k"),
    ):
        with pytest.raises(StoreError) as caught:
            attempt()
        failures.append(caught.value)
    for e in failures:
        text = "".join(traceback.format_exception(e)) + repr(e)
        assert SECRET not in text
        assert store.root_url in str(e)
    assert "does not exist" in str(failures[0]) and "create it" in str(failures[0])


def test_s3_credentials_from_the_environment_work_and_stay_hidden(
    local_s3: LocalS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", local_s3.endpoint)
    store = open_store(fresh_s3_url("s3a"))
    assert isinstance(store, S3Store) and store.endpoint == local_s3.endpoint
    assert store.path_style and store.allow_http
    store.create_exclusive("x.json", b"via env")
    assert store.read("x.json") == b"via env"
    assert SECRET not in repr(store)


def test_credentials_in_an_s3_url_are_refused_without_showing_them() -> None:
    with pytest.raises(StoreError) as caught:
        S3Store(f"s3://AKIDEXAMPLE:{SECRET}@bucket/t")
    assert SECRET not in str(caught.value) and "s3://bucket/t" in str(caught.value)
    with pytest.raises(StoreError, match="only one of"):
        S3Store("s3://bucket/t", endpoint="http://127.0.0.1:1", access_key_id="k")


def test_local_store_on_a_missing_root_reads_as_empty_and_writes_create_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "not" / "yet"
    store = LocalStore(root)
    assert store.read("a") is None and store.list("") == [] and not store.exists("a")
    assert store.delete("a") is False
    assert not root.exists()
    store.create_exclusive("_txcommit/commits/a.json", b"1")
    assert (root / "_txcommit" / "commits" / "a.json").read_bytes() == b"1"


def test_local_store_failures_name_the_file_and_say_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "t").write_bytes(b"a file where a directory should be")
    store = LocalStore(tmp_path)
    with pytest.raises(StoreError) as caught:
        store.create_exclusive("t/x.json", b"1")
    assert f"file://{tmp_path}/t/x.json" in str(caught.value)
    assert "Check that the directory exists" in str(caught.value)


# --- declarations ---------------------------------------------------------------------------

VALID = {
    "format": "txcommit-adapter",
    "formatVersion": 1,
    "name": "x",
    "title": "X",
    "primitive": "rename",
    "exclusiveCreate": True,
    "listing": "consistent",
    "schemes": ["x"],
    "defaultFor": [],
}
WHERE = "adapters/x/adapter.json"


def declaration_json(**changes: Any) -> str:
    d = dict(VALID)
    for k, v in changes.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    return json.dumps(d)


def test_the_shipped_declarations_load_with_their_promises() -> None:
    by_name = {d.name: d for d in known_adapters()}
    assert sorted(by_name) == ["azure", "gcs", "hdfs", "local", "s3", "s3-multipart"]
    assert by_name["local"] == AdapterDeclaration(
        name="local",
        title=by_name["local"].title,
        primitive="rename",
        exclusive_create=True,
        listing="consistent",
        schemes=("file",),
        default_for=("file",),
        notes=by_name["local"].notes,
        implementations=("jvm", "python"),
    )
    assert by_name["s3"].primitive == "conditional-put"
    assert by_name["s3"].default_for == ("s3a", "s3")
    assert by_name["s3-multipart"].primitive == "multipart-complete"
    assert by_name["s3-multipart"].default_for == ()
    assert "link(2)" in by_name["local"].notes
    assert by_name["gcs"].primitive == by_name["azure"].primitive == "conditional-put"
    assert by_name["gcs"].default_for == ("gs",)
    assert by_name["azure"].default_for == ("az", "abfs", "abfss")


def test_the_declared_implementations_match_what_each_side_ships() -> None:
    """A declaration says where the adapter exists: the Python registry has exactly the
    adapters declaring ``python``, and sbt packages exactly those declaring ``jvm``."""
    from txcommit.adapters.registry import _IMPLEMENTATIONS

    declared = {d.name: d for d in known_adapters()}
    assert sorted(_IMPLEMENTATIONS) == sorted(n for n, d in declared.items() if d.in_python)
    sbt = (REPO / "build.sbt").read_text()
    packaged = re.findall(r"declarations\((\"[^)]*)\)", sbt)
    in_sbt = sorted(n.strip().strip('"') for group in packaged for n in group.split(","))
    assert in_sbt == sorted(n for n, d in declared.items() if d.on_jvm)
    assert not declared["gcs"].on_jvm and not declared["azure"].on_jvm


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"primitive": "teleport"}, "unknown primitive 'teleport'"),
        ({"listing": "sometimes"}, "unknown listing 'sometimes'"),
        ({"defaultFor": ["y"]}, "'defaultFor' names scheme 'y'"),
        ({"schemes": []}, "'schemes' is empty"),
        ({"schemes": ["x", 3]}, "'schemes' must hold strings only (found 3)"),
        ({"formatVersion": 2}, "'formatVersion' must be 1"),
        ({"formatVersion": True}, "'formatVersion' must be 1"),
        ({"format": "other"}, "'format' must be 'txcommit-adapter'"),
        ({"exclusiveCreate": "yes"}, "'exclusiveCreate' is missing or not true/false"),
        ({"title": None}, "'title' is missing or not a string (found nothing)"),
        ({"name": "y"}, "'name' is 'y' but the declaration's directory is 'x'"),
        ({"notes": 5}, "'notes' must be a string"),
        ({"implementations": []}, "'implementations' is empty"),
        ({"implementations": ["go"]}, "unknown implementation 'go'"),
    ],
)
def test_an_invalid_declaration_is_refused_naming_the_file_and_the_key(
    changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidDeclarationError) as caught:
        parse_declaration(declaration_json(**changes), WHERE, expected_name="x")
    assert WHERE in str(caught.value) and expected in str(caught.value)


def test_a_declaration_that_is_not_json_is_refused_naming_the_file() -> None:
    for bad in (declaration_json()[:40], "[1, 2]", b"\xff\xfe\x00"):
        with pytest.raises(InvalidDeclarationError, match="adapters/x/adapter.json"):
            parse_declaration(bad, WHERE)
    assert parse_declaration(declaration_json(), WHERE).summary == "x (rename; schemes x)"


def test_loading_declarations_validates_each_file_and_skips_other_directories(
    tmp_path: Path,
) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "adapter.json").write_text(declaration_json())
    (tmp_path / "x" / "jvm").mkdir()  # an adapter's JVM sources live next to its declaration
    (tmp_path / "x" / "jvm" / "X.scala").write_text("object X")
    (tmp_path / "docs").mkdir()
    assert [d.name for d in load_declarations(tmp_path)] == ["x"]
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "adapter.json").write_text(declaration_json(name="y", primitive="warp"))
    with pytest.raises(InvalidDeclarationError) as caught:
        load_declarations(tmp_path)
    assert "adapters/y/adapter.json" in str(caught.value) and "'warp'" in str(caught.value)
    with pytest.raises(InvalidDeclarationError, match="holds no"):
        load_declarations(tmp_path / "docs")


# --- registry -------------------------------------------------------------------------------


def test_the_scheme_picks_the_default_adapter() -> None:
    assert scheme_of("/data/t") == "file" and scheme_of("rel/t") == "file"
    assert scheme_of("C:\\data\\t") == "file" and scheme_of("S3A://b/t") == "s3a"
    assert adapter_for("/data/events").name == "local"
    assert adapter_for("file:///data/events").name == "local"
    assert adapter_for("s3://b/t").name == "s3"
    assert adapter_for("s3a://b/t").name == "s3"
    assert adapter_for("hdfs://nn/t").name == "hdfs"


def test_an_override_per_scheme_wins() -> None:
    assert adapter_for("s3a://b/t", {"s3a": "s3-multipart"}).name == "s3-multipart"
    assert adapter_for("s3://b/t", {"s3a": "s3-multipart"}).name == "s3"
    conf = {"spark.txcommit.adapter.s3": " s3-multipart ", "spark.other": "x"}
    assert overrides_from_conf(conf) == {"s3": "s3-multipart"}
    assert adapter_for("s3://b/t", conf).name == "s3-multipart"
    assert adapter_for("/t", {"file": "local"}).name == "local"


def test_an_unknown_scheme_is_refused_listing_the_known_adapters() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("wasb://AKID:secret@bucket/t")
    message = str(caught.value)
    assert "'wasb'" in message and "spark.txcommit.adapter.wasb" in message
    assert "local (rename; schemes file)" in message
    assert "s3 (conditional-put; schemes s3a, s3)" in message
    assert "s3-multipart (multipart-complete; schemes s3a, s3)" in message
    assert "secret" not in message and "wasb://bucket/t" in message


def test_an_override_to_an_unknown_adapter_is_refused() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("s3://b/t", {"s3": "ftp-magic"})
    assert "'ftp-magic'" in str(caught.value) and "spark.txcommit.adapter.s3" in str(caught.value)
    assert "hdfs (rename; schemes hdfs, viewfs)" in str(caught.value)


def test_an_override_to_an_adapter_not_serving_the_scheme_is_refused() -> None:
    with pytest.raises(UnknownAdapterError) as caught:
        adapter_for("/data/t", {"file": "s3"})
    assert "does not serve scheme 'file'" in str(caught.value)
    assert "it serves s3a, s3" in str(caught.value)


def test_open_store_builds_the_adapters_python_mirror(tmp_path: Path, local_s3: LocalS3) -> None:
    local = open_store(str(tmp_path))
    assert isinstance(local, LocalStore) and local.declaration.name == "local"
    s3 = open_store(fresh_s3_url(), **s3_options(local_s3))
    assert type(s3) is S3Store and s3.declaration.name == "s3"
    multipart = open_store(fresh_s3_url("s3a"), {"s3a": "s3-multipart"}, **s3_options(local_s3))
    assert isinstance(multipart, S3MultipartStore)
    assert multipart.declaration.primitive == "multipart-complete"
    with pytest.raises(UnsupportedStoreError, match="'hdfs' \\(rename\\) has no Python"):
        open_store("hdfs://nn/t")


# --- file rules (txcommit.table.format) ---------------------------------------------------

TXN = "mwrb6d3zh3ckkd3q"
#: Written by the JVM plugin's RecordCodec.encode (plugin-jvm/target/txcommit-plugin.jar) for
#: CommitRecord(TXN, "tok-1", "job-1", 1700000000000L, 1700000001234L, Seq(AddedFile(
#: "k=1/part-00000-tid-<TXN>-117.c000.snappy.parquet", 42), AddedFile("part-00001-tid-<TXN>-
#: 118.c000.snappy.parquet", 7)), Some("app-20240101"), "txcommit/0.1.0").
JVM_RECORD = b"""{
  "format" : "txcommit-commit-record",
  "version" : 1,
  "txn" : "mwrb6d3zh3ckkd3q",
  "token" : "tok-1",
  "jobId" : "job-1",
  "startedAt" : 1700000000000,
  "committedAt" : 1700000001234,
  "appId" : "app-20240101",
  "writer" : "txcommit/0.1.0",
  "files" : 2,
  "bytes" : 49,
  "added" : [ {
    "path" : "k=1/part-00000-tid-mwrb6d3zh3ckkd3q-117.c000.snappy.parquet",
    "size" : 42
  }, {
    "path" : "part-00001-tid-mwrb6d3zh3ckkd3q-118.c000.snappy.parquet",
    "size" : 7
  } ]
}"""
#: The same codec for a record with no files and no appId.
JVM_EMPTY_RECORD = b"""{
  "format" : "txcommit-commit-record",
  "version" : 1,
  "txn" : "mwrb6d3zh3ckkd3q",
  "token" : "t",
  "jobId" : "j",
  "startedAt" : 1,
  "committedAt" : 2,
  "writer" : "w",
  "files" : 0,
  "bytes" : 0,
  "added" : [ ]
}"""
RECORD_FILE = f"/data/t/_txcommit/commits/{TXN}.json"


def test_a_record_the_jvm_wrote_decodes_and_reencodes_byte_for_byte() -> None:
    record = log.decode_record(JVM_RECORD, RECORD_FILE, TXN)
    assert record == log.CommitRecord(
        txn=TXN,
        token="tok-1",
        job_id="job-1",
        started_at=1700000000000,
        committed_at=1700000001234,
        added=(
            log.AddedFile(f"k=1/part-00000-tid-{TXN}-117.c000.snappy.parquet", 42),
            log.AddedFile(f"part-00001-tid-{TXN}-118.c000.snappy.parquet", 7),
        ),
        app_id="app-20240101",
        writer="txcommit/0.1.0",
    )
    assert (record.files, record.bytes, record.directories) == (2, 49, ("", "k=1"))
    # A version 1 record is an append; records are now written as version 2, byte for byte
    # as the JVM writes them (golden records in test_log_v2.py).
    v2 = JVM_RECORD.replace(b'"version" : 1', b'"version" : 2')
    assert log.encode_record(record) == v2.replace(
        b"  } ]\n}", b'  } ],\n  "operation" : "append"\n}'
    )
    empty = log.decode_record(JVM_EMPTY_RECORD, RECORD_FILE, TXN)
    assert empty.app_id is None and empty.added == ()
    assert log.decode_record(log.encode_record(empty), RECORD_FILE, TXN) == empty


def test_records_with_awkward_paths_roundtrip() -> None:
    record = log.CommitRecord(
        TXN, "t", "j", 1, 2, (log.AddedFile('d=é "q"/\x01\tf', 1),), None, "w"
    )
    data = log.encode_record(record)
    assert b'"d=\xc3\xa9 \\"q\\"/\\u0001\\tf"' in data
    assert log.decode_record(data, RECORD_FILE, TXN) == record


def corrupt_message(data: bytes, expected_txn: str = TXN) -> str:
    with pytest.raises(CorruptCommitRecordError) as caught:
        log.decode_record(data, RECORD_FILE, expected_txn)
    message = str(caught.value)
    assert RECORD_FILE in message and "ignoreCorruptRecords" in message
    return message


def test_a_truncated_record_is_refused_naming_the_file() -> None:
    assert "truncated" in corrupt_message(JVM_RECORD[: len(JVM_RECORD) // 2])
    assert "truncated" in corrupt_message(b"")
    assert "not a JSON object" in corrupt_message(b"[1]")


def test_a_record_of_another_format_or_version_is_refused() -> None:
    assert "'format' is not" in corrupt_message(JVM_RECORD.replace(b"commit-record", b"other"))
    v3 = JVM_RECORD.replace(b'"version" : 1', b'"version" : 3')
    assert "upgrade" in corrupt_message(v3)
    other = "0000000000000000"
    assert other in corrupt_message(JVM_RECORD, other)
    three = JVM_RECORD.replace(b'"files" : 2', b'"files" : 3')
    assert "declares 3" in corrupt_message(three)
    nan = JVM_RECORD.replace(b'"size" : 42', b'"size" : NaN')
    assert "not complete JSON" in corrupt_message(nan)
    boolean = JVM_RECORD.replace(b'"size" : 42', b'"size" : true')
    assert "'size' is missing or not a number" in corrupt_message(boolean)


@pytest.mark.parametrize(
    "bad", ["../../x", "/etc/passwd", "k=1/../../x", "s3a://other/x", "a//b", "./a", "a\\..\\b"]
)
def test_a_record_naming_a_path_outside_its_table_is_refused(bad: str) -> None:
    data = JVM_RECORD.replace(
        f"part-00001-tid-{TXN}-118.c000.snappy.parquet".encode(), json.dumps(bad)[1:-1].encode()
    )
    assert "outside its table directory" in corrupt_message(data)


def test_txn_ids_are_valid_distinct_ordered_and_match_the_jvm() -> None:
    ids = [log.generate_txn(1700000000000 + i) for i in range(1000)]
    assert all(log.is_valid_txn(t) for t in ids)
    assert len(set(ids)) == 1000 and ids == sorted(ids)
    # TxnId.generate(1700000000000L) and TxnId.generate(0L) on the JVM start with these:
    assert log.generate_txn(1700000000000)[:8] == "loyw3v28"
    assert log.generate_txn(0)[:8] == "00000000"
    assert not log.is_valid_txn("ABCDEFGH12345678") and not log.is_valid_txn("abc")


def test_data_file_names_carry_their_transaction() -> None:
    name = log.data_file_name("bucket-3_", 7, TXN, 12345, "-c000.snappy.parquet")
    assert name == f"bucket-3_part-00007-tid-{TXN}-12345-c000.snappy.parquet"  # as on the JVM
    for suffix in ("-c000.snappy.parquet", ".c001.json", "", ".csv"):
        assert log.txn_of(log.data_file_name("", 3, TXN, 1, suffix)) == TXN
    assert log.txn_of("part-00000-5f1c2a3b-c000.snappy.parquet") is None
    assert log.txn_of(f"part-00000-tid-{TXN}-x.parquet") is None


def test_the_log_layout_and_record_names() -> None:
    layout = log.LogLayout("s3://b/t")
    assert layout.commit_record(TXN) == f"s3://b/t/_txcommit/commits/{TXN}.json"
    assert layout.pending_record(TXN) == f"s3://b/t/_txcommit/pending/{TXN}.json"
    assert layout.aborted_record(TXN) == f"s3://b/t/_txcommit/aborted/{TXN}.json"
    assert layout.success == "s3://b/t/_SUCCESS"
    assert log.LogLayout("").commit_record(TXN) == f"_txcommit/commits/{TXN}.json"
    assert log.txn_of_record_name(f"{TXN}.json") == TXN
    assert log.txn_of_record_name(f".{TXN}.json.1234.tmp") is None
    assert log.txn_of_record_name("short.json") is None
    assert log.display_url("s3a://AKID:secret@bucket/t") == "s3a://bucket/t"


# --- packaging ------------------------------------------------------------------------------


def _setuptools_dist(project: Path) -> Any:
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist = Distribution({"script_name": "setup.py"})
        apply_configuration(dist, str(project / "pyproject.toml"))
    return dist


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    listed = set(_setuptools_dist(REPO).packages)
    src = REPO / "python" / "src"
    found = {
        ".".join(p.parent.relative_to(src).parts) for p in (src / "txcommit").rglob("__init__.py")
    }
    missing = found - listed
    assert not missing, f"add {sorted(missing)} to [tool.setuptools] packages in pyproject.toml"


def test_the_package_ships_only_the_adapter_json_files_and_reads_them(tmp_path: Path) -> None:
    # A copy of the project, with JVM sources next to a declaration, as adapters/s3/jvm/ will be.
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    for d in ("adapters", "python/src/txcommit"):
        for f in (REPO / d).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and "_jars" not in f.parts:
                (project / f.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
                (project / f.relative_to(REPO)).write_bytes(f.read_bytes())
    (project / "adapters" / "s3" / "jvm").mkdir(exist_ok=True)
    (project / "adapters" / "s3" / "jvm" / "Probe.scala").write_text("object Probe")
    lib = tmp_path / "lib"
    cwd = os.getcwd()
    os.chdir(project)  # setuptools resolves package-dir against the working directory
    try:
        dist = _setuptools_dist(project)
        build_py = dist.get_command_obj("build_py")
        build_py.build_lib = str(lib)
        build_py.compile = False
        build_py.ensure_finalized()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build_py.run()
    finally:
        os.chdir(cwd)
    shipped = sorted(
        str(p.relative_to(lib)) for p in (lib / "txcommit" / "_adapters").rglob("*") if p.is_file()
    )
    expected = sorted(
        f"txcommit/_adapters/{p.parent.name}/adapter.json"
        for p in (REPO / "adapters").glob("*/adapter.json")
    )
    assert shipped == expected
    # The installed layout finds its own copy, not a source checkout's.
    probe = (
        "from txcommit.adapters.declarations import declarations_root, load_declarations;"
        "print(declarations_root()); print(len(load_declarations()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(lib)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [str(lib / "txcommit" / "_adapters"), str(len(expected))]


def test_a_source_checkout_reads_the_repositorys_declarations() -> None:
    assert Path(str(declarations_root())).resolve() == REPO / "adapters"
