"""Tables synthesised object by object for the read benchmark (``txcommit bench``).

Writing 10,000 transactions through Spark takes hours on the modelled S3; what a reader meets
is only objects, so the benchmark writes them directly: for a txcommit table, per transaction
one data file named like the JVM names it (``data_file_name``, carrying the txn id) and its
commit record ``_txcommit/commits/<txn>.json`` encoded with the project's own record encoder
(``encode_record``, byte for byte what ``RecordCodec.encode`` writes); for a plain Hive-style
table, one file per ``k=<i>`` partition directory and no ``_txcommit/``. A table txcommit
creates is log-only (docs/protocol.md, I32): its log starts with checkpoint 1, covering nothing
and saying so (``log_only``); one txcommit adopted has none. Every data file holds the bytes of
one real Parquet file written through Spark, so schema inference works.

Pure functions: they return ``(key, bytes)`` pairs; uploading them is the caller's business.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from txcommit.paths import join
from txcommit.table.checkpoints import READS_LOG, Checkpoint, encode_checkpoint
from txcommit.table.layout import LogLayout, checkpoint_name
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, encode_record

#: ``writer`` and ``appId`` of synthesised records: no JVM wrote them, and they say so.
SYNTH_WRITER = "txcommit-bench-synth"
SYNTH_APP_ID = "txcommit-bench-synth"
#: Suffix of the data files, as Spark's Parquet writer names them.
PARQUET_SUFFIX = "-c000.snappy.parquet"
#: Synthesised transactions are this far apart (their ids are time-ordered like real ones).
TXN_SPACING_MS = 1000


def log_only_checkpoint(table: str, created_ms: int) -> tuple[str, bytes]:
    """Checkpoint 1 of a table txcommit creates: it covers nothing and says the table is
    log-only, as the first write's job setup writes it (``TableReads.createLogOnly``)."""
    first = Checkpoint(1, created_ms, None, SYNTH_WRITER, 0, {}, schema_known=True, reads=READS_LOG)
    return join(table, f"_txcommit/checkpoints/{checkpoint_name(1)}"), encode_checkpoint(first)


def txcommit_table(
    table: str, txns: int, body: bytes, start_ms: int, *, seed: str = "", log_only: bool = True
) -> Iterator[tuple[str, bytes]]:
    """The objects of a txcommit table of ``txns`` committed appends under the store key
    ``table``: per transaction its data file (``body``) then its commit record. Transaction i
    started at ``start_ms + i * TXN_SPACING_MS`` and committed half a second later, so
    ``start_ms`` in the past puts every commit before any read that follows. ``seed`` makes the
    ids of two tables synthesised with the same times differ. ``log_only``: the table txcommit
    created (its checkpoint 1 first), else one it adopted (read by listing)."""
    layout = LogLayout(table)
    if log_only:
        yield log_only_checkpoint(table, start_ms - TXN_SPACING_MS)
    for i in range(txns):
        started = start_ms + i * TXN_SPACING_MS
        txn = _txn(started, f"{seed}/{table}/{i}")
        name = data_file_name("", 0, txn, i, PARQUET_SUFFIX)
        record = _record(txn, f"synth-{i:06d}", started, (AddedFile(name, len(body)),))
        yield join(table, name), body
        yield layout.commit_record(txn), encode_record(record)


def partitioned_table(
    table: str, dirs: int, body: bytes, start_ms: int, *, seed: str = ""
) -> Iterator[tuple[str, bytes]]:
    """The objects of a log-only txcommit table written by one partitioned write: one file in
    each of ``k=0`` .. ``k=<dirs-1>``, one commit record naming them all."""
    txn = _txn(start_ms, f"{seed}/{table}")
    names = [f"k={k}/" + data_file_name("", 0, txn, k, PARQUET_SUFFIX) for k in range(dirs)]
    yield log_only_checkpoint(table, start_ms - TXN_SPACING_MS)
    for name in names:
        yield join(table, name), body
    record = _record(
        txn, "synth-partitioned", start_ms, tuple(AddedFile(n, len(body)) for n in names)
    )
    yield LogLayout(table).commit_record(txn), encode_record(record)


def big_table(
    table: str,
    commits: int,
    files_per_commit: int,
    dirs: int,
    size: int,
    start_ms: int,
    *,
    seed: str = "",
) -> Iterator[tuple[str, list[str], bytes]]:
    """The log of a log-only txcommit table of ``commits`` appends of ``files_per_commit`` files
    each, spread over the partition directories ``p=0`` .. ``p=<dirs-1>`` (each task of an
    append writes one file in each): per append its commit record's key, the names of its data
    files and the record's bytes. Checkpoint 1 (the table's creation) comes first, with no
    names. Every file is ``size`` bytes in its record (a plan takes sizes from the log). Only the
    log: which data files to upload is the caller's business."""
    key, data = log_only_checkpoint(table, start_ms - TXN_SPACING_MS)
    yield key, [], data
    layout = LogLayout(table)
    tasks = max(1, files_per_commit // dirs)
    for i in range(commits):
        started = start_ms + i * TXN_SPACING_MS
        txn = _txn(started, f"{seed}/{table}/{i}")
        names = [
            f"p={k}/" + data_file_name("", task, txn, 0, PARQUET_SUFFIX)
            for task in range(tasks)
            for k in range(dirs)
        ][:files_per_commit]
        record = _record(txn, f"synth-{i:06d}", started, tuple(AddedFile(n, size) for n in names))
        yield layout.commit_record(txn), names, encode_record(record)


def plain_table(table: str, dirs: int, body: bytes) -> Iterator[tuple[str, bytes]]:
    """The objects of a Hive-style table not written by txcommit: one Parquet file in each of
    ``k=0`` .. ``k=<dirs-1>``, named like Spark's default committer names them (no txn id)."""
    for k in range(dirs):
        yield join(table, f"k={k}/part-00000-{_uuid(table, k)}{PARQUET_SUFFIX}"), body


def _record(txn: str, job_id: str, started: int, added: tuple[AddedFile, ...]) -> CommitRecord:
    """The record of a synthesised append that started at ``started`` and committed half a
    second later."""
    return CommitRecord(
        txn=txn,
        token=hashlib.sha256(f"token/{txn}".encode()).hexdigest()[:32],
        job_id=job_id,
        started_at=started,
        committed_at=started + TXN_SPACING_MS // 2,
        added=added,
        app_id=SYNTH_APP_ID,
        writer=SYNTH_WRITER,
    )


def _txn(millis: int, salt: str) -> str:
    """A transaction id of the time ``millis`` (8 base-36 digits, like ``generate_txn``) with a
    random part derived from ``salt``: reproducible, distinct per table and transaction."""
    time_part = generate_txn(millis)[:8]
    digest = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:8], "big")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    rand = ""
    for _ in range(8):
        digest, r = divmod(digest, 36)
        rand += digits[r]
    return time_part + rand


def _uuid(table: str, k: int) -> str:
    h = hashlib.sha256(f"{table}/{k}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
