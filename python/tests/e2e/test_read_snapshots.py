"""One cut per read, tested the way it is attacked: a reader reads IN A LOOP while a writer
commits in a loop, on every store, from a JVM-less client. Every read must show each
transaction whole or not at all: an overwrite as the old generation or the new one, never both
and never neither; an append in every partition or in none, also when Spark lists the
partitions in a Spark job (``parallelPartitionDiscovery.threshold`` 1), on the shared server
and on the standalone cluster, whose listing tasks run in other JVMs than the driver."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from txcommit.testing.local_s3 import LocalS3

from support.servers import ServerProcess, new_session, running, server_with_s3
from support.tables import TableRef, dynamic_overwrite, make_table, replace_records
from support.waiting import wait_for

#: CI runs the local file system and S3 (`s3`); `s3-multipart` reads the same way once its
#: uploads are completed (they are invisible before), and passes too: set the variable.
SNAPSHOT_STORES = os.environ.get("TXCOMMIT_TEST_SNAPSHOT_STORES", "local,s3").split(",")
PARTS = 40
ROWS = 2000  # per transaction, spread over PARTS partitions
COMMITS = 8  # per test: enough to catch a torn read on the code that had one


def generation(spark, gen: int):  # noqa: ANN001, ANN201
    """ROWS rows tagged ``gen``, spread over PARTS partitions of ``k``."""
    return (
        spark.range(0, ROWS, 1, 4)
        .withColumn("k", (F.col("id") % PARTS).cast("int"))
        .withColumn("gen", F.lit(gen))
    )


def race(
    writer_spark,  # noqa: ANN001
    reader_spark,  # noqa: ANN001
    url: str,
    write: Callable[[int], None],
) -> list[dict[int, int]]:
    """Runs ``write(1..COMMITS)`` in a thread while reading ``url`` in a loop; returns what
    each read saw (rows per ``gen``)."""
    seen: list[dict[int, int]] = []
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for gen in range(1, COMMITS + 1):
                write(gen)
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(e)

    thread = threading.Thread(target=writer)
    thread.start()
    while thread.is_alive():
        df = reader_spark.read.parquet(url)
        seen.append({r["gen"]: r["count"] for r in df.groupBy("gen").count().collect()})
    thread.join()
    if errors:
        raise errors[0]
    return seen


def open_sessions(url: str, table: TableRef):  # noqa: ANN201
    """A writer session and a reader session on the server at ``url``; the reader lists in a
    Spark job."""
    writer, reader = new_session(url), new_session(url)
    table.prepare(writer)
    table.prepare(reader)
    reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
    return writer, reader


@pytest.fixture
def sessions(server: ServerProcess, any_table: TableRef):  # noqa: ANN201
    writer, reader = open_sessions(server.url, any_table)
    yield writer, reader
    writer.stop()
    reader.stop()


def assert_whole(seen: list[dict[int, int]], one_generation: bool) -> None:
    torn = [s for s in seen if any(n != ROWS for n in s.values()) or not s]
    assert not torn, f"reads that showed part of a transaction: {torn} (of {len(seen)} reads)"
    if one_generation:
        mixed = [s for s in seen if len(s) != 1]
        assert not mixed, f"reads that showed two generations at once: {mixed}"
    gens = {g for s in seen for g in s}
    assert len(gens) > 1, f"the reads never overlapped a commit ({len(seen)} reads)"


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
@pytest.mark.parametrize("mode", ["overwrite", "dynamic partition overwrite"])
def test_overwrite_in_a_loop_is_read_as_one_whole_generation(
    sessions, any_table: TableRef, mode: str
):
    writer, reader = sessions
    # Every commit also writes a checkpoint, so reads meet checkpoints published while they list.
    writer.conf.set("spark.txcommit.checkpoint.interval", "1")
    generation(writer, 0).write.partitionBy("k").parquet(any_table.url)

    def write(gen: int) -> None:
        with dynamic_overwrite(writer) if mode.startswith("dynamic") else nullcontext():
            generation(writer, gen).write.mode("overwrite").partitionBy("k").parquet(any_table.url)

    assert_whole(race(writer, reader, any_table.url, write), one_generation=True)


@pytest.fixture(scope="module")
def other_application(workdir: Path, local_s3: LocalS3) -> Iterator[ServerProcess]:
    """A second Connect server: another Spark application, as a dashboard or a downstream job
    reading the table is. Its reads apply the allowance for another application's clock
    (`spark.txcommit.read.maxClockSkewMs`, default)."""
    yield from running(server_with_s3(workdir / "other-application", local_s3))


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
def test_another_application_reads_whole_generations_while_this_one_overwrites(
    server: ServerProcess, other_application: ServerProcess, any_table: TableRef
):
    writer = new_session(server.url)
    any_table.prepare(writer)
    _, reader = open_sessions(other_application.url, any_table)
    try:
        generation(writer, 0).write.partitionBy("k").parquet(any_table.url)

        # Another application sees a commit once it is `maxClockSkewMs` old (I16's lag): wait
        # until it sees the first generation, which also warms it up so its reads overlap the
        # commits. Before that, the table has no committed file for it (Spark then cannot even
        # infer a schema).
        def sees_generation_0() -> bool:
            try:
                return reader.read.parquet(any_table.url).count() == ROWS
            except Exception:  # noqa: BLE001 - UNABLE_TO_INFER_SCHEMA while nothing is visible
                return False

        wait_for(sees_generation_0, 60, "the other application to see the first commit")

        def write(gen: int) -> None:
            generation(writer, gen).write.mode("overwrite").partitionBy("k").parquet(any_table.url)

        assert_whole(race(writer, reader, any_table.url, write), one_generation=True)
    finally:
        writer.stop()
        reader.stop()


def appends_race(writer, reader, table: TableRef) -> None:  # noqa: ANN001
    generation(writer, 0).write.partitionBy("k").parquet(table.url)

    def write(gen: int) -> None:
        generation(writer, gen).write.mode("append").partitionBy("k").parquet(table.url)
        time.sleep(0.2)  # lets reads begin between commits too, not only during them

    assert_whole(race(writer, reader, table.url, write), one_generation=False)


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
def test_appends_over_many_partitions_are_read_all_or_nothing(sessions, any_table: TableRef):
    appends_race(*sessions, any_table)


def test_executors_of_a_cluster_list_one_cut(
    cluster_server: ServerProcess, workdir: Path, s3_client
):  # noqa: ANN001
    # The listing tasks run on the cluster's executors, each in its own JVM: they agree on
    # the read's snapshot through the driver (the plugin's RPC channel).
    table = make_table("s3", workdir, s3_client)
    writer, reader = open_sessions(cluster_server.url, table)
    try:
        appends_race(writer, reader, table)
    finally:
        writer.stop()
        reader.stop()


@pytest.mark.parametrize("ahead_s", [600, 3600])
def test_a_replace_dated_ahead_hides_no_later_overwrite(spark, workdir: Path, ahead_s: int):  # noqa: ANN001
    # Another application's driver whose clock runs ahead (or VACUUM's fence from another
    # server) published a replacing commit dated `ahead_s` in the future; this session's own
    # dynamic overwrite of k=1 after it must be read at once, and with it what came before.
    table = make_table("local", workdir, None)
    table.prepare(spark)
    spark.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide

    def write(n: int, k: str):  # noqa: ANN202
        return spark.range(n).selectExpr("id", f"cast({k} as int) as k").write.partitionBy("k")

    try:
        write(100, "id % 4").parquet(table.url)
        with dynamic_overwrite(spark):
            write(7, "2").mode("overwrite").parquet(table.url)
        # Dated ahead, as the other driver's clock had it (before any read met the table).
        [key] = [k for k in table.objects() if k.startswith("_txcommit/replace/")]
        [first] = replace_records(table)
        first["committedAt"] += ahead_s * 1000
        first["appId"] = "app-with-a-fast-clock"
        data = json.dumps(first).encode()
        table.write(key, data)
        table.write(f"_txcommit/commits/{first['txn']}.json", data)
        with dynamic_overwrite(spark):
            write(5, "1").mode("overwrite").parquet(table.url)
        df = spark.read.parquet(table.url)
        by_k = {r["k"]: r["count"] for r in df.groupBy("k").count().collect()}
        assert by_k == {0: 25, 1: 5, 2: 7, 3: 25}, f"rows per k: {by_k}"
        assert replace_records(table)[0]["committedAt"] > time.time() * 1000
    finally:
        spark.conf.unset("spark.txcommit.checkpoint.interval")
