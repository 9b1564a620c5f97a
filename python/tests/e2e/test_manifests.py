"""Symlink manifests through a real Connect server and a JVM-less client: engines that read a
table's file list (`_symlink_format_manifest/<partition>/manifest`) see exactly the committed
files after an append, a failed job, a dynamic partition overwrite and writes made with the
manifests off until ``generate_manifest`` or ``txcommit manifest`` repairs them. DuckDB,
reading the listed files, counts what Spark with txcommit counts."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import txcommit
from txcommit.cli import manifest as manifest_cli
from txcommit.conformance.protocol import fail_at
from txcommit.maintenance import MANIFEST_COLUMNS, committed_files, generate_manifest

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

    # Written with the manifests off: the manifests are behind until generated again.
    later = spark.range(9000, 9007).withColumn("k", F.lit(3))
    later.write.mode("append").partitionBy("k").parquet(url)
    assert duckdb_count(table) == 770
    rows = generate_manifest(spark, url).collect()
    assert tuple(rows[0].asDict()) == MANIFEST_COLUMNS
    assert sorted(r["partition"] for r in rows) == ["k=0", "k=1", "k=2", "k=3"]
    assert listed(table) == committed(spark, table)
    assert duckdb_count(table) == spark.read.parquet(url).count() == 777

    # The same from the command line.
    later.write.mode("append").partitionBy("k").parquet(url)
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
