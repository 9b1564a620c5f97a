"""Replacing commits end to end, on every store, from a JVM-less client: overwrite without a
window (path, static partition, dynamic partition), write ids and their policies, concurrent
writers. What a reader relies on: until the commit the old data in full, after it the new
data only; never empty, never half replaced."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from txcommit.conformance.protocol import fail_at, pause_at

from support.races import CommitWatch, Span, assert_overlaps, spanning
from support.servers import ServerProcess, new_session, rows_per_b, running, server_with_s3
from support.tables import (
    FEATURE_STORES,
    WRITE_ID,
    TableRef,
    dynamic_overwrite,
    make_table,
    replace_records,
    txn_of,
)


def by_k(spark, table: TableRef) -> dict[int, int]:
    df = spark.read.parquet(table.url)
    return {r["k"]: r["count"] for r in df.groupBy("k").count().collect()}


def rows(spark, n: int, start: int = 0, parts: int = 2):
    return spark.range(start, start + n, 1, parts).withColumn("k", (F.col("id") % 3).cast("int"))


@pytest.fixture
def tx(spark, any_table: TableRef):
    any_table.prepare(spark)
    return spark


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_overwrite_of_a_path_is_one_logical_replace(tx, any_table: TableRef):
    table = any_table
    rows(tx, 900).write.partitionBy("k").parquet(table.url)
    old = set(table.data_files())
    rows(tx, 30, start=5000, parts=3).write.mode("overwrite").partitionBy("k").parquet(table.url)

    df = tx.read.parquet(table.url)
    assert df.count() == 30 and df.agg(F.min("id")).first()[0] == 5000, "the new data only"
    assert old <= set(table.data_files()), "nothing was deleted: VACUUM removes old files later"
    (rec,) = replace_records(table)
    assert rec["operation"] == "overwrite" and rec["scope"] == [""] and rec["sequence"] == 1
    assert {f["path"] for f in rec["removed"]} == old
    assert rec["removedFiles"] == len(old)
    assert table.read(f"_txcommit/commits/{rec['txn']}.json") == table.read(
        "_txcommit/replace/00000000000000000001.json"
    ), "commits/<txn>.json is the derived copy of the replace record"

    # An append after the overwrite adds to the new data; a second overwrite replaces both.
    rows(tx, 3, start=9000).write.mode("append").partitionBy("k").parquet(table.url)
    assert tx.read.parquet(table.url).count() == 33
    rows(tx, 7, start=7000).write.mode("overwrite").partitionBy("k").parquet(table.url)
    assert tx.read.parquet(table.url).count() == 7
    assert [r["sequence"] for r in replace_records(table)] == [1, 2]

    # An overwrite whose job fails replaces nothing: the previous data stays, in full.
    boom = fail_at("id", 3, "injected overwrite failure")
    failing = tx.range(0, 10, 1, 2).select(boom.alias("id")).withColumn("k", F.lit(0))
    with pytest.raises(Exception, match="injected overwrite failure"):
        failing.write.mode("overwrite").partitionBy("k").parquet(table.url)
    assert sorted(r["id"] for r in tx.read.parquet(table.url).collect()) == list(range(7000, 7007))
    assert len(replace_records(table)) == 2


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_overwrite_hides_data_written_without_txcommit(spark, any_table: TableRef):
    table = any_table
    rows(spark, 100).write.parquet(table.url)  # txcommit off: plain file names
    assert all(txn_of(k) is None for k in table.data_files())
    table.prepare(spark)
    rows(spark, 4, start=100).write.mode("overwrite").parquet(table.url)
    assert spark.read.parquet(table.url).count() == 4


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_static_partition_overwrite_replaces_that_partition_only(tx, any_table: TableRef):
    table = any_table
    rows(tx, 900).write.partitionBy("k").parquet(table.url)
    name = f"static_{abs(hash(table.url)) % 10**8}"
    tx.sql(
        f"CREATE TABLE {name} (id BIGINT, k INT) USING parquet PARTITIONED BY (k) "
        f"LOCATION '{table.url}'"
    )
    try:
        tx.sql(f"INSERT OVERWRITE TABLE {name} PARTITION (k=1) SELECT id FROM range(10)")
    finally:
        tx.sql(f"DROP TABLE {name}")  # an external table: its files stay
    assert by_k(tx, table) == {0: 300, 1: 10, 2: 300}
    (rec,) = replace_records(table)
    assert rec["operation"] == "overwrite-partitions" and rec["scope"] == ["k=1"]
    assert rec["removed"] and all(f["path"].startswith("k=1/") for f in rec["removed"])


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_dynamic_partition_overwrite_replaces_the_partitions_written(tx, any_table: TableRef):
    table = any_table
    rows(tx, 900).write.partitionBy("k").parquet(table.url)
    with dynamic_overwrite(tx):
        tx.range(10).withColumn("k", F.lit(1)).write.mode("overwrite").partitionBy("k").parquet(
            table.url
        )
    assert by_k(tx, table) == {0: 300, 1: 10, 2: 300}
    (rec,) = replace_records(table)
    assert rec["operation"] == "overwrite-partitions" and rec["scope"] == ["k=1"]
    assert len(table.committed()) == 2


# --- the driver dies during the overwrite's commit ---------------------------------------------


@pytest.mark.parametrize(
    ("store", "point", "new_visible"),
    # Two server deaths (each costs a server start): before the replace record on the store
    # with staged data (uploads completed, no record), and after it on the local file system.
    # A failed (not killed) overwrite is tested on every store above.
    [("s3-multipart", "job.beforeRecord", False), ("local", "job.afterRecord", True)],
)
def test_driver_death_during_an_overwrite_shows_old_or_new_in_full(
    store: str, point: str, new_visible: bool, server: ServerProcess, workdir: Path, request
):
    client = request.getfixturevalue("s3_client") if store != "local" else None
    table = make_table(store, workdir, client)
    local_s3 = request.getfixturevalue("local_s3")
    crashing = server_with_s3(workdir / f"ow-halt-{point}-{store}", local_s3)
    for _ in running(crashing):
        spark = new_session(crashing.url)
        table.prepare(spark)
        rows(spark, 900).write.partitionBy("k").parquet(table.url)
        spark.conf.set("spark.txcommit.test.haltAt", point)

        def overwrite(spark=spark) -> None:
            with contextlib.suppress(Exception):
                new = rows(spark, 30, start=5000).write.mode("overwrite").partitionBy("k")
                new.parquet(table.url)

        threading.Thread(target=overwrite, daemon=True).start()
        crashing.wait_dead(timeout=180)
        import txcommit

        txcommit.abandon(spark)

    reader = new_session(server.url, one_clock=True)
    try:
        df = reader.read.parquet(table.url)
        if new_visible:
            assert df.count() == 30 and df.agg(F.min("id")).first()[0] == 5000
            (rec,) = replace_records(table)
            assert f"_txcommit/commits/{rec['txn']}.json" not in table.objects(), (
                "the driver died before the derived copy"
            )
        else:
            assert df.count() == 900 and df.distinct().count() == 900, "the old data in full"
            assert not replace_records(table)
        # The next write rolls the replacing commit forward (commits/<txn>.json) and commits.
        table.prepare(reader)
        rows(reader, 3, start=9000).write.mode("append").partitionBy("k").parquet(table.url)
        assert reader.read.parquet(table.url).count() == (30 if new_visible else 900) + 3
        for rec in replace_records(table):
            assert f"_txcommit/commits/{rec['txn']}.json" in table.objects()
    finally:
        reader.stop()


# --- write ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_rerun_with_a_write_id_replaces_exactly_the_previous_run(tx, any_table: TableRef):
    table = any_table
    rows(tx, 50, start=10_000).write.partitionBy("k").parquet(table.url)  # other data: kept
    first = rows(tx, 400, parts=4).write.option(WRITE_ID, "daily-2026-11-20").mode("append")
    first.partitionBy("k").parquet(table.url)
    assert tx.read.parquet(table.url).count() == 450
    run1 = {k for k in table.data_files() if txn_of(k)} - set()

    # Same logical write, different number of files and rows.
    rows(tx, 100, start=1000, parts=1).write.option(WRITE_ID, "daily-2026-11-20").mode(
        "append"
    ).partitionBy("k").parquet(table.url)
    df = tx.read.parquet(table.url)
    assert df.count() == 150 and df.filter("id < 1000").count() == 0, "no duplicate, no phantom"
    recs = replace_records(table)
    assert [r["operation"] for r in recs] == ["write-id", "write-id"]
    assert all(r["writeId"] == "daily-2026-11-20" for r in recs)
    assert {f["path"] for f in recs[1]["removed"]} == {f["path"] for f in recs[0]["added"]}
    assert {f["path"] for f in recs[0]["added"]} <= run1

    # The session conf works the same way; another id is another write.
    tx.conf.set("spark.txcommit.writeId", "daily-2026-11-20")
    try:
        rows(tx, 10, start=2000, parts=1).write.mode("append").partitionBy("k").parquet(table.url)
    finally:
        tx.conf.unset("spark.txcommit.writeId")
    rows(tx, 5, start=3000, parts=1).write.option(WRITE_ID, "daily-2026-11-21").mode(
        "append"
    ).partitionBy("k").parquet(table.url)
    assert tx.read.parquet(table.url).count() == 50 + 10 + 5


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_write_id_policies_skip_and_fail(tx, any_table: TableRef):
    table = any_table
    tx.range(100).write.option(WRITE_ID, "load-1").parquet(table.url)
    first = replace_records(table)[0]["txn"]

    tx.range(7).write.option(WRITE_ID, "load-1").option("txcommit.writeIdPolicy", "skip").mode(
        "append"
    ).parquet(table.url)
    assert tx.read.parquet(table.url).count() == 100, "skip commits nothing"
    assert len(table.committed()) == 1 and len(replace_records(table)) == 1
    (skipped,) = table.aborted()
    marker = json.loads(table.read(f"_txcommit/aborted/{skipped}.json") or b"{}")
    assert first in marker["reason"]
    assert not [k for k in table.data_files() if txn_of(k) == skipped], "its files are discarded"

    tx.conf.set("spark.txcommit.writeIdPolicy", "fail")
    try:
        with pytest.raises(Exception, match=first):
            tx.range(7).write.option(WRITE_ID, "load-1").mode("append").parquet(table.url)
    finally:
        tx.conf.unset("spark.txcommit.writeIdPolicy")
    assert tx.read.parquet(table.url).count() == 100

    with pytest.raises(Exception, match="txcommit.writeId"):
        tx.range(1).write.option(WRITE_ID, "bad id!").mode("append").parquet(table.url)


# --- concurrent writers ----------------------------------------------------------------------


#: Of the eight appends, how many must have begun before another one's commit point and ended
#: after it (else this proves nothing about concurrent commits).
APPEND_OVERLAPS = 4


def test_eight_concurrent_appends_all_land(server: ServerProcess, any_table: TableRef):
    table = any_table
    errors: list[BaseException] = []
    jobs: list[Span] = []
    sessions = [new_session(server.url) for _ in range(8)]  # opened before the race
    for s in sessions:
        table.prepare(s)

    def append(b: int) -> None:
        s = sessions[b]
        try:
            with spanning(jobs):
                s.range(200).withColumn("b", F.lit(b)).write.mode("append").parquet(table.url)
        except BaseException as exc:
            errors.append(exc)
        finally:
            s.stop()

    threads = [threading.Thread(target=append, args=(b,)) for b in range(8)]
    with CommitWatch(table) as watch:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    assert not errors, errors
    counts = rows_per_b(server.url, table.url)
    assert counts == {b: 200 for b in range(8)}
    assert len(table.committed()) == 8
    assert_overlaps(jobs, watch.points(), APPEND_OVERLAPS, "appends beside another's commit")


def test_racing_overwrites_of_one_partition_one_wins(server: ServerProcess, any_table: TableRef):
    """A slow overwrite of k=1 starts first; a fast one of k=1 commits while it runs. The slow
    one must fail with a conflict naming the winner, and its rows must never show."""
    table = any_table
    setup = new_session(server.url)
    table.prepare(setup)
    rows(setup, 900).write.partitionBy("k").parquet(table.url)
    setup.stop()
    slow_started = threading.Event()
    outcome: dict[str, BaseException | None] = {}
    spans: dict[str, list[Span]] = {"slow": [], "fast": []}

    def overwrite(label: str, delay_udf: bool) -> None:
        s = new_session(server.url)
        try:
            table.prepare(s)
            s.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
            start = 200 if delay_udf else 100
            df = s.range(start, start + 5, 1, 1).withColumn("k", F.lit(1))
            if delay_udf:
                df = df.select(pause_at("id", 200, 10_000).alias("id"), "k")
                slow_started.set()
            with spanning(spans[label]):
                df.write.mode("overwrite").partitionBy("k").parquet(table.url)
            outcome[label] = None
        except BaseException as exc:
            outcome[label] = exc
        finally:
            s.stop()

    slow_t = threading.Thread(target=overwrite, args=("slow", True))
    with CommitWatch(table) as watch:
        slow_t.start()
        slow_started.wait(30)
        import time

        time.sleep(4)  # the slow job has set up (noted its base) and its tasks are sleeping
        overwrite("fast", False)
        slow_t.join(timeout=300)
    # The slow job began before the fast one's commit point and ended after it.
    assert_overlaps(spans["slow"], watch.points(), 1, "the slow overwrite")

    assert outcome["fast"] is None, outcome["fast"]
    loser = outcome["slow"]
    assert loser is not None, "the second commit must fail"
    (winner,) = replace_records(table)
    assert winner["txn"] in str(loser) and "conflict" in str(loser)
    reader = new_session(server.url)
    try:
        df = reader.read.parquet(table.url)
        ids = sorted(r["id"] for r in df.filter("k = 1").select("id").collect())
        assert ids == list(range(100, 105)), "the winner's rows only"
        assert df.filter("k != 1").count() == 600
    finally:
        reader.stop()
