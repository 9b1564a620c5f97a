"""The Python side of the golden vectors in ``conformance/vectors/`` (see its README.md):
the same files the JVM's ScalaTest suites load, so both codecs and rule sets are held to the
same bytes and answers."""

from __future__ import annotations

from typing import Any

import pytest

from txcommit import paths
from txcommit.errors import (
    CorruptCheckpointError,
    CorruptCommitRecordError,
    CorruptDecisionError,
    CorruptTablePropertiesError,
)
from txcommit.table.checkpoints import decode_checkpoint, encode_checkpoint
from txcommit.table.groups import Decision, decode_decision, encode_decision
from txcommit.table.names import data_file_name, generate_txn, is_valid_txn, txn_of
from txcommit.table.properties import TableProperties, decode_properties, encode_properties
from txcommit.table.records import decode_record, encode_record
from txcommit.testing.vectors import load, vectors_root

from support.vectors import logical, logical_checkpoint, logical_decision

VECTORS = vectors_root()

RECORDS = load("records.json")["records"]
CORRUPT = load("corrupt-records.json")["cases"]
PATHS = load("paths.json")["cases"]
TXN_IDS = load("txn-ids.json")
FILE_NAMES = load("file-names.json")
CHECKPOINTS = load("checkpoints.json")
PROPERTIES = load("properties.json")


@pytest.mark.parametrize("entry", RECORDS, ids=[e["file"] for e in RECORDS])
def test_a_golden_record_decodes_to_its_logical_record(entry: dict[str, Any]) -> None:
    data = (VECTORS / entry["file"]).read_bytes()
    expected = logical(entry["record"])
    assert decode_record(data, entry["file"], entry["txn"]) == expected
    if entry["sequence"] is not None:
        assert decode_record(data, entry["file"], None, entry["sequence"]) == expected


@pytest.mark.parametrize("entry", RECORDS, ids=[e["file"] for e in RECORDS])
def test_a_golden_record_is_what_the_encoder_writes(entry: dict[str, Any]) -> None:
    golden = entry.get("encodesAs") or entry["file"]
    assert entry["reencodes"] or entry.get("encodesAs")
    assert encode_record(logical(entry["record"])) == (VECTORS / golden).read_bytes()


@pytest.mark.parametrize("case", CORRUPT, ids=[c["name"] for c in CORRUPT])
def test_a_corrupt_record_is_refused_with_the_shared_message(case: dict[str, Any]) -> None:
    data = (VECTORS / case["base"]).read_bytes()
    mutation = case["mutation"]
    if "keepBytes" in mutation:
        data = data[: mutation["keepBytes"]]
    elif "content" in mutation:
        data = mutation["content"].encode()
    elif "replace" in mutation:
        old, new = (s.encode() for s in mutation["replace"])
        assert old in data
        data = data.replace(old, new)
    where = "/t/_txcommit/r.json"
    txn = None if case["sequence"] is not None else case["txn"]
    with pytest.raises(CorruptCommitRecordError) as caught:
        decode_record(data, where, txn, case["sequence"])
    assert case["message"] in str(caught.value) and where in str(caught.value)


@pytest.mark.parametrize("case", CHECKPOINTS["cases"], ids=lambda c: c["file"])
def test_a_golden_checkpoint_decodes_and_reencodes_exactly(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    expected = logical_checkpoint(case["checkpoint"])
    assert expected.number == case["number"]
    assert decode_checkpoint(data, case["file"], case["number"]) == expected
    assert encode_checkpoint(expected) == data


@pytest.mark.parametrize("case", CHECKPOINTS["corrupt"], ids=lambda c: c["about"])
def test_a_corrupt_checkpoint_is_refused_with_the_shared_message(case: dict[str, Any]) -> None:
    data = (VECTORS / case["base"]).read_bytes()
    if "keepBytes" in case:
        data = data[: case["keepBytes"]]
    elif "content" in case:
        data = case["content"].encode()
    elif "replace" in case:
        old, new = (s.encode() for s in case["replace"])
        assert old in data
        data = data.replace(old, new)
    where = "/t/_txcommit/checkpoints/c.json"
    with pytest.raises(CorruptCheckpointError) as caught:
        decode_checkpoint(data, where, case["number"])
    message = str(caught.value)
    assert case["message"] in message and where in message, message
    assert message.startswith(f"txcommit: checkpoint {where} is corrupt: ")


def _mutated(case: dict[str, Any]) -> bytes:
    data = (VECTORS / case["base"]).read_bytes()
    if "keepBytes" in case:
        return data[: case["keepBytes"]]
    if "content" in case:
        return bytes(case["content"].encode())
    if "replace" in case:
        old, new = (s.encode() for s in case["replace"])
        assert old in data
        return data.replace(old, new)
    return data


@pytest.mark.parametrize("case", PROPERTIES["cases"], ids=lambda c: c["file"])
def test_golden_table_properties_decode_and_reencode_exactly(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    p = case["properties"]
    expected = TableProperties(p["number"], p["values"], p["setAt"], p["appId"], p["writer"])
    assert decode_properties(data, case["file"], case["number"]) == expected
    assert encode_properties(expected) == data


@pytest.mark.parametrize("case", PROPERTIES["corrupt"], ids=lambda c: c["about"])
def test_corrupt_table_properties_are_refused_with_the_shared_message(case: dict[str, Any]) -> None:
    where = "/t/_txcommit/properties/p.json"
    with pytest.raises(CorruptTablePropertiesError) as caught:
        decode_properties(_mutated(case), where, case["number"])
    message = str(caught.value)
    assert case["message"] in message, message
    assert message.startswith(f"txcommit: table properties {where} are corrupt: ")


@pytest.mark.parametrize("case", PATHS, ids=[repr(c["path"]) for c in PATHS])
def test_relative_paths_are_judged_as_the_vectors_say(case: dict[str, Any]) -> None:
    assert paths.unsafe_relative_path(case["path"]) == case["unsafe"]


def test_txn_ids_match_the_vectors() -> None:
    for v in TXN_IDS["generatedPrefix"]:
        assert generate_txn(v["millis"])[:8] == v["prefix"]
    assert all(is_valid_txn(t) for t in TXN_IDS["valid"])
    assert not any(is_valid_txn(t) for t in TXN_IDS["invalid"])


def test_data_file_names_match_the_vectors() -> None:
    for v in FILE_NAMES["build"]:
        built = data_file_name(v["prefix"], v["split"], v["txn"], v["attempt"], v["suffix"])
        assert built == v["name"]
    for v in FILE_NAMES["txnOf"]:
        assert txn_of(v["name"]) == v["txn"], v["name"]


DECISIONS = load("decisions.json")


def _decision(n: dict[str, Any]) -> Decision:
    return logical_decision(n)


@pytest.mark.parametrize("case", DECISIONS["cases"], ids=[c["file"] for c in DECISIONS["cases"]])
def test_a_golden_decision_decodes_to_its_logical_decision(case: dict[str, Any]) -> None:
    data = (VECTORS / case["file"]).read_bytes()
    assert decode_decision(data, case["file"], case["group"]) == _decision(case["decision"])
    assert encode_decision(_decision(case["decision"])) == data


@pytest.mark.parametrize(
    "case", DECISIONS["corrupt"], ids=[c["name"] for c in DECISIONS["corrupt"]]
)
def test_a_corrupt_decision_is_refused_with_the_shared_message(case: dict[str, Any]) -> None:
    where = "/t/_txcommit/groups/g.json"
    with pytest.raises(CorruptDecisionError) as caught:
        decode_decision(_mutated({"base": case["base"], **case["mutation"]}), where, case["group"])
    assert case["message"] in str(caught.value) and where in str(caught.value)


def test_a_committed_decision_commits_exactly_the_txns_it_names() -> None:
    d = _decision(DECISIONS["cases"][0]["decision"])
    assert d.commits("mwrb6d3zh3ckkd3t") and d.commits("mwrb6d3zh3ckkd3u")
    assert not d.commits("mwrb6d3zh3ckkd3q")
