"""The protocol under injected faults, end to end: real Connect servers, real JVM deaths.

Each test asserts what a reader relies on: every row of a committed job exactly once, not a
single row of a job that did not commit, and the previous rows intact. Every test runs on each
store: the local file system, and S3 (moto over HTTP, reached by Hadoop's S3A) with the
`s3` (conditional put) and `s3-multipart` adapters; the task and job failures and the driver
killed on either side of the commit point also on HDFS (a real NameNode and DataNode), GCS
(fake-gcs-server) and Azure Blob (Azurite, reached by Hadoop's ABFS).
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from txcommit.adapters.declarations import declaration_named
from txcommit.conformance.protocol import (
    KEEP_JUNK,
    VISIBLE_AFTER_HALT,
    fail_at,
    fail_first_attempt_at,
)
from txcommit.devkit.testkit import store_test_kits

from support.races import Span, assert_overlaps, note, point, spanning
from support.scale import SOAK
from support.servers import (
    crashing_server,
    new_session,
    rows_per_b,
    run_until_the_server_dies,
    running,
)
from support.tables import STORES, TableRef, replace_records, txn_of
from support.waiting import wait_for

# Shared with the conformance kit's Level 2 (txcommit.conformance.protocol), which runs these
# scenarios on any store: leave the files of failed attempts on disk (KEEP_JUNK), and which
# fault points leave the interrupted job visible (VISIBLE_AFTER_HALT).


#: Server kills of the random-kill soak: 2 in CI; a longer soak is one variable away
#: (`TXCOMMIT_TEST_KILL_ROUNDS=20 pytest python/tests/e2e/test_faults.py -k random_kills`).
KILL_ROUNDS = int(os.environ.get("TXCOMMIT_TEST_KILL_ROUNDS", "2"))


def raw_count(spark, table: TableRef) -> int:
    spark.conf.set("spark.txcommit.read.filter", "false")
    try:
        return spark.read.parquet(table.url).count()
    finally:
        spark.conf.set("spark.txcommit.read.filter", "true")


#: The stores of the task and job failures: every store with a test kit (the registry's).
KITS = store_test_kits()


def stages_data(store: str) -> bool:
    """Whether tasks stage data that the job commit publishes (multipart uploads completed at
    commit: s3-multipart)."""
    return declaration_named(store).primitive == "multipart-complete"


FAULT_STORES = [*STORES, *sorted(set(KITS) - set(STORES))]


#: The stores where a task fault runs in every variant: the local file system and the S3 adapter
#: with the most states (data staged as pending uploads); the soak adds the `s3` adapter.
EVERY_VARIANT_STORES = STORES if SOAK else ("local", "s3-multipart")


def on_stores(variants: list[str], one: str) -> list[tuple[str, str]]:
    """Every variant on EVERY_VARIANT_STORES; on the other stores the one whose files the store
    must handle (the variants differ in Spark's scheduling, not in store calls)."""
    return [
        (s, v) for s in FAULT_STORES for v in (variants if s in EVERY_VARIANT_STORES else [one])
    ]


@pytest.mark.parametrize(
    ("any_table", "where"), on_stores(["first-row", "last-row"], "last-row"), indirect=["any_table"]
)
def test_task_retried_after_failure_leaves_each_row_once(
    store_spark, any_table: TableRef, where: str
):
    """A task fails once and succeeds on retry; with `last-row` the failed attempt wrote (and
    left behind) almost its whole output: two attempts of one task both wrote the data."""
    table, spark = any_table, store_spark
    table.prepare(spark)
    for k, v in KEEP_JUNK.items():
        spark.conf.set(k, v)
    n, parts = 8000, 4
    # Small UDF batches, so the writer has most of the partition when the last row fails.
    spark.conf.set("spark.sql.execution.python.udf.maxRecordsPerBatch", "100")
    fail_at = n // parts if where == "first-row" else 2 * n // parts - 1
    df = spark.range(0, n, 1, parts).select(fail_first_attempt_at(fail_at)("id").alias("id"))
    df.write.parquet(table.url)

    got = spark.read.parquet(table.url)
    assert got.count() == n
    assert got.distinct().count() == n
    leftovers = [k for k in table.data_files() if k not in table.committed_paths()]
    if stages_data(table.store):
        # The failed attempt's upload was never completed: nothing of it is in the bucket, and
        # the clean-up after the commit (in the background, I5) aborts it.
        assert not leftovers
        wait_for(lambda: not table.open_uploads(), 30, "the failed attempt's upload aborted")
    elif where == "last-row":
        assert leftovers, "the failed attempt's file is on disk"
        assert all(txn_of(k) in table.committed() for k in leftovers), "of the committed txn"
        assert raw_count(spark, table) > n + n // parts // 2, "the losing attempt held real rows"


@pytest.mark.parametrize(
    ("any_table", "junk"),
    on_stores(["dead-executors", "clean-abort"], "dead-executors"),
    indirect=["any_table"],
)
def test_persistently_failing_task_makes_no_row_visible(
    store_spark, any_table: TableRef, junk: str
):
    """The DBIO paper's job: the task holding id 9999 keeps failing, the job aborts."""
    table, spark = any_table, store_spark
    table.prepare(spark)
    spark.range(10_000).write.parquet(table.url)
    keep_junk = junk == "dead-executors"
    if keep_junk:
        for k, v in KEEP_JUNK.items():
            spark.conf.set(k, v)

    # The other tasks commit first (2 s), as in the DBIO paper.
    oops = fail_at("id", 9999, "oops!", after_ms=2000)
    with pytest.raises(Exception, match="oops"):
        spark.range(10_000).repartition(7).select(oops.alias("id")).write.mode("append").parquet(
            table.url
        )

    assert spark.read.parquet(table.url).count() == 10_000, "no new row, old rows intact"
    assert len(table.committed()) == 1
    aborted = table.aborted()
    assert len(aborted) == 1, "the abort is recorded"
    orphans = [k for k in table.data_files() if txn_of(k) in aborted]
    if stages_data(table.store):
        # Uploads are completed only at job commit: an aborted job never had data in the
        # bucket. A clean abort aborts its uploads (of committed and failed tasks alike);
        # uploads left by dead executors stay open for VACUUM, and still show no data.
        assert not orphans, "no object of the aborted job in a raw listing"
        assert bool(table.open_uploads()) == keep_junk
    elif keep_junk:
        assert orphans and raw_count(spark, table) > 10_000, "committed tasks' files are on disk"
    else:
        assert not orphans, "abort removed the files of the tasks that had committed"


# --- the server JVM killed at named points of the protocol ------------------------------------


#: The points where a killed server's state differs, each store's kit's: either side of the
#: commit point, the task point on the local file system, job.duringPublishData on
#: s3-multipart, where tasks stage data as pending uploads. The derived-work points after the record
#: (duringCleanup, beforeSuccess) roll forward with the same store calls as job.afterRecord,
#: and CommitSequenceSuite halts at each of them and checks the recovery against the in-memory
#: store: a server restart for each would prove nothing new. Every point on every store,
#: s3-multipart's task point among them (on the standalone cluster, where it halts the
#: executors; CI kills executors mid-write on every S3 adapter in test_cluster.py):
#: TXCOMMIT_TEST_ALL_KILL_POINTS=1 (the soak sets it).
KILL_POINTS_BY_STORE = {store: list(KITS[store].kill_points) for store in FAULT_STORES}
if os.environ.get("TXCOMMIT_TEST_ALL_KILL_POINTS") == "1":
    KILL_POINTS_BY_STORE.update(
        {
            s: [p for p in VISIBLE_AFTER_HALT if p != "job.duringPublishData" or stages_data(s)]
            for s in STORES
        }
    )
KILL_POINTS = [(store, point) for store, points in KILL_POINTS_BY_STORE.items() for point in points]


@pytest.mark.parametrize(("any_table", "point"), KILL_POINTS, indirect=["any_table"])
def test_server_killed_during_commit_shows_all_or_nothing(
    point: str, workdir: Path, any_table: TableRef, request, server_of
):
    table = any_table
    # The reader afterwards: the shared server, or one with the store's connector (gs://, abfs://).
    server = server_of(table.store)
    base, n = 1000, 6000
    # A job point halts the driver after every task has finished: the store holds the same
    # objects whether executors were threads or JVMs (and the master kills a dead driver's
    # executors), so only a task point, which halts the executors, needs the cluster.
    crashing = crashing_server(
        workdir / f"halt-{point}-{table.store}",
        table.store,
        request,
        executors_matter=point.startswith("task."),
    )
    for _ in running(crashing):
        spark = new_session(crashing.url)
        table.prepare(spark)
        spark.range(base).withColumn("k", F.col("id") % 4).write.partitionBy("k").parquet(table.url)
        spark.conf.set("spark.txcommit.test.haltAt", point)

        def write(spark=spark) -> None:
            spark.range(base, base + n, 1, 3).withColumn("k", F.col("id") % 4).write.mode(
                "append"
            ).partitionBy("k").parquet(table.url)

        driver_dies = not (crashing.master.startswith("spark://") and point.startswith("task."))
        if not driver_dies:
            # On a cluster a task point halts the EXECUTOR JVMs, one attempt after another:
            # the driver lives on, and the job fails after spark.task.maxFailures attempts.
            with pytest.raises(Exception, match="failed"):
                write()
            spark.stop()
        else:
            run_until_the_server_dies(crashing, spark, write)

    # Another server reads the table as any reader would after the crash.
    reader = new_session(server.url, one_clock=True)
    try:
        expected = base + (n if VISIBLE_AFTER_HALT[point] else 0)
        df = reader.read.parquet(table.url)
        assert df.count() == expected
        assert df.distinct().count() == expected
        halted_txns = {txn_of(k) for k in table.data_files()} - {None}
        if stages_data(table.store) and point == "task.beforeCommit":
            # The uploads were never completed: the crashed job has no object in the bucket.
            assert len(halted_txns) == 1, "in-flight data never shows in a raw listing"
            # A dead driver leaves its uploads pending (VACUUM's work); a live one aborts the
            # job and with it every upload of the transaction.
            assert bool(table.open_uploads()) == driver_dies
        elif stages_data(table.store) and point == "job.duringPublishData":
            # Half the uploads completed (files in the bucket, no record), half still open.
            assert len(halted_txns) == 2 and table.open_uploads()
        else:
            assert len(halted_txns) == 2, "the crashed job's files are in the store either way"
        assert len(table.committed()) == (2 if VISIBLE_AFTER_HALT[point] else 1)

        # The table stays writable: the next job commits, and rolls the crashed one forward.
        table.prepare(reader)
        reader.range(10).withColumn("k", F.lit(0)).write.mode("append").partitionBy("k").parquet(
            table.url
        )
        assert reader.read.parquet(table.url).count() == expected + 10
    finally:
        reader.stop()


#: Where servers are killed at random moments of a write loop: EVERY_VARIANT_STORES for
#: KILL_ROUNDS rounds each, and HDFS, GCS and Azure for one in CI (KILL_ROUNDS in the soak).
RANDOM_KILL_STORES = [*EVERY_VARIANT_STORES, *(s for s in FAULT_STORES if s not in STORES)]
#: Jobs the kills must have cut short between their setup (their pending marker written) and
#: their commit point, as the store shows it; rounds go on (at most two more) until they have.
INTERRUPTED = 1


def interrupted_jobs(table: TableRef) -> set[str]:
    """Transactions that began (a pending marker) and neither committed nor aborted."""
    names = table.objects()
    started = {
        k.rsplit("/", 1)[-1][: -len(".json")] for k in names if k.startswith("_txcommit/pending/")
    }
    replaced = {r["txn"] for r in replace_records(table)}
    return started - set(table.committed()) - replaced - table.aborted()


@pytest.mark.parametrize("any_table", RANDOM_KILL_STORES, indirect=True)
def test_random_kills_in_a_write_loop_never_show_part_of_a_job(
    workdir: Path, any_table: TableRef, request, server_of
):
    table = any_table
    seed = int(os.environ.get("TXCOMMIT_TEST_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    rows = 3000
    acked: list[int] = []
    attempted: list[int] = []
    batches = iter(range(1_000_000))
    rounds = KILL_ROUNDS if SOAK or table.store in EVERY_VARIANT_STORES else 1
    round_ = 0
    # Rounds go on (at most 4 more) until a kill cut a job short: one that fell between jobs
    # proves nothing, and on the slower stores (Azure) that is the case one round in two.
    while round_ < rounds or (len(interrupted_jobs(table)) < INTERRUPTED and round_ < rounds + 4):
        crashing = crashing_server(
            workdir / f"random-kill-{round_}-{table.store}", table.store, request
        )
        round_ += 1
        for _ in running(crashing):
            spark = new_session(crashing.url)
            table.prepare(spark)

            first_ack = threading.Event()

            def loop(spark=spark, first_ack=first_ack) -> None:
                while True:
                    b = next(batches)
                    attempted.append(b)
                    spark.range(rows).withColumn("b", F.lit(b)).withColumn(
                        "k", F.col("id") % 3
                    ).write.mode("append").partitionBy("k").parquet(table.url)
                    acked.append(b)
                    first_ack.set()

            def kill_later(crashing=crashing, first_ack=first_ack) -> None:
                # Kill at a random moment of the loop, once it is warm (the first job of a
                # fresh server also pays for class loading and, on S3, the bucket probe).
                first_ack.wait(timeout=120)
                time.sleep(rng.uniform(0.5, 5.0))
                crashing.kill_jvm()

            threading.Thread(target=kill_later, daemon=True).start()
            run_until_the_server_dies(crashing, spark, loop)

    reader = server_of(table.store)
    counts = rows_per_b(reader.url, table.url, one_clock=True)
    cut_short = interrupted_jobs(table)
    context = f"seed={seed} {attempted=} {acked=} {counts=} interrupted={sorted(cut_short)}"
    note("jobs a kill cut short", len(cut_short), INTERRUPTED, len(attempted), round_)
    assert len(cut_short) >= INTERRUPTED, (
        f"kills that cut a running job short: {len(cut_short)} in {round_} rounds, fewer than "
        f"{INTERRUPTED} (else this test proved nothing): " + context
    )
    assert all(c == rows for c in counts.values()), (
        "a job is visible whole or not at all: " + context
    )
    assert set(acked) <= set(counts), "every acknowledged job is visible: " + context
    assert set(counts) <= set(attempted), context
    assert len(set(counts) - set(acked)) <= round_, (
        "at most the in-flight job of each round: " + context
    )


@pytest.mark.parametrize("any_table", ["local", "s3"], indirect=True)
def test_a_task_whose_file_vanished_fails_and_is_retried_never_a_smaller_commit(
    spark, any_table: TableRef, tmp_path: Path
):
    """The file a task wrote is deleted before the task commits (another tool): the task must
    fail and be retried, never commit a manifest without the file (the job would then commit
    fewer rows than it wrote, silently). On S3 a task asks for its files only when
    `spark.txcommit.s3.checkDataFiles` is on: by default it takes each file's size from its
    writer, which S3 acknowledged (docs/protocol.md, I19), and VACUUM fences a transaction
    before it deletes any of its files."""
    table = any_table
    table.prepare(spark)
    if table.store == "s3":
        spark.conf.set("spark.txcommit.s3.checkDataFiles", "true")
    spark.range(10).write.parquet(table.url)
    (base,) = table.committed()
    spark.conf.set("spark.txcommit.test.pauseAt", "task.beforeCommit")
    # The task waits until its file is gone (the file below), however slow the machine; the
    # retried attempt then passes the point at once.
    deleted = tmp_path / "file-deleted"
    spark.conf.set("spark.txcommit.test.pauseMs", "300000")
    spark.conf.set("spark.txcommit.test.resumeWhen", str(deleted))
    outcome: dict[str, BaseException | None] = {}
    job_span: list[Span] = []

    def job() -> None:
        try:
            with spanning(job_span):
                spark.range(100, 200, 1, 1).write.mode("append").parquet(table.url)
            outcome["job"] = None
        except BaseException as e:
            outcome["job"] = e

    writer = threading.Thread(target=job, daemon=True)
    writer.start()
    deadline = time.monotonic() + 120
    while not (written := [k for k in table.data_files() if txn_of(k) not in (None, base)]):
        assert time.monotonic() < deadline, "the task never wrote its file"
        time.sleep(0.1)
    (first,) = written
    try:
        table.delete(first)
        gone = point()
    finally:
        deleted.touch()
    writer.join(timeout=300)
    # The file went while the job ran (its task waiting at task.beforeCommit).
    assert_overlaps(job_span, [gone], 1, "the job around the deletion")
    spark.conf.unset("spark.txcommit.test.pauseAt")
    spark.conf.unset("spark.txcommit.test.resumeWhen")
    assert outcome["job"] is None, f"the retried task commits: {outcome['job']}"
    (txn,) = set(table.committed()) - {base}
    named = {f["path"] for f in table.committed()[txn]["added"]}
    assert first not in named and len(named) == 1, "the retry's file, not the vanished one"
    assert named <= set(table.data_files())
    assert sorted(r["id"] for r in spark.read.parquet(table.url).collect()) == [
        *range(10),
        *range(100, 200),
    ]
