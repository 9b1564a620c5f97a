"""Record format version 2 in the Python codec (``txcommit.table.records``): decodes versions 1
and 2, encodes version 2 byte for byte as the JVM's ``RecordCodec`` (Jackson's default pretty
printer) writes it, and refuses corrupt replacing records naming the file.

The ``JVM_*`` records are golden vectors (``conformance/vectors/records``): exactly what the
JVM's ``RecordCodec.encode`` writes, checked byte for byte by the JVM's own suites too.
"""

from __future__ import annotations

import json

import pytest

from txcommit.errors import CorruptCommitRecordError
from txcommit.table.layout import LogLayout, replace_record_name, sequence_of_record_name
from txcommit.table.names import check_write_id
from txcommit.table.records import CommitRecord, RemovedFile, decode_record, encode_record
from txcommit.testing.vectors import golden, unsafe_paths

TXN = "mwrb6d3zh3ckkd3q"
WHERE = "/data/t/_txcommit/replace/00000000000000000003.json"
JVM_OVERWRITE = golden("overwrite-partitions-v2")
JVM_EMPTY_OVERWRITE = golden("overwrite-empty-v2")
JVM_WRITE_ID = golden("write-id-v2")
JVM_APPEND = golden("append-empty-v2")


def test_version_2_records_the_jvm_wrote_decode_and_reencode_byte_for_byte() -> None:
    overwrite = decode_record(JVM_OVERWRITE, WHERE, None, 3)
    assert (overwrite.operation, overwrite.write_id, overwrite.sequence) == (
        "overwrite-partitions",
        "daily-2026-11-20",
        3,
    )
    assert overwrite.scope == ("k=1", "k=2") and overwrite.is_replacing
    assert overwrite.removed == (
        RemovedFile("k=1/part-00000-tid-0000000000000001-1.c000.snappy.parquet", 10),
        RemovedFile("k=2/old.parquet", 7),
    )
    assert (overwrite.removed_files, overwrite.removed_bytes) == (2, 17)
    assert encode_record(overwrite) == JVM_OVERWRITE
    # The same bytes in commits/<txn>.json (derived copy) decode the same.
    assert decode_record(JVM_OVERWRITE, "commits/x.json", TXN) == overwrite
    whole = decode_record(JVM_EMPTY_OVERWRITE, WHERE, TXN, 1)
    assert whole.scope == ("",) and whole.removed == () and whole.operation == "overwrite"
    assert encode_record(whole) == JVM_EMPTY_OVERWRITE
    write_id = decode_record(JVM_WRITE_ID, WHERE, TXN, 12345678901)
    assert write_id.write_id == "a.B_c:d@e=f+g-1" and write_id.added[0].path == 'd=é "q"/\x01\tf'
    assert encode_record(write_id) == JVM_WRITE_ID
    append = decode_record(JVM_APPEND, WHERE, TXN)
    assert append.operation == "append" and not append.is_replacing and append.sequence is None
    assert encode_record(append) == JVM_APPEND


def test_version_1_records_read_as_appends_and_are_rewritten_as_version_2() -> None:
    v1 = JVM_APPEND.replace(b'"version" : 2', b'"version" : 1').replace(
        b',\n  "operation" : "append"', b""
    )
    record = decode_record(v1, WHERE, TXN)
    assert record.operation == "append" and record.write_id is None and record.removed == ()
    assert encode_record(record) == JVM_APPEND
    with pytest.raises(CorruptCommitRecordError, match="version 1 record cannot be a replacing"):
        decode_record(v1, WHERE, None, 1)


def corrupt(data: bytes, sequence: int | None = 3, txn: str | None = None) -> str:
    with pytest.raises(CorruptCommitRecordError) as caught:
        decode_record(data, WHERE, txn, sequence)
    message = str(caught.value)
    assert WHERE in message and "ignoreCorruptRecords" in message
    return message


def test_corrupt_version_2_records_are_refused_naming_the_file() -> None:
    assert "upgrade" in corrupt(JVM_OVERWRITE.replace(b'"version" : 2', b'"version" : 5'))
    assert "truncated" in corrupt(JVM_OVERWRITE[:-40])
    assert "file name says 4" in corrupt(JVM_OVERWRITE, 4)
    assert "'operation' is 'delete'" in corrupt(
        JVM_OVERWRITE.replace(b"overwrite-partitions", b"delete")
    )
    assert "declares 3 removed files but lists 2" in corrupt(
        JVM_OVERWRITE.replace(b'"removedFiles" : 2', b'"removedFiles" : 3')
    )
    assert "'sequence' is missing" in corrupt(
        JVM_OVERWRITE.replace(b'"sequence" : 3', b'"sequence" : "3"')
    )
    assert "sequences start at 1" in corrupt(
        JVM_OVERWRITE.replace(b'"sequence" : 3', b'"sequence" : 0'), None, TXN
    )
    assert "not a valid write id" in corrupt(JVM_OVERWRITE.replace(b"daily-2026", b"daily 2026"))
    no_sequence = JVM_OVERWRITE.replace(b'  "sequence" : 3,\n', b"")
    assert "replaces data, but the record has no 'sequence'" in corrupt(no_sequence, None, TXN)
    append_removing = no_sequence.replace(b"overwrite-partitions", b"append")
    assert "but no 'sequence'" in corrupt(append_removing, None, TXN)
    assert "is not a replacing commit" in corrupt(JVM_APPEND, 1)
    assert "not a transaction id" in corrupt(JVM_OVERWRITE.replace(TXN.encode(), b"NOT-A-TXN"))


@pytest.mark.parametrize("bad", [p for p in unsafe_paths() if p])
@pytest.mark.parametrize("field", ["removed", "scope"])
def test_a_removed_path_or_scope_outside_the_table_is_corrupt(bad: str, field: str) -> None:
    escaped = json.dumps(bad)[1:-1].encode()
    if field == "removed":
        data = JVM_OVERWRITE.replace(b"k=2/old.parquet", escaped)
    else:
        data = JVM_OVERWRITE.replace(b'[ "k=1", "k=2" ]', b'[ "k=1", "' + escaped + b'" ]')
    message = corrupt(data)
    assert "outside its table directory" in message and f"in '{field}'" in message


def test_write_ids_and_replace_record_names() -> None:
    assert check_write_id("daily-2026-11-20") == "daily-2026-11-20"
    assert check_write_id("x" * 200) == "x" * 200
    for bad in ("", "x" * 201, "a b", "a/b", "ü"):
        with pytest.raises(ValueError, match=r"txcommit\.writeId=.* is not a valid write id"):
            check_write_id(bad)
    assert replace_record_name(1) == "00000000000000000001.json"
    assert LogLayout("s3://b/t").replace_record(12) == (
        "s3://b/t/_txcommit/replace/00000000000000000012.json"
    )
    assert sequence_of_record_name("00000000000000000012.json") == 12
    for name in ("00000000000000000000.json", "12.json", "0000000000000000001a.json", "x"):
        assert sequence_of_record_name(name) is None
    with pytest.raises(ValueError):
        replace_record_name(0)


def test_encoding_refuses_inconsistent_records() -> None:
    append = decode_record(JVM_APPEND, WHERE, TXN)
    from dataclasses import replace

    with pytest.raises(ValueError, match="overwrite of .* has no sequence"):
        encode_record(replace(append, operation="overwrite"))
    with pytest.raises(ValueError, match="no sequence"):
        encode_record(replace(append, scope=("k=1",)))


def test_the_schema_a_record_carries_decodes_and_marks_where_history_changed() -> None:
    from txcommit.table.view import schema_changes

    append = decode_record(golden("append-schema-v2"), "commits/x.json", TXN)
    assert append.schema == "id BIGINT NOT NULL, `a b` STRING, s STRUCT<x: INT, y: ARRAY<DOUBLE>>"
    assert decode_record(golden("append-v2"), "commits/x.json", TXN).schema is None

    def rec(txn: str, at: int, schema: str | None) -> CommitRecord:
        return CommitRecord(txn, "t", "j", 1, at, schema=schema)

    ids = [f"mwrb6d3zh3ckkd3{c}" for c in "abcde"]
    records = [
        rec(ids[4], 10, None),  # written before the guard: changes nothing
        rec(ids[3], 20, "id BIGINT"),
        rec(ids[2], 30, "id BIGINT"),
        rec(ids[1], 40, "id BIGINT, extra STRING"),
        rec(ids[0], 50, "id BIGINT, extra STRING"),
    ]
    assert schema_changes(records) == {ids[3]: "id BIGINT", ids[1]: "id BIGINT, extra STRING"}
