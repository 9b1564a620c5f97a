"""Structured Streaming on txcommit, end to end: a stateful query whose Connect server is
killed with SIGKILL at random moments and restarted, on the local file system and on S3
(moto over HTTP, Hadoop's S3A). Checkpoint files go through txcommit's checkpoint file
manager, the output through txcommit's streaming sink protocol.

What a user relies on, checked by content: every window of the rate source's values is in the
output exactly once (the rate source numbers rows 0, 1, 2, ... so a window's count must equal
its max - min + 1, and consecutive windows must continue where the previous one ended); the
checkpoint never holds a partial or duplicate log file; the query restarts every time without
repair; and txcommit's readers (commit records) and Spark's `_spark_metadata` agree.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.devkit.testkit import store_test_kits

from support.races import CommitWatch, Span, assert_overlaps, clock, note
from support.scale import SOAK
from support.servers import (
    ServerProcess,
    new_session,
    server_for,
    server_with_s3,
)
from support.streams import configure
from support.tables import TableRef, make_table_of, txn_of

ROWS_PER_SECOND = 40
#: Random kills after the halt (CI: one; the soak, .ci/soak, sets ten).
KILLS = int(os.environ.get("TXCOMMIT_TEST_STREAMING_KILLS", "1"))
HALT = "streaming.beforeSinkLog"
ADOPTED = "was committed before as txn"
# CI runs local, S3 with the `s3` adapter and HDFS on one server (GCS and Azure on their own:
# STREAM_SERVERS); `s3-multipart` passes too (set the variable).
STREAM_STORES = os.environ.get("TXCOMMIT_TEST_STREAMING_STORES", "local,s3,hdfs").split(",")


def start_query(spark, ckpt: TableRef, out: TableRef):
    rate = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", ROWS_PER_SECOND)
        .option("numPartitions", 2)
        .load()
    )
    windows = (
        rate.withWatermark("timestamp", "1 second")
        .groupBy(F.window("timestamp", "2 seconds"))
        .agg(
            F.count("*").alias("n"),
            F.min("value").alias("lo"),
            F.max("value").alias("hi"),
        )
        .select(F.col("window.start").alias("start"), "n", "lo", "hi")
    )
    return (
        windows.writeStream.format("parquet")
        .outputMode("append")
        .option("checkpointLocation", ckpt.url)
        .option("path", out.url)
        .trigger(processingTime="500 milliseconds")
        .start()
    )


def wait_for_batches(query, after: int, where: str, timeout: float = 120) -> int:
    """Waits until the query has finished a batch numbered above `after`; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        progress = query.lastProgress
        if progress and progress["batchId"] > after:
            return int(progress["batchId"])
        exc = query.exception()
        assert exc is None, f"{where}: the query failed: {exc}"
        time.sleep(0.3)
    raise AssertionError(f"{where}: no batch after {after} within {timeout} s: {query.status}")


def wait_for_windows(spark, out: TableRef, rows: int, where: str, timeout: float = 120) -> None:
    """Waits until the windows in the output (Spark's view) cover the rate source's first
    `rows` values: a window is emitted only once the watermark passed its end, so a query that
    ran a batch or two may have emitted almost nothing yet."""
    deadline = time.monotonic() + timeout
    covered = 0
    while time.monotonic() < deadline:
        try:
            got = spark.read.parquet(out.url).agg(F.max("hi").alias("hi")).collect()[0]["hi"]
        except Exception:
            got = None
        covered = 0 if got is None else got + 1
        if covered >= rows:
            return
        time.sleep(1)
    raise AssertionError(f"{where}: the output covers {covered} values, not {rows}, in {timeout} s")


def check_checkpoint(ckpt: TableRef) -> tuple[int, int]:
    """Every visible offset and commit log file is complete; returns (last offset, last commit)."""
    names = ckpt.objects()
    logs: dict[str, dict[int, bytes]] = {"offsets": {}, "commits": {}}
    for rel in names:
        parts = rel.split("/")
        if len(parts) == 2 and parts[0] in logs and parts[1] and not parts[1].startswith("."):
            assert parts[1].isdigit(), f"unexpected file in the {parts[0]} log: {rel}"
            data = ckpt.read(rel)
            assert data, f"{rel} is empty"
            logs[parts[0]][int(parts[1])] = data
        if parts[-1] and not parts[-1].startswith("."):
            assert ckpt.read(rel) is not None
    for batch, data in logs["commits"].items():
        version, body = data.decode().split("\n", 1)
        assert version == "v1" and json.loads(body), f"commits/{batch} is not a whole commit"
        assert batch in logs["offsets"], f"commits/{batch} without offsets/{batch}"
    for batch, data in logs["offsets"].items():
        lines = data.decode().split("\n")
        assert lines[0] == "v1" and len(lines) >= 3, f"offsets/{batch} is not whole"
        json.loads(lines[1])
    offsets, commits = max(logs["offsets"], default=-1), max(logs["commits"], default=-1)
    assert offsets - commits <= 1, f"offsets run {offsets - commits} batches ahead of commits"
    assert sorted(logs["offsets"]) == list(range(len(logs["offsets"]))), "no gap in offsets"
    if ckpt.store == "s3":
        # Small files go in one PUT at close: a crash leaves no upload behind. (On
        # s3-multipart a file in flight at the kill is an open upload: invisible, and aborted
        # by a bucket lifecycle rule or VACUUM.)
        assert not ckpt.open_uploads(), "no checkpoint upload is left open"
    return offsets, commits


def check_windows(rows: list[tuple[int, int, int]], where: str) -> int:
    """(n, lo, hi) of every emitted window: exactly once, no gap. Returns the rows covered."""
    rows = sorted(rows, key=lambda r: r[1])
    assert rows, f"{where}: no window was emitted"
    assert rows[0][1] == 0, f"{where}: the first window must start at value 0: {rows[:3]}"
    for (n, lo, hi), nxt in zip(rows, [*rows[1:], None], strict=True):
        assert n == hi - lo + 1, f"{where}: window [{lo}, {hi}] counted {n} rows: {rows}"
        if nxt is not None:
            assert nxt[1] == hi + 1, f"{where}: window after [{lo}, {hi}] starts at {nxt[1]}"
    return rows[-1][2] + 1


def txcommit_view(out: TableRef) -> list[str]:
    """What txcommit's readers show: files named with a txn are visible iff its record names
    them (tables.py reads the records raw, independent of the plugin)."""
    committed = out.committed_paths()
    return [f for f in out.data_files() if txn_of(f) is None or f in committed]


@dataclass
class Stream:
    """One store's query: its checkpoint, its output and its last finished batch."""

    store: str
    ckpt: TableRef
    out: TableRef
    last_batch: int = -1


#: Which server runs which stores' queries: a `--store s3` server serves local, S3 and HDFS
#: tables; a store whose test kit needs a server of its own (GCS, Azure) gets one.
STREAM_SERVERS = {
    "s3": [s for s in STREAM_STORES if not store_test_kits()[s].own_server],
    **{s: [s] for s, kit in store_test_kits().items() if kit.own_server},
}
#: Random kills that must have cut a micro-batch short (its offsets written, its commit not):
#: the random rounds go on (at most two more than KILLS) until they have.
CUT_SHORT = 1


def stream_server(kind: str, workdir: Path, request: pytest.FixtureRequest) -> ServerProcess:
    kit = store_test_kits()[kind]
    if kit.own_server:
        emulator = request.getfixturevalue(kit.fixture) if kit.fixture else None
        return server_for(kind, workdir, emulator)
    return server_with_s3(workdir, request.getfixturevalue("local_s3"))


@pytest.mark.parametrize(
    "kind", list(STREAM_SERVERS), ids=["+".join(s) for s in STREAM_SERVERS.values()]
)
def test_stateful_queries_killed_at_random_are_exactly_once(
    kind: str, workdir: Path, request: pytest.FixtureRequest
):
    """One server runs a query on each of its stores; it is SIGKILLed at a random moment KILLS
    times (more until a kill cut a micro-batch short) and restarted; every restart resumes the
    queries from their checkpoints."""
    seed = int(os.environ.get("TXCOMMIT_TEST_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    streams = []
    for store in STREAM_SERVERS[kind]:
        base = make_table_of(store, workdir, request)
        streams.append(Stream(store, base.child("checkpoint"), base.child("out")))
    # Round 0 ends at a named point (the sink's record created, `_spark_metadata` not yet
    # written), the next KILLS rounds (or more, until a kill cut a batch short) at random
    # moments; the last round stops the queries cleanly. GCS and Azure skip round 0 in CI, for
    # time (the halt replays the batch through the same stages on every store).
    halt = kind == "s3" or SOAK
    kills = cut_short = 0
    round_ = -1 if halt else 0
    while True:
        round_ += 1
        last = round_ > 0 and kills >= KILLS and (cut_short >= CUT_SHORT or kills >= KILLS + 2)
        server = stream_server(kind, workdir / f"stream-{kind}-{round_}", request)
        server.start()
        try:
            sessions = [new_session(server.url) for _ in streams]
            for spark, st in zip(sessions, streams, strict=True):
                configure(spark, st.store)
            queries = [
                start_query(sp, st.ckpt, st.out) for sp, st in zip(sessions, streams, strict=True)
            ]
            for query, st in zip(queries, streams, strict=True):
                # The restarted query makes progress from its checkpoint, with no repair.
                st.last_batch = wait_for_batches(query, st.last_batch, f"seed={seed} {st.store}")
            if round_ == 1 and halt:
                adopted = [line for line in server_log(server) if ADOPTED in line]
                assert adopted, "the batch cut short at the halt point was replayed and adopted"
            if round_ == 0:
                # Restart the queries, the last with the halt point set (a running query keeps
                # the confs it started with): its first batch to commit halts the server. Only
                # the last: a query started after the halt would find no server.
                for query in queries:
                    query.stop()
                sessions[-1].conf.set("spark.txcommit.test.haltAt", HALT)
                for spark, st in zip(sessions, streams, strict=True):
                    start_query(spark, st.ckpt, st.out)
                server.wait_dead(timeout=180)
            elif not last:
                time.sleep(rng.uniform(0.2, 3.0))
                server.kill_jvm()
                server.wait_dead()
                kills += 1
            else:
                for query, st in zip(queries, streams, strict=True):
                    st.last_batch = wait_for_batches(query, st.last_batch + 2, st.store)
                for spark, st in zip(sessions, streams, strict=True):
                    wait_for_windows(spark, st.out, ROWS_PER_SECOND * 2, st.store)
                for query in queries:
                    query.stop()
                for spark, st in zip(sessions, streams, strict=True):
                    verify_output(spark, st.ckpt, st.out, f"seed={seed} {st.store}")
                    spark.stop()
                if kind == "s3":
                    no_copies(request.getfixturevalue("local_s3"), streams)
                note("random kills that cut a micro-batch short", cut_short, CUT_SHORT, kills, 0)
                assert cut_short >= CUT_SHORT, (
                    f"seed={seed}: {cut_short} of {kills} random kills cut a micro-batch short "
                    f"(its offsets written, its commit not), fewer than {CUT_SHORT}: this test "
                    "proved nothing about a kill during a batch"
                )
                return
            for spark in sessions:
                txcommit.abandon(spark)
            # A batch in flight at the kill left its offsets without its commit.
            in_flight = [
                offsets > commits
                for offsets, commits in map(check_checkpoint, (st.ckpt for st in streams))
            ]
            if round_ > 0 and any(in_flight):
                cut_short += 1
        finally:
            server.stop()


def server_log(server: ServerProcess) -> list[str]:
    """The Spark log of a `txcommit server` (it prints where it writes it)."""
    ready = next(line for line in server.output if "(log: " in line)
    path = ready.rsplit("(log: ", 1)[1].rstrip().rstrip(")")
    return Path(path).read_text(errors="replace").splitlines()


def no_copies(local_s3, streams: list[Stream]) -> None:
    """On S3 no checkpoint or sink-log file was ever renamed (copied) into place: it was PUT
    (or its upload completed) exactly where it belongs."""
    for st in streams:
        if st.store not in ("s3", "s3-multipart"):
            continue
        prefixes = (st.ckpt.prefix + "/", st.out.prefix + "/_spark_metadata/")
        ops = [
            e["op"]
            for e in local_s3.front.log.since(0)
            if e["bucket"] == st.ckpt.bucket and e["key"].startswith(prefixes)
        ]
        assert "PUT" in ops and "COPY" not in ops, sorted(set(ops))


def verify_output(spark, ckpt: TableRef, out: TableRef, where: str) -> None:
    check_checkpoint(ckpt)
    # Spark's view: _spark_metadata (the sink log).
    spark_rows = [(r["n"], r["lo"], r["hi"]) for r in spark.read.parquet(out.url).collect()]
    covered = check_windows(spark_rows, f"{where}: Spark (_spark_metadata)")
    assert covered >= ROWS_PER_SECOND * 2, "the query ran a few windows"
    # txcommit's view: commit records, read raw. It holds every file of Spark's view, and at
    # most the batch that the final stop cut short between its record and its sink-log entry
    # (the next start of the query would adopt it into _spark_metadata, as after a crash).
    visible = {v.rsplit("/", 1)[-1] for v in txcommit_view(out)}
    listed = {p.rsplit("/", 1)[-1] for p in spark.read.parquet(out.url).inputFiles()}
    assert listed <= visible, f"{where}: files in _spark_metadata but not committed"
    extra_txns = {txn_of(name) for name in visible - listed}
    assert len(extra_txns) <= 1, f"{where}: committed batches missing from _spark_metadata"
    if extra_txns:
        # The sink log names a batch <n>, or <n>.compact every 10th batch (Spark's compaction).
        sink_batches = [
            int(name.removesuffix(".compact"))
            for name in (
                k.rsplit("/", 1)[-1] for k in out.objects() if k.startswith("_spark_metadata/")
            )
            if name.removesuffix(".compact").isdigit()
        ]
        # Batch claims: _txcommit/streaming/<batch>/<k>.json, each naming its txn.
        claimed = {
            json.loads(out.read(k) or b"{}").get("txn"): int(k.split("/")[2].removesuffix(".json"))
            for k in out.objects()
            if k.startswith("_txcommit/streaming/")
        }
        batch = claimed.get(extra_txns.pop())
        assert batch == max(sink_batches) + 1, (where, batch, sink_batches)
    # Spark reading the directory through the txcommit filter (not through _spark_metadata).
    spark.conf.set("spark.sql.streaming.fileStreamSink.ignoreMetadata", "true")
    filtered = [(r["n"], r["lo"], r["hi"]) for r in spark.read.parquet(out.url).collect()]
    check_windows(filtered, f"{where}: Spark with the txcommit filter")
    assert set(spark_rows) <= set(filtered), f"{where}: the filtered view holds Spark's"


#: A stalled driver on every store (every store with a test kit).
ZOMBIE_STORES = sorted(store_test_kits())


@pytest.mark.parametrize("any_table", ZOMBIE_STORES, indirect=True)
def test_a_stalled_driver_and_its_replacement_commit_each_batch_once(
    any_table: TableRef, server_of, tmp_path: Path
):
    """Driver A stalls between claiming batch 0 and creating its record (a long GC, a frozen
    VM); driver B starts the same query from the same checkpoint and runs batch 0 again. B must
    take the batch over and commit it; A, when it wakes, must fail instead of committing the
    batch a second time, and every row is in the output exactly once in both views."""
    store = any_table.store
    ckpt, out = any_table.child("checkpoint"), any_table.child("out")
    a = new_session(server_of(store, other=True).url)
    b = None
    wake_a = tmp_path / "wake-driver-a"
    try:
        configure(a, store)
        a.conf.set("spark.txcommit.test.pauseAt", "streaming.beforeRecord")
        # A sleeps until B has committed (the file below), however long B takes to get there.
        a.conf.set("spark.txcommit.test.pauseMs", "300000")
        a.conf.set("spark.txcommit.test.resumeWhen", str(wake_a))
        qa = start_query(a, ckpt, out)
        deadline = time.monotonic() + 120
        while not any(k.startswith("_txcommit/streaming/0/") for k in out.objects()):
            assert time.monotonic() < deadline, f"driver A never claimed batch 0: {qa.status}"
            time.sleep(0.3)
        a_claimed = clock()
        b = new_session(server_of(store).url, one_clock=True)
        configure(b, store)
        with CommitWatch(out) as watch:
            qb = start_query(b, ckpt, out)
            wait_for_batches(qb, 1, f"{store}: driver B")
        assert qa.isActive and qa.exception() is None, "driver A stalled until now"
        # A's batch 0 began before B's commits and is still running: B committed while A stalled.
        assert_overlaps([Span(a_claimed, clock())], watch.points(), 1, "driver A's batch 0")
        wake_a.touch()
        deadline = time.monotonic() + 120
        while qa.exception() is None and qa.isActive:
            assert time.monotonic() < deadline, "driver A never woke up"
            time.sleep(0.5)
        assert "another driver of the same streaming query" in str(qa.exception())
        wait_for_batches(qb, int(qb.lastProgress["batchId"]) + 1, f"{store}: driver B")
        wait_for_windows(b, out, ROWS_PER_SECOND * 2, f"{store}: driver B")
        qb.stop()
        verify_output(b, ckpt, out, f"{store}: after a stalled driver")
    finally:
        wake_a.touch()
        for session in (a, b):
            if session is not None:
                session.stop()
