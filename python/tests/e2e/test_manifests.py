"""Symlink manifests through a real Connect server and a JVM-less client: engines that read a
table's file list (`_symlink_format_manifest/<partition>/manifest`) see exactly the committed
files after an append, a failed job, a dynamic partition overwrite and writes made with the
manifests off until ``generate_manifest`` or ``txcommit manifest`` repairs them, after
plain writes to a table whose property ``set_manifests`` switched on, and after a restore and
the VACUUM that follows it. DuckDB, reading the
listed files, counts what Spark with txcommit counts."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import txcommit
from txcommit.cli import manifest as manifest_cli
from txcommit.conformance.protocol import fail_at
from txcommit.maintenance import (
    MANIFEST_COLUMNS,
    PROPERTY_COLUMNS,
    committed_files,
    generate_manifest,
    history,
    restore,
    set_manifests,
    vacuum,
)
from txcommit.table.view import open_table

from support.servers import ServerProcess

MANIFESTS = "_symlink_format_manifest"


def listed(table: Path) -> dict[str, set[str]]:
    """Each partition's manifest (relative partition path: local paths it names)."""
    out = {}
    for manifest in (table / MANIFESTS).rglob("manifest"):
        partition = manifest.parent.relative_to(table / MANIFESTS).as_posix()
        lines = manifest.read_text().splitlines()
        assert all(line.startswith("file:/") for line in lines), lines
        out[partition] = {line.removeprefix("file:") for line in lines}
    return out


def committed(spark: SparkSession, table: Path) -> dict[str, set[str]]:
    """What txcommit's reader shows (paths relative to the table), by partition directory."""
    out: dict[str, set[str]] = {}
    for row in committed_files(spark, str(table)).collect():
        partition, _, _ = row["path"].rpartition("/")
        out.setdefault(partition, set()).add(str(table / row["path"]))
    return out


def duckdb_count(table: Path) -> int:
    files = sorted(f for names in listed(table).values() for f in names)
    found = duckdb.connect().execute(f"SELECT count(*) FROM read_parquet({files!r})").fetchone()
    assert found is not None
    return int(found[0])


def test_manifests_name_exactly_the_committed_files_after_every_kind_of_write(
    spark: SparkSession, table: Path, server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(table)
    txcommit.enable(spark)

    def with_manifests(df: DataFrame, mode: str) -> None:
        df.write.mode(mode).option("txcommit.manifests", "true").partitionBy("k").parquet(url)

    with_manifests(spark.range(0, 1000, 1, 4).withColumn("k", F.col("id") % 4), "append")
    assert listed(table) == committed(spark, table)
    assert set(listed(table)) == {"k=0", "k=1", "k=2", "k=3"}
    assert duckdb_count(table) == 1000

    boom = fail_at("id", 7, "injected task failure")
    failing = spark.range(0, 10, 1, 2).select(boom.alias("id")).withColumn("k", F.lit(2))
    with pytest.raises(Exception, match="injected task failure"):
        with_manifests(failing, "append")
    assert listed(table) == committed(spark, table), "the failed job's files are in no manifest"
    assert duckdb_count(table) == 1000

    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        with_manifests(spark.range(5000, 5020).withColumn("k", F.lit(1)), "overwrite")
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert listed(table) == committed(spark, table), "the replaced files left k=1's manifest"
    assert duckdb_count(table) == spark.read.parquet(url).count() == 770

    # Written with the manifests off (the first write's option recorded them on for the table,
    # so only a write's own option skips them): behind until generated again.
    later = spark.range(9000, 9007).withColumn("k", F.lit(3)).write
    later = later.option("txcommit.manifests", "false")
    later.mode("append").partitionBy("k").parquet(url)
    assert duckdb_count(table) == 770
    rows = generate_manifest(spark, url).collect()
    assert tuple(rows[0].asDict()) == MANIFEST_COLUMNS
    assert sorted(r["partition"] for r in rows) == ["k=0", "k=1", "k=2", "k=3"]
    assert listed(table) == committed(spark, table)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 777

    # The same from the command line.
    later.mode("append").partitionBy("k").parquet(url)
    assert manifest_cli.main([url, "--remote", server.url]) == 0
    assert "wrote 4 manifest(s), deleted 0" in capsys.readouterr().out
    assert duckdb_count(table) == spark.read.parquet(url).count() == 784


def test_generating_manifests_of_a_directory_that_is_no_table_names_it(
    spark: SparkSession, table: Path
) -> None:
    txcommit.enable(spark)
    table.mkdir(parents=True)
    (table / "part-0.parquet").write_bytes(b"not a table")
    with pytest.raises(Exception, match=str(table.name)):
        generate_manifest(spark, str(table)).collect()
    assert not (table / MANIFESTS).exists(), "nothing written outside a table"


def test_manifests_switched_on_for_the_table_are_written_by_every_plain_write(
    spark: SparkSession, table: Path
) -> None:
    url = str(table)
    txcommit.enable(spark)
    spark.range(0, 100, 1, 2).withColumn("k", F.col("id") % 2).write.partitionBy("k").parquet(url)
    assert not (table / MANIFESTS).exists()
    assert open_table(url).properties is None

    # A commit writes a checkpoint about every tenth time (its txn id decides): 1 or 2 here.
    newest = max(int(p.stem) for p in (table / "_txcommit" / "checkpoints").glob("*.json"))
    rows = set_manifests(spark, url, True).collect()
    # Every property of the table, how it is read (I32: txcommit created it, so log-only, as its
    # checkpoint 1 says, and every later one) included.
    assert [tuple(r) for r in rows] == [("manifests", "true", 1), ("reads", "log", newest)]
    assert tuple(rows[0].asDict()) == PROPERTY_COLUMNS
    assert listed(table) == committed(spark, table), "whole from the switch on"
    view = open_table(url)
    assert view.properties is not None and view.properties.manifests is True

    # Neither an option nor the session's switch: the table's property decides.
    spark.range(100, 130, 1, 2).withColumn("k", F.col("id") % 3).write.mode("append").partitionBy(
        "k"
    ).parquet(url)
    assert set(listed(table)) == {"k=0", "k=1", "k=2"}
    assert listed(table) == committed(spark, table)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 130


def test_a_restore_rewrites_the_manifests_and_vacuum_leaves_them_naming_only_files_there(
    spark: SparkSession, table: Path
) -> None:
    """Manifests on, an overwrite then ``TXCOMMIT RESTORE`` to the first version: engines
    reading the manifests read the restored rows, as Spark does, and after VACUUM deleted the
    overwrite's files no manifest names one."""
    url = str(table)
    txcommit.enable(spark)
    first = spark.range(0, 100, 1, 2).withColumn("k", F.col("id") % 2).write
    first.option("txcommit.manifests", "true").partitionBy("k").parquet(url)
    (v1,) = [r["txn"] for r in history(spark, url).collect()]
    overwrite = spark.range(500, 530).withColumn("k", F.lit(1)).write.mode("overwrite")
    overwrite.partitionBy("k").parquet(url)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 30
    restore(spark, url, v1).collect()
    assert listed(table) == committed(spark, table)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 100
    vacuum(spark, url, retain_hours=0, force=True).collect()
    assert all(Path(f).exists() for names in listed(table).values() for f in names)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 100
