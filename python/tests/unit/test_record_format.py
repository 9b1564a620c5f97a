"""The file rules of a table in the Python codec: commit records as the JVM writes them
(:mod:`txcommit.table.records`), transaction ids and data file names
(:mod:`txcommit.table.names`) and the log layout (:mod:`txcommit.table.layout`)."""

from __future__ import annotations

import json

import pytest

from txcommit import paths
from txcommit.errors import CorruptCommitRecordError
from txcommit.table.layout import LogLayout, txn_of_record_name
from txcommit.table.names import data_file_name, generate_txn, is_valid_txn, txn_of
from txcommit.table.records import AddedFile, CommitRecord, decode_record, encode_record
from txcommit.testing.vectors import golden, unsafe_paths

TXN = "mwrb6d3zh3ckkd3q"
#: Records exactly as the JVM's RecordCodec writes them (conformance/vectors/records): a
#: version 1 record with two files, and one with no files and no appId.
JVM_RECORD = golden("append-v1")
JVM_EMPTY_RECORD = golden("append-empty-v1")
RECORD_FILE = f"/data/t/_txcommit/commits/{TXN}.json"


def test_a_record_the_jvm_wrote_decodes_and_reencodes_byte_for_byte() -> None:
    record = decode_record(JVM_RECORD, RECORD_FILE, TXN)
    assert record == CommitRecord(
        txn=TXN,
        token="tok-1",
        job_id="job-1",
        started_at=1700000000000,
        committed_at=1700000001234,
        added=(
            AddedFile(f"k=1/part-00000-tid-{TXN}-117.c000.snappy.parquet", 42),
            AddedFile(f"part-00001-tid-{TXN}-118.c000.snappy.parquet", 7),
        ),
        app_id="app-20240101",
        writer="txcommit/0.1.0",
    )
    assert (record.files, record.bytes, record.directories) == (2, 49, ("", "k=1"))
    # A version 1 record is an append; records are now written as version 2, byte for byte
    # as the JVM writes them (golden records in test_log_v2.py).
    v2 = JVM_RECORD.replace(b'"version" : 1', b'"version" : 2')
    assert encode_record(record) == v2.replace(b"  } ]\n}", b'  } ],\n  "operation" : "append"\n}')
    empty = decode_record(JVM_EMPTY_RECORD, RECORD_FILE, TXN)
    assert empty.app_id is None and empty.added == ()
    assert decode_record(encode_record(empty), RECORD_FILE, TXN) == empty


def test_records_with_awkward_paths_roundtrip() -> None:
    record = CommitRecord(TXN, "t", "j", 1, 2, (AddedFile('d=é "q"/\x01\tf', 1),), None, "w")
    data = encode_record(record)
    assert b'"d=\xc3\xa9 \\"q\\"/\\u0001\\tf"' in data
    assert decode_record(data, RECORD_FILE, TXN) == record


def corrupt_message(data: bytes, expected_txn: str = TXN) -> str:
    with pytest.raises(CorruptCommitRecordError) as caught:
        decode_record(data, RECORD_FILE, expected_txn)
    message = str(caught.value)
    assert RECORD_FILE in message and "ignoreCorruptRecords" in message
    return message


def test_a_truncated_record_is_refused_naming_the_file() -> None:
    assert "truncated" in corrupt_message(JVM_RECORD[: len(JVM_RECORD) // 2])
    assert "truncated" in corrupt_message(b"")
    assert "not a JSON object" in corrupt_message(b"[1]")


def test_a_record_of_another_format_or_version_is_refused() -> None:
    assert "'format' is not" in corrupt_message(JVM_RECORD.replace(b"commit-record", b"other"))
    v5 = JVM_RECORD.replace(b'"version" : 1', b'"version" : 5')
    assert "upgrade" in corrupt_message(v5)
    other = "0000000000000000"
    assert other in corrupt_message(JVM_RECORD, other)
    three = JVM_RECORD.replace(b'"files" : 2', b'"files" : 3')
    assert "declares 3" in corrupt_message(three)
    nan = JVM_RECORD.replace(b'"size" : 42', b'"size" : NaN')
    assert "not complete JSON" in corrupt_message(nan)
    boolean = JVM_RECORD.replace(b'"size" : 42', b'"size" : true')
    assert "'size' is missing or not a number" in corrupt_message(boolean)


@pytest.mark.parametrize("bad", [p for p in unsafe_paths() if p])  # "" names the table itself
def test_a_record_naming_a_path_outside_its_table_is_refused(bad: str) -> None:
    data = JVM_RECORD.replace(
        f"part-00001-tid-{TXN}-118.c000.snappy.parquet".encode(), json.dumps(bad)[1:-1].encode()
    )
    assert "outside its table directory" in corrupt_message(data)


def test_txn_ids_are_valid_distinct_ordered_and_match_the_jvm() -> None:
    ids = [generate_txn(1700000000000 + i) for i in range(1000)]
    assert all(is_valid_txn(t) for t in ids)
    assert len(set(ids)) == 1000 and ids == sorted(ids)
    # TxnId.generate(1700000000000L) and TxnId.generate(0L) on the JVM start with these:
    assert generate_txn(1700000000000)[:8] == "loyw3v28"
    assert generate_txn(0)[:8] == "00000000"
    assert not is_valid_txn("ABCDEFGH12345678") and not is_valid_txn("abc")


def test_data_file_names_carry_their_transaction() -> None:
    name = data_file_name("bucket-3_", 7, TXN, 12345, "-c000.snappy.parquet")
    assert name == f"bucket-3_part-00007-tid-{TXN}-12345-c000.snappy.parquet"  # as on the JVM
    for suffix in ("-c000.snappy.parquet", ".c001.json", "", ".csv"):
        assert txn_of(data_file_name("", 3, TXN, 1, suffix)) == TXN
    assert txn_of("part-00000-5f1c2a3b-c000.snappy.parquet") is None
    assert txn_of(f"part-00000-tid-{TXN}-x.parquet") is None


def test_the_log_layout_and_record_names() -> None:
    layout = LogLayout("s3://b/t")
    assert layout.commit_record(TXN) == f"s3://b/t/_txcommit/commits/{TXN}.json"
    assert layout.pending_record(TXN) == f"s3://b/t/_txcommit/pending/{TXN}.json"
    assert layout.aborted_record(TXN) == f"s3://b/t/_txcommit/aborted/{TXN}.json"
    assert layout.success == "s3://b/t/_SUCCESS"
    assert LogLayout("").commit_record(TXN) == f"_txcommit/commits/{TXN}.json"
    assert txn_of_record_name(f"{TXN}.json") == TXN
    assert txn_of_record_name(f".{TXN}.json.1234.tmp") is None
    assert txn_of_record_name("short.json") is None
    assert paths.display_url("s3a://AKID:secret@bucket/t") == "s3a://bucket/t"
    assert paths.display_url("abfss://c:secret@acct.dfs.core.windows.net/t").find("secret") < 0
    shown = "abfss://lake@acct.dfs.core.windows.net/t"
    assert paths.display_url(shown) == shown, "an Azure container names the place"
