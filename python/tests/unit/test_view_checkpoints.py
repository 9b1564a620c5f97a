"""Checkpoints in the view (docs/protocol.md, I20): a view reads the newest usable checkpoint and
only the records after it, shows exactly what the records say, and reads every record again
when the history is asked for. The codec's golden bytes and refusals are in test_vectors.py,
the visible sets of hand-built tables in test_tables.py."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from txcommit.adapters.local import LocalStore
from txcommit.errors import CorruptCheckpointError
from txcommit.table import view as view_module
from txcommit.table.checkpoints import Checkpoint, decode_checkpoint, encode_checkpoint
from txcommit.table.layout import (
    LogLayout,
    checkpoint_name,
    checkpoint_of_name,
    replace_record_name,
)
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, RemovedFile, encode_record
from txcommit.table.view import open_table

from support.layout import record, write

TXNS = [generate_txn(1_800_000_000_000 + i * 1000) for i in range(6)]
A, B, C, D, E, F = TXNS


def files(*paths: str) -> tuple[AddedFile, ...]:
    return tuple(AddedFile(p, 3) for p in paths)


def removed(*paths: str) -> tuple[RemovedFile, ...]:
    return tuple(RemovedFile(p, 3) for p in paths)


def data(prefix: str, txn: str, attempt: int = 1) -> str:
    return data_file_name(prefix, 0, txn, attempt, ".parquet")


PLAIN = "k=1/part-00000-plain.parquet"


def build(table: Path) -> dict[str, str]:
    """A table of three appends (A, B and C, whose k=1 file D replaces), D's partition
    overwrite of k=1 (sequence 1, with its commits/ copy), a fence E and an uncommitted F."""
    paths = {
        "a": data("k=1/", A),
        "a-failed": data("k=1/", A, 2),
        "b": data("k=2/", B),
        "c1": data("k=1/", C),
        "c2": data("k=3/", C),
        "d": data("k=1/", D),
        "e": data("k=2/", E),
        "f": data("k=2/", F),
    }
    for p in [*paths.values(), PLAIN, "k=2/part-00000-plain.parquet"]:
        write(table, p)
    for txn, added in ((A, ["a"]), (B, ["b"]), (C, ["c1", "c2"])):
        write(table, f"_txcommit/commits/{txn}.json", record_bytes(txn, [paths[k] for k in added]))
    overwrite = record(
        D,
        [paths["d"]],
        operation="overwrite-partitions",
        sequence=1,
        scope=("k=1",),
        removed=removed(paths["a"], paths["c1"], PLAIN),
    )
    write(table, f"_txcommit/replace/{replace_record_name(1)}", encode_record(overwrite))
    write(table, f"_txcommit/commits/{D}.json", encode_record(overwrite))
    write(table, f"_txcommit/commits/{E}.json", encode_record(record(E, [], operation="fence")))
    write(table, f"_txcommit/pending/{F}.json", b'{"startedAt": 5}')
    return paths


def record_bytes(txn: str, added: list[str]) -> bytes:
    return encode_record(record(txn, added))


def full_checkpoint(paths: dict[str, str], number: int = 1) -> Checkpoint:
    """What the JVM writes for :func:`build`'s table: every committed txn, through 1."""
    return Checkpoint(
        number=number,
        created_at=10,
        app_id=None,
        writer="test",
        through=1,
        committed={A: (), B: files(paths["b"]), C: files(paths["c2"]), D: files(paths["d"]), E: ()},
        removed=removed(PLAIN),
    )


def put_checkpoint(table: Path, checkpoint: Checkpoint) -> str:
    rel = f"_txcommit/checkpoints/{checkpoint_name(checkpoint.number)}"
    write(table, rel, encode_checkpoint(checkpoint))
    return rel


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys every store reads, from empty process-wide caches."""
    monkeypatch.setattr(view_module, "_records", {})
    monkeypatch.setattr(view_module, "_checkpoints", {})
    monkeypatch.setattr(view_module, "_warned_checkpoints", set())
    seen: list[str] = []
    original = LocalStore.read

    def counting(self: LocalStore, key: str) -> bytes | None:
        seen.append(key)
        return original(self, key)

    monkeypatch.setattr(LocalStore, "read", counting)
    return seen


def cold(reads: list[str]) -> None:
    """Forgets every record and checkpoint read so far, as a new process would."""
    view_module._records.clear()
    view_module._checkpoints.clear()
    reads.clear()


def visible(table: Path, **options: Any) -> set[str]:
    return {f.path for f in open_table(table, **options).visible_files()}


def test_a_checkpoint_of_every_txn_is_the_only_file_a_view_reads(
    tmp_path: Path, reads: list[str]
) -> None:
    paths = build(tmp_path)
    before = visible(tmp_path)
    assert before == {paths["b"], paths["c2"], paths["d"], "k=2/part-00000-plain.parquet"}
    rel = put_checkpoint(tmp_path, full_checkpoint(paths))
    cold(reads)
    view = open_table(tmp_path)
    assert {f.path for f in view.visible_files()} == before
    assert reads == [rel] and view.checkpoint == full_checkpoint(paths)


def test_the_history_reads_every_record_and_is_unchanged(tmp_path: Path, reads: list[str]) -> None:
    paths = build(tmp_path)
    without = open_table(tmp_path, with_markers=True)
    history = without.history()
    assert {r.txn for r in history} == {A, B, C, D, E, F}
    put_checkpoint(tmp_path, full_checkpoint(paths))
    cold(reads)
    with_markers = open_table(tmp_path, with_markers=True)
    assert with_markers.history() == history
    assert with_markers.records == without.records
    assert with_markers.replacements == without.replacements
    assert with_markers.visible_files() == without.visible_files()
    assert sum(k.startswith("_txcommit/commits/") for k in reads) == 5
    # A view opened for its files reads the records it skipped only when the history is asked
    # for, once.
    cold(reads)
    lean = open_table(tmp_path)
    assert len(reads) == 1
    assert {r.txn for r in lean.history()} == {A, B, C, D, E}  # markers were not read
    assert lean.records == without.records and lean.visible_files() == without.visible_files()
    assert len(reads) == 1 + 6
    lean.history()
    assert len(reads) == 7


def test_records_after_the_checkpoint_are_read_and_applied(
    tmp_path: Path, reads: list[str]
) -> None:
    paths = build(tmp_path)
    rel = put_checkpoint(tmp_path, full_checkpoint(paths))
    # After it: an append G, and H's whole-table overwrite (sequence 2) that removes B's file
    # and a file written without txcommit.
    g, h = generate_txn(1_800_000_100_000), generate_txn(1_800_000_200_000)
    g1, h1 = data("k=4/", g), data("k=5/", h)
    write(tmp_path, g1)
    write(tmp_path, h1)
    write(tmp_path, f"_txcommit/commits/{g}.json", record_bytes(g, [g1]))
    overwrite = record(
        h,
        [h1],
        operation="overwrite",
        sequence=2,
        scope=("",),
        removed=removed(paths["b"], "k=2/part-00000-plain.parquet"),
    )
    replace_key = f"_txcommit/replace/{replace_record_name(2)}"
    write(tmp_path, replace_key, encode_record(overwrite))
    reads.clear()
    assert visible(tmp_path) == {paths["c2"], paths["d"], g1, h1}
    assert sorted(reads) == sorted([rel, f"_txcommit/commits/{g}.json", replace_key])
    assert visible(tmp_path, with_markers=True) == {paths["c2"], paths["d"], g1, h1}


def test_a_partition_of_a_checkpointed_table_reads_no_covered_record(
    tmp_path: Path, reads: list[str]
) -> None:
    paths = build(tmp_path)
    rel = put_checkpoint(tmp_path, full_checkpoint(paths))
    reads.clear()
    assert [f.path for f in open_table(tmp_path / "k=1").visible_files()] == [
        paths["d"].rpartition("/")[2]
    ]
    assert reads == [rel]


def test_a_corrupt_newest_checkpoint_is_skipped_with_one_warning(
    tmp_path: Path, reads: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    paths = build(tmp_path)
    put_checkpoint(tmp_path, full_checkpoint(paths, number=1))
    newer = f"_txcommit/checkpoints/{checkpoint_name(2)}"
    write(tmp_path, newer, encode_checkpoint(full_checkpoint(paths, number=2))[:100])
    expected = {paths["b"], paths["c2"], paths["d"], "k=2/part-00000-plain.parquet"}
    with caplog.at_level(logging.WARNING, logger="txcommit.view"):
        view = open_table(tmp_path)
        assert {f.path for f in view.visible_files()} == expected
        assert view.checkpoint is not None and view.checkpoint.number == 1
        assert open_table(tmp_path).checkpoint == view.checkpoint
    warnings = [r for r in caplog.records if r.name == "txcommit.view"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    message = warnings[0].getMessage()
    assert str(tmp_path / newer) in message and "it is not complete JSON" in message
    assert "use the previous checkpoint or the commit records" in message
    # Without any usable checkpoint the view reads the records, as before checkpoints.
    (tmp_path / "_txcommit/checkpoints" / checkpoint_name(1)).unlink()
    view = open_table(tmp_path)
    assert view.checkpoint is None and {f.path for f in view.visible_files()} == expected


def test_a_checkpoint_beyond_the_listed_replace_records_is_not_used(
    tmp_path: Path, reads: list[str]
) -> None:
    paths = build(tmp_path)
    ahead = Checkpoint(2, 10, None, "test", 2, {A: (), B: (), C: (), D: (), E: ()}, ())
    put_checkpoint(tmp_path, ahead)
    view = open_table(tmp_path)
    assert view.checkpoint is None
    assert paths["b"] in {f.path for f in view.visible_files()}
    put_checkpoint(tmp_path, full_checkpoint(paths))
    assert open_table(tmp_path).checkpoint == full_checkpoint(paths)


def test_checkpoint_names_and_layout() -> None:
    assert checkpoint_name(3) == "00000000000000000003.json"
    assert checkpoint_of_name("00000000000000000003.json") == 3
    for bad in ("00000000000000000000.json", "3.json", "00000000000000000003.json.tmp"):
        assert checkpoint_of_name(bad) is None
    with pytest.raises(ValueError):
        checkpoint_name(0)
    layout = LogLayout("s3://b/t")
    assert layout.checkpoints_dir == "s3://b/t/_txcommit/checkpoints"
    assert layout.checkpoint(3) == "s3://b/t/_txcommit/checkpoints/00000000000000000003.json"


def test_the_encoder_sorts_as_the_jvm_and_omits_an_absent_app_id() -> None:
    # Java's String order (UTF-16 code units) puts a character beyond U+FFFF before U+FFFD.
    high, low = "k=\U0001f600/a.parquet", "k=\ufffd/a.parquet"
    committed = {B: files(low, high), A: ()}
    checkpoint = Checkpoint(1, 5, None, "w", 0, committed, removed(low, high))
    text = encode_checkpoint(checkpoint).decode()
    assert '"appId"' not in text
    assert text.index(A) < text.index(B)
    assert text.index(high) < text.index(low) and text.rindex(high) < text.rindex(low)
    decoded = decode_checkpoint(text.encode(), "c", 1)
    assert decoded.committed == {B: files(high, low), A: ()}
    assert decoded.removed == removed(high, low)


def test_the_decoder_refuses_a_negative_through() -> None:
    checkpoint = Checkpoint(1, 5, None, "w", 0, {}, ())
    data = encode_checkpoint(checkpoint).replace(b'"through" : 0', b'"through" : -1')
    with pytest.raises(CorruptCheckpointError, match="field 'through' is -1"):
        decode_checkpoint(data, "c", 1)
