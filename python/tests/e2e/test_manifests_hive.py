"""Another engine reads a txcommit table through its symlink manifests: Spark's own Hive support
(embedded Derby metastore) in a server WITHOUT txcommit declares the table as docs/readers.md
shows (`SymlinkTextInputFormat`, LOCATION the manifest directory, partitions registered with
`MSCK REPAIR TABLE ... SYNC PARTITIONS`) and reads exactly the rows txcommit's reader reads
after an append, a failed job, a driver killed between its commit and its manifests, an
overwrite and a dynamic partition overwrite, on the local file system and on S3. The failed
job and the overwrite leave files on disk that the same server, listing the directory, does
read. DuckDB, reading the files the manifests list, counts the same; on S3 it
reads copies fetched from the endpoint with boto3 (DuckDB's httpfs extension is not installed
offline).

The table is CSV: Hive reads the files a manifest lists as text (its SymlinkTextInputFormat
hands each one to TextInputFormat), so Parquet files come back as null rows, one per "line" of
their bytes. Parquet through the same manifests is for the engines that read the listed files
in the SerDe's format (Trino, Presto, Athena).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from txcommit._names import JOB_AFTER_RECORD
from txcommit.conformance.protocol import KEEP_JUNK, fail_at
from txcommit_store_s3.devkit.emulator import LocalS3

from support.servers import (
    ServerProcess,
    new_session,
    run_until_the_server_dies,
    running,
    server_with_s3,
)
from support.tables import FEATURE_STORES, TableRef, dynamic_overwrite

MANIFESTS = "_symlink_format_manifest"
Rows = list[tuple[int, int]]


def listed_files(table: TableRef) -> list[str]:
    """Every line of every manifest, each checked to be a data file of the table, fully
    qualified; relative to the table."""
    out = []
    for key in table.objects():
        if key.startswith(f"{MANIFESTS}/") and key.endswith("/manifest"):
            data = table.read(key)
            assert data is not None
            for line in data.decode().splitlines():
                qualified = f"file:{table.url}/" if table.local is not None else f"{table.url}/"
                assert line.startswith(qualified), line
                out.append(line.removeprefix(qualified))
    return sorted(out)


def duckdb_count(table: TableRef, copies: Path) -> int:
    """DuckDB's count of the rows of the files the manifests list."""
    files = []
    for rel in listed_files(table):
        if table.local is not None:
            files.append(str(table.local / rel))
        else:
            data = table.read(rel)
            assert data is not None, f"{rel} is listed and missing"
            (copies / rel).parent.mkdir(parents=True, exist_ok=True)
            (copies / rel).write_bytes(data)
            files.append(str(copies / rel))
    query = "SELECT count(*) FROM read_csv(?, header = false, columns = {'id': 'BIGINT'})"
    found = duckdb.connect().execute(query, [files]).fetchone()
    assert found is not None
    return int(found[0])


def rows(spark: SparkSession, start: int, end: int, k: Callable[[F.Column], F.Column]) -> DataFrame:
    return spark.range(start, end, 1, 2).withColumn("k", k(F.col("id")).cast("int"))


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_hive_reads_exactly_the_committed_rows_through_the_manifests(
    server: ServerProcess,
    hive_server: ServerProcess,
    any_table: TableRef,
    workdir: Path,
    tmp_path: Path,
    local_s3: LocalS3,
) -> None:
    table = any_table
    # One clock: this session reads at once what the server killed below committed.
    spark = new_session(server.url, one_clock=True)
    table.prepare(spark)
    hive = new_session(hive_server.url)
    name = f"events_{table.store}_{table.url.rsplit('/', 1)[-1]}".replace("-", "_")

    def write(df: DataFrame, mode: str = "append") -> None:
        df.write.mode(mode).option("txcommit.manifests", "true").partitionBy("k").csv(table.url)

    def as_rows(df: DataFrame) -> Rows:
        return sorted((r["id"], r["k"]) for r in df.select("id", "k").collect())

    def hive_rows() -> Rows:
        hive.sql(f"MSCK REPAIR TABLE {name} SYNC PARTITIONS")
        return as_rows(hive.table(name))

    def committed() -> Rows:
        return as_rows(spark.read.schema("id BIGINT").csv(table.url))

    def listing() -> Rows:
        """What Spark without txcommit reads listing the table's directory."""
        return as_rows(hive.read.schema("id BIGINT").csv(table.url))

    def all_agree(n: int) -> None:
        found = hive_rows()
        assert found == committed()
        assert len(found) == n
        assert duckdb_count(table, tmp_path / "copies") == n

    write(rows(spark, 0, 20, lambda id: id % 2))
    hive.sql(
        f"CREATE EXTERNAL TABLE {name} (id BIGINT) PARTITIONED BY (k INT) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
        "STORED AS INPUTFORMAT 'org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat' "
        "OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat' "
        f"LOCATION '{table.url}/{MANIFESTS}/'"
    )
    all_agree(20)

    # A failed job: its committed tasks' files stay on disk (KEEP_JUNK), where a listing reads
    # them.
    for key, value in KEEP_JUNK.items():
        spark.conf.set(key, value)
    boom = fail_at("id", 107, "injected task failure", after_ms=2000)
    with pytest.raises(Exception, match="injected task failure"):
        write(rows(spark, 100, 110, lambda id: F.lit(1)).select(boom.alias("id"), "k"))
    assert len(listing()) > 20, "the failed job left rows a directory listing reads"
    all_agree(20)

    # The driver dies after the commit record, before the manifests: the rows are committed,
    # and Hive still reads the manifests as they were (no k=2 to register).
    crashing = server_with_s3(workdir / f"hive-halt-{table.store}", local_s3)
    for _ in running(crashing):
        doomed = new_session(crashing.url)
        table.prepare(doomed)
        doomed.conf.set("spark.txcommit.test.haltAt", JOB_AFTER_RECORD)
        late = rows(doomed, 200, 206, lambda id: F.lit(2))
        run_until_the_server_dies(crashing, doomed, lambda: write(late))  # noqa: B023 - runs now
    assert len(committed()) == 26
    assert hive_rows() == [(id, k) for id, k in committed() if k != 2]
    # The next write with manifests on, to another partition, rewrites every manifest.
    write(rows(spark, 300, 303, lambda id: F.lit(0)))
    all_agree(29)

    # An overwrite empties k=1 (and k=2): their manifests go, and the partitions with them.
    write(rows(spark, 400, 406, lambda id: F.when(id % 2 == 0, 0).otherwise(3)), "overwrite")
    assert len(listing()) > 6, "the replaced files are on disk"
    all_agree(6)

    with dynamic_overwrite(spark):
        write(rows(spark, 500, 502, lambda id: F.lit(3)), "overwrite")
    all_agree(5)
    assert {k for _, k in hive_rows()} == {0, 3}
    spark.stop()
    hive.stop()
