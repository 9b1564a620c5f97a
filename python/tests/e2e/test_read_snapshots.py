"""One cut per read, tested the way it is attacked: a reader reads IN A LOOP while a writer
commits in a loop, from a JVM-less client. Every read must show each transaction whole or not
at all: an overwrite as the old generation or the new one, never both and never neither; an
append in every partition or in none, also when Spark lists the partitions in a Spark job
(``parallelPartitionDiscovery.threshold`` 1), on the shared server and on the standalone
cluster, whose listing tasks run in other JVMs than the driver. Many partitions and commits
here, on the stores whose listing differs most (a file tree, S3); test_attacks runs the same
race on every store, with a reader in another application too."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from support.races import Generations, Span, assert_overlaps, clock, race, rows_per_gen
from support.scale import SOAK, scaled
from support.servers import ServerProcess, new_session
from support.streams import configure
from support.tables import TableRef, dynamic_overwrite, make_table, make_table_of, txn_of
from support.waiting import wait_for

HOUR_MS = 3600 * 1000

#: CI runs the local file system and S3 (`s3`); `s3-multipart` reads the same way once its
#: uploads are completed (they are invisible before), and passes too: set the variable.
SNAPSHOT_STORES = os.environ.get("TXCOMMIT_TEST_SNAPSHOT_STORES", "local,s3").split(",")
GENERATIONS = Generations(parts=scaled(16, 40), rows=scaled(800, 2000))
#: Per test: enough to catch a torn read on the code that had one.
COMMITS = scaled(4, 8)
#: The reads (of each reader) that must have begun before a commit point and ended after it.
OVERLAPS = scaled(2, 4)


def open_sessions(url: str, table: TableRef):
    """A writer session and a reader session on the server at ``url``; the reader lists in a
    Spark job."""
    writer, reader = new_session(url), new_session(url)
    table.prepare(writer)
    table.prepare(reader)
    reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
    return writer, reader


@pytest.fixture
def sessions(server: ServerProcess, any_table: TableRef):
    writer, reader = open_sessions(server.url, any_table)
    yield writer, reader
    writer.stop()
    reader.stop()


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
def test_dynamic_partition_overwrites_in_a_loop_are_read_as_one_whole_generation(
    sessions, any_table: TableRef
):
    # (Plain overwrites in a loop: test_attacks, on every store.)
    writer, reader = sessions
    # Every commit also writes a checkpoint, so reads meet checkpoints published while they list.
    writer.conf.set("spark.txcommit.checkpoint.interval", "1")
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(any_table.url)

    def write(gen: int) -> None:
        with dynamic_overwrite(writer):
            GENERATIONS.of(writer, gen).write.mode("overwrite").partitionBy("k").parquet(
                any_table.url
            )

    raced = race(
        write, COMMITS, [lambda: rows_per_gen(reader, any_table.url)], any_table, floor=OVERLAPS
    )
    GENERATIONS.assert_whole(raced, 0, one_generation=True, who="the reader")


def appends_race(writer, reader, table: TableRef) -> None:
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)

    def write(gen: int) -> None:
        GENERATIONS.of(writer, gen).write.mode("append").partitionBy("k").parquet(table.url)
        time.sleep(0.2)  # lets reads begin between commits too, not only during them

    raced = race(write, COMMITS, [lambda: rows_per_gen(reader, table.url)], table, floor=OVERLAPS)
    GENERATIONS.assert_whole(raced, 0, one_generation=False, who="the reader")


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
def test_appends_over_many_partitions_are_read_all_or_nothing(sessions, any_table: TableRef):
    writer, reader = sessions
    appends_race(writer, reader, any_table)


def date_an_hour_ahead(table: TableRef) -> None:
    """Every commit record so far, as a driver whose clock runs an hour ahead wrote it (another
    application: no clock allowance is waived)."""
    now = time.time() * 1000
    for key in table.objects():
        if key.startswith(("_txcommit/commits/", "_txcommit/replace/")) and key.endswith(".json"):
            data = table.read(key)
            assert data is not None
            record = json.loads(data)
            if record["committedAt"] < now + HOUR_MS / 2:
                record["committedAt"] += HOUR_MS
                record["appId"] = "app-with-a-fast-clock"
                table.write(key, json.dumps(record).encode())


@pytest.mark.parametrize("any_table", SNAPSHOT_STORES, indirect=True)
def test_commits_of_a_driver_an_hour_ahead_are_read_whole_and_at_once(
    sessions, any_table: TableRef
):
    """No writer's clock decides what a read holds. A writer whose clock is an hour ahead
    overwrites in a loop while two readers read (listing in a Spark job): one lists the log
    first, the other reads through a glob, which no log-first snapshot reaches and which dates
    the writer's commits by the store's clock instead. Each read shows one whole generation,
    and the last overwrite and an append after it are read at once, not an hour later: by a
    DataFrame, by SQL on the path, through the glob and with log-first reads off."""
    writer, reader = sessions
    table = any_table
    writer.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
    date_an_hour_ahead(table)

    def write(gen: int) -> None:
        GENERATIONS.of(writer, gen).write.mode("overwrite").partitionBy("k").parquet(table.url)
        date_an_hour_ahead(table)

    def through_a_glob() -> dict[int, int]:
        df = reader.read.option("basePath", table.url).parquet(f"{table.url}/k=*")
        return {r["gen"]: r["count"] for r in df.groupBy("gen").count().collect()}

    # Reads by the store's clock see another application's commit once the clock allowance
    # (spark.txcommit.read.maxClockSkewMs, 1 s) has passed since the store dated it, not after
    # the writer's hour; before, the glob would find no file of the table's first commit.
    time.sleep(1.5)
    raced = race(
        write,
        COMMITS,
        [lambda: rows_per_gen(reader, table.url), through_a_glob],
        table,
        floor=OVERLAPS,
    )
    GENERATIONS.assert_whole(raced, 0, one_generation=True, who="the reader")
    GENERATIONS.assert_whole(raced, 1, one_generation=True, who="the reader of a glob")
    last = raced.last
    GENERATIONS.of(writer, last + 1).write.mode("append").partitionBy("k").parquet(table.url)
    date_an_hour_ahead(table)
    rows = GENERATIONS.rows
    both = {last: rows, last + 1: rows}
    assert rows_per_gen(reader, table.url) == both
    on_file = reader.sql(f"SELECT gen, count(*) AS n FROM parquet.`{table.url}` GROUP BY gen")
    assert {r["gen"]: r["n"] for r in on_file.collect()} == both
    time.sleep(1.5)
    assert through_a_glob() == both
    reader.conf.set("spark.txcommit.read.logFirst", "false")
    assert rows_per_gen(reader, table.url) == both


@pytest.mark.parametrize("any_table", ["local"], indirect=True)
def test_catalog_tables_are_read_log_first_by_a_driver_an_hour_ahead(sessions, any_table: TableRef):
    """``spark.table`` and SQL on a catalog table over a txcommit table read log-first too: a
    partitioned table whose partitions the catalog tracks, and one over a partition directory.
    While a writer whose clock is an hour ahead overwrites in a loop, every read of the catalog
    table shows one whole generation, and the last overwrite and an append after it are read at
    once (Spark caches a catalog table's listing; the clock cut would hide them for an hour)."""
    writer, reader = sessions
    table = any_table
    writer.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
    date_an_hour_ahead(table)
    name = f"snapshots_{abs(hash(table.url)) % 100_000}"
    reader.sql(
        f"CREATE TABLE {name} (id BIGINT, gen INT, k INT) USING parquet PARTITIONED BY (k) "
        f"LOCATION '{table.url}'"
    )
    reader.sql(f"MSCK REPAIR TABLE {name}")
    reader.sql(
        f"CREATE TABLE {name}_k1 (id BIGINT, gen INT) USING parquet LOCATION '{table.url}/k=1'"
    )

    def per_gen(sql: str) -> dict[int, int]:
        return {r["gen"]: r["n"] for r in reader.sql(sql).collect()}

    def write(gen: int) -> None:
        GENERATIONS.of(writer, gen).write.mode("overwrite").partitionBy("k").parquet(table.url)
        date_an_hour_ahead(table)

    try:
        by_name = f"SELECT gen, count(*) AS n FROM {name} GROUP BY gen"
        raced = race(write, COMMITS, [lambda: per_gen(by_name)], table, floor=OVERLAPS)
        GENERATIONS.assert_whole(raced, 0, one_generation=True, who="the catalog table's reader")
        last = raced.last
        GENERATIONS.of(writer, last + 1).write.mode("append").partitionBy("k").parquet(table.url)
        date_an_hour_ahead(table)
        rows = GENERATIONS.rows
        table_rows = {
            r["gen"]: r["count"] for r in reader.table(name).groupBy("gen").count().collect()
        }
        assert table_rows == {last: rows, last + 1: rows}
        in_k1 = rows // GENERATIONS.parts
        assert per_gen(f"SELECT gen, count(*) AS n FROM {name}_k1 GROUP BY gen") == {
            last: in_k1,
            last + 1: in_k1,
        }
    finally:
        reader.sql(f"DROP TABLE IF EXISTS {name}")
        reader.sql(f"DROP TABLE IF EXISTS {name}_k1")


def test_executors_of_a_cluster_list_one_cut(
    cluster_server: ServerProcess, workdir: Path, s3_client
):
    # The listing tasks run on the cluster's executors, each in its own JVM: they agree on
    # the read's snapshot through the driver (the plugin's RPC channel).
    table = make_table("s3", workdir, s3_client)
    writer, reader = open_sessions(cluster_server.url, table)
    try:
        appends_race(writer, reader, table)
    finally:
        writer.stop()
        reader.stop()


# --- the clock cut, raced from another application whose executors list ------------------------

#: What a cluster's driver logs when an executor first asks it for a read's snapshot decisions.
EXECUTORS_AGREE = "executors agree on its snapshot through the driver"
#: Where another application reads by the clock cut while a writer overwrites: S3 in CI; the
#: soak adds SNAPSHOT_STORES (the local file system, `s3-multipart` if set).
CLOCK_CUT_STORES = sorted({"s3", *SNAPSHOT_STORES}) if SOAK else ["s3"]
#: Micro-batches of the file source that must have begun before a commit point and ended after.
BATCH_OVERLAPS = 1


def spans_of_batches(query) -> list[Span]:
    """Each micro-batch of ``query`` that ran, from its trigger to its end, on ``clock`` (Spark
    reports wall-clock times; server and test share this machine's clock)."""
    offset = time.time() - clock()
    spans = []
    for p in query.recentProgress:
        if p["numInputRows"] == 0:
            continue
        began = dt.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()
        start = began - offset
        spans.append(Span(start, start + p["durationMs"]["triggerExecution"] / 1000))
    return spans


@pytest.mark.parametrize("any_table", CLOCK_CUT_STORES, indirect=True)
def test_clock_cut_reads_of_another_application_listing_on_executors_see_whole_generations(
    server: ServerProcess,
    cluster_server: ServerProcess,
    any_table: TableRef,
    workdir: Path,
    request: pytest.FixtureRequest,
):
    """The reads no log-first snapshot reaches judge a file by the clock cut: a glob, a read
    with `spark.txcommit.read.logFirst=false`, and the streaming file source. Another
    application (a Connect server whose executors run on the standalone cluster, the default
    clock allowance) reads that way in a loop, listing on its executors, while this application
    overwrites the table in a loop: each read shows one whole generation, each micro-batch of
    the stream each generation whole or not at all (and each at most once), and the
    executors listing a glob's directories asked their driver for its snapshot
    (CutArbiter.Remote)."""
    table = any_table
    writer = new_session(server.url)
    table.prepare(writer)
    readers = [new_session(cluster_server.url) for _ in range(3)]
    globbed, plain, streaming = readers
    for reader in readers:  # listing in a Spark job: on the cluster's executors
        table.prepare(reader)
        reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
    plain.conf.set("spark.txcommit.read.logFirst", "false")
    configure(streaming, table.store)
    stream = make_table_of(table.store, workdir, request)
    try:
        GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
        time.sleep(1.5)  # the clock allowance: then the other application sees generation 0

        def through_a_glob() -> dict[int, int]:
            df = globbed.read.option("basePath", table.url).parquet(f"{table.url}/k=*")
            return {r["gen"]: r["count"] for r in df.groupBy("gen").count().collect()}

        def write(gen: int) -> None:
            GENERATIONS.of(writer, gen).write.mode("overwrite").partitionBy("k").parquet(table.url)

        query = (
            streaming.readStream.schema("id LONG, gen INT, k INT")
            .parquet(table.url)
            .select("gen")
            .writeStream.format("parquet")
            .option("checkpointLocation", stream.child("checkpoint").url)
            .option("path", stream.child("out").url)
            .start()
        )
        asked_before = cluster_server.log_count(EXECUTORS_AGREE)
        raced = race(
            write,
            COMMITS,
            [through_a_glob, lambda: rows_per_gen(plain, table.url)],
            table,
            floor=OVERLAPS,
        )
        GENERATIONS.assert_whole(raced, 0, one_generation=True, who="the reader of a glob")
        GENERATIONS.assert_whole(raced, 1, one_generation=True, who="the reader, log first off")
        # Every glob read lists its 16 partition directories on the executors, which ask the
        # driver for the read's decisions. (A read of the table's root lists on the driver when
        # Spark lists the tree in one recursive call: S3A, `useListFilesFileSystemList`.)
        asked = cluster_server.log_count(EXECUTORS_AGREE) - asked_before
        globs = len(raced.reads[0])
        assert asked >= globs, (
            f"executors asked their driver about {asked} reads, fewer than the {globs} glob "
            "reads: some listed without the driver's cut"
        )

        out = stream.child("out").url

        def ingested() -> set[int]:
            try:
                return {r["gen"] for r in writer.read.parquet(out).select("gen").collect()}
            except Exception:
                return set()

        # The stream ingests every generation, the last once the clock allowance has passed.
        wait_for(lambda: raced.last in ingested(), 120, f"the stream to ingest {raced.last}")
        batches = spans_of_batches(query)
        query.stop()
        assert_overlaps(batches, raced.points, BATCH_OVERLAPS, "micro-batches of the file source")
        # Each output file is one micro-batch's (its txn); each generation in one, whole.
        per_batch: dict[tuple[str | None, int], int] = {}
        rows = writer.read.parquet(out).select("gen", F.input_file_name().alias("f")).collect()
        for r in rows:
            key = (txn_of(r["f"].rsplit("/", 1)[-1]), r["gen"])
            per_batch[key] = per_batch.get(key, 0) + 1
        by_gen: dict[int, list[int]] = {}
        for (_, gen), n in per_batch.items():
            by_gen.setdefault(gen, []).append(n)
        # (A generation an overwrite replaced before any listing saw it is never ingested.)
        assert all(n == [GENERATIONS.rows] for n in by_gen.values()), (
            f"rows of each generation per micro-batch: {by_gen}"
        )
        assert {0, raced.last} <= by_gen.keys(), f"generations ingested: {sorted(by_gen)}"
    finally:
        for session in (writer, *readers):
            session.stop()
