"""One cut per read, tested the way it is attacked: a reader reads IN A LOOP while a writer
commits in a loop, on every store, from a JVM-less client. Every read must show each
transaction whole or not at all: an overwrite as the old generation or the new one, never both
and never neither; an append in every partition or in none, also when Spark lists the
partitions in a Spark job (``parallelPartitionDiscovery.threshold`` 1: on S3 the listing tasks
run on the cluster's executors, in other JVMs than the driver)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from pyspark.sql import functions as F

from support.servers import new_session
from support.tables import TableRef, dynamic_overwrite

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


@pytest.fixture
def sessions(request: pytest.FixtureRequest, any_table: TableRef):  # noqa: ANN201
    """A writer session and a reader session on one server (S3 tables: executors on the
    cluster, so listing tasks run in other JVMs); the reader lists in a Spark job."""
    name = "server" if any_table.store == "local" else "cluster_server"
    url = request.getfixturevalue(name).url
    writer, reader = new_session(url), new_session(url)
    any_table.prepare(writer)
    any_table.prepare(reader)
    reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
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


def test_overwrite_in_a_loop_is_read_as_one_whole_generation(sessions, any_table: TableRef):
    writer, reader = sessions
    generation(writer, 0).write.partitionBy("k").parquet(any_table.url)

    def write(gen: int) -> None:
        generation(writer, gen).write.mode("overwrite").partitionBy("k").parquet(any_table.url)

    assert_whole(race(writer, reader, any_table.url, write), one_generation=True)


def test_dynamic_partition_overwrite_in_a_loop_is_read_whole(sessions, any_table: TableRef):
    writer, reader = sessions
    generation(writer, 0).write.partitionBy("k").parquet(any_table.url)

    def write(gen: int) -> None:
        with dynamic_overwrite(writer):
            generation(writer, gen).write.mode("overwrite").partitionBy("k").parquet(any_table.url)

    assert_whole(race(writer, reader, any_table.url, write), one_generation=True)


def test_appends_over_many_partitions_are_read_all_or_nothing(sessions, any_table: TableRef):
    writer, reader = sessions
    generation(writer, 0).write.partitionBy("k").parquet(any_table.url)

    def write(gen: int) -> None:
        generation(writer, gen).write.mode("append").partitionBy("k").parquet(any_table.url)
        time.sleep(0.2)  # lets reads begin between commits too, not only during them

    assert_whole(race(writer, reader, any_table.url, write), one_generation=False)
