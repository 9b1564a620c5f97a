"""Per-session switching from a JVM-less client, every file format, tables and the read side."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

import txcommit

from support.layout import committed, committed_paths, data_files, plant_uncommitted_copy, txn_of
from support.servers import new_session

PROTOCOL_KEY = "spark.sql.sources.commitProtocolClass"
FORMATS = ["parquet", "json", "csv", "orc"]


def frame(spark, n: int = 1000):
    return spark.range(n).withColumn("k", (F.col("id") % 3).cast("int"))


def read(spark, fmt: str, path: Path):
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").schema("id BIGINT, k INT")
    if fmt == "json":
        reader = reader.schema("id BIGINT, k INT")
    return reader.load(str(path))


@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_commits_transactionally(spark, table: Path, fmt: str, partitioned: bool):
    txcommit.enable(spark)
    writer = frame(spark).write.mode("append").format(fmt)
    if fmt == "csv":
        writer = writer.option("header", "true")
    if partitioned:
        writer = writer.partitionBy("k")
    writer.save(str(table))
    writer.save(str(table))

    records = committed(table)
    assert len(records) == 2, "one commit record per job"
    on_disk = {str(p.relative_to(table)) for p in data_files(table)}
    assert on_disk == committed_paths(table), "every file is named by its record, nothing else"
    assert all(txn_of(table / p) in records for p in on_disk)
    if partitioned:
        assert {p.split("/")[0] for p in on_disk} == {"k=0", "k=1", "k=2"}
    assert read(spark, fmt, table).count() == 2000

    # A file of a transaction that never committed holds real rows, and stays invisible.
    plant_uncommitted_copy(table)
    assert read(spark, fmt, table).count() == 2000
    summary = (table / "_SUCCESS").read_text()
    assert '"success" : true' in summary and '"files"' in summary


def test_save_as_table_and_insert_into_are_transactional(spark, server):
    txcommit.enable(spark)
    name = "tx_table_" + str(abs(hash(server.url)) % 10_000)
    frame(spark).write.mode("overwrite").partitionBy("k").saveAsTable(name)
    frame(spark, 300).write.insertInto(name)
    assert spark.table(name).count() == 1300
    location = server.workdir / "warehouse" / name  # managed table: spark.sql.warehouse.dir
    assert len(committed(location)) == 2
    assert {str(p.relative_to(location)) for p in data_files(location)} == committed_paths(location)
    plant_uncommitted_copy(location)
    spark.sql(f"REFRESH TABLE {name}")
    assert spark.table(name).count() == 1300


def test_enable_is_per_session_and_other_sessions_are_unaffected(spark, server, table: Path):
    other = new_session(server.url)
    try:
        txcommit.enable(spark)
        assert txcommit.is_enabled(spark)
        assert not txcommit.is_enabled(other)
        frame(other).write.parquet(str(table / "plain"))
        frame(spark).write.parquet(str(table / "tx"))
        assert not committed(table / "plain")
        assert all(txn_of(p) is None for p in data_files(table / "plain"))
        assert all(txn_of(p) for p in data_files(table / "tx"))
        assert other.read.parquet(str(table / "plain")).count() == 1000

        txcommit.disable(spark)
        assert not txcommit.is_enabled(spark)
        frame(spark).write.parquet(str(table / "after"))
        assert all(txn_of(p) is None for p in data_files(table / "after"))
    finally:
        other.stop()


def test_transactional_scope_restores_the_previous_protocol(spark, table: Path):
    spark.conf.unset(PROTOCOL_KEY)
    with txcommit.transactional(spark):
        assert txcommit.is_enabled(spark)
        frame(spark).write.parquet(str(table / "inside"))
    assert not txcommit.is_enabled(spark)
    frame(spark).write.parquet(str(table / "outside"))
    assert all(txn_of(p) for p in data_files(table / "inside"))
    assert all(txn_of(p) is None for p in data_files(table / "outside"))


def test_read_filter_can_be_switched_off_per_session(spark, table: Path):
    txcommit.enable(spark)
    frame(spark).write.parquet(str(table))
    plant_uncommitted_copy(table)
    assert spark.read.parquet(str(table)).count() == 1000
    spark.conf.set("spark.txcommit.read.filter", "false")
    assert spark.read.parquet(str(table)).count() > 1000, "raw view shows the uncommitted file"


def test_partition_with_only_uncommitted_files_disappears(spark, table: Path):
    txcommit.enable(spark)
    frame(spark).write.partitionBy("k").parquet(str(table))
    ghost = table / "k=7"
    ghost.mkdir()
    planted = plant_uncommitted_copy(table)
    planted.rename(ghost / planted.name)
    ks = sorted(r["k"] for r in spark.read.parquet(str(table)).select("k").distinct().collect())
    assert ks == [0, 1, 2]


def test_many_partitions_listed_in_parallel_are_filtered(spark, table: Path):
    # Past 32 paths Spark lists on executors: the filter must travel there and still work.
    txcommit.enable(spark)
    spark.range(4000).withColumn("k", F.col("id") % 40).write.partitionBy("k").parquet(str(table))
    for _ in range(3):
        plant_uncommitted_copy(table)
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "8")
    assert spark.read.parquet(str(table)).count() == 4000


def test_streaming_file_source_sees_committed_files_only(spark, table: Path, workdir: Path):
    txcommit.enable(spark)
    frame(spark).write.parquet(str(table))
    plant_uncommitted_copy(table)
    name = f"stream_{table.name}"
    query = (
        spark.readStream.schema("id BIGINT, k INT")
        .parquet(str(table))
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(workdir / "checkpoints" / name))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert spark.table(name).count() == 1000


def test_data_written_without_txcommit_stays_readable(spark, table: Path):
    frame(spark).write.parquet(str(table))
    txcommit.enable(spark)
    frame(spark).write.mode("append").parquet(str(table))
    assert spark.read.parquet(str(table)).count() == 2000


def test_dynamic_partition_overwrite_still_works_with_txcommit_enabled(spark, table: Path):
    # Same result as Spark's; with txcommit one replacing commit (test_replace has the details).
    txcommit.enable(spark)
    frame(spark).write.partitionBy("k").parquet(str(table))
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    spark.range(10).withColumn("k", F.lit(1)).write.mode("overwrite").partitionBy("k").parquet(
        str(table)
    )
    counts = {
        r["k"]: r["count"] for r in spark.read.parquet(str(table)).groupBy("k").count().collect()
    }
    assert counts == {0: 334, 1: 10, 2: 333}
