"""Readers outside Spark against overwritten and write-id-replaced tables Spark wrote, end to
end (local file system and S3): ``txcommit.dataset``, DuckDB, polars, the fsspec file system
and ``txcommit ls``/``txcommit log`` see exactly the rows and files Spark with the read filter
sees after ``mode("overwrite")``, a dynamic partition overwrite and a write-id re-run, while
the replaced files are still on disk (logical deletes, removed only by VACUUM).

Replacing commits (``_txcommit/replace/<sequence>.json``, ``.option("txcommit.writeId", ...)``)
are what keep the replaced files on disk yet hidden: docs/protocol.md, I10 to I14.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import functions as F

from txcommit.maintenance import checkpoint

from support.tables import (
    TableRef,
    check_readers_see,
    cli_history,
    dynamic_overwrite,
    make_table,
    reader_target,
    spark_files,
)

WRITE_ID = "txcommit.writeId"


@pytest.mark.parametrize("store", ["local", "s3"])
def test_readers_see_overwrites_and_write_id_reruns_as_spark_does(
    spark, store: str, workdir: Path, request: pytest.FixtureRequest, capsys, monkeypatch
) -> None:
    s3 = request.getfixturevalue("local_s3") if store == "s3" else None
    client = request.getfixturevalue("s3_client") if store == "s3" else None
    table: TableRef = make_table(store, workdir, client)
    table.prepare(spark)
    # No checkpoint by chance: this test writes the table's first one itself.
    spark.conf.set("spark.txcommit.checkpoint.interval", "0")

    def rows(start: int, n: int, parts: int = 2):
        return spark.range(start, start + n, 1, parts).withColumn(
            "k", (F.col("id") % 3).cast("int")
        )

    rows(0, 90).write.mode("append").partitionBy("k").parquet(table.url)
    # A whole-table overwrite: the first 90 rows are logically deleted.
    rows(1000, 30, 3).write.mode("overwrite").partitionBy("k").parquet(table.url)
    rows(2000, 12).write.mode("append").partitionBy("k").parquet(table.url)
    # A dynamic partition overwrite replaces only the partitions it writes (k=0).
    with dynamic_overwrite(spark):
        rows(3000, 9).where("k = 0").write.mode("overwrite").partitionBy("k").parquet(table.url)
    # A write id, then its re-run with a different number of files: the re-run replaces
    # exactly what the first run added.
    rows(4000, 6, 3).write.mode("append").option(WRITE_ID, "daily").partitionBy("k").parquet(
        table.url
    )
    rows(5000, 4, 1).write.mode("append").option(WRITE_ID, "daily").partitionBy("k").parquet(
        table.url
    )

    df = spark.read.parquet(table.url)
    spark_rows = sorted((r["id"], r["k"]) for r in df.collect())
    assert {i // 1000 for i, _ in spark_rows} == {1, 2, 3, 5}
    files = spark_files(df, table)
    replaced = set(table.data_files()) - files
    assert replaced, "overwritten and replaced files stay on disk until VACUUM"
    assert any(k.startswith("_txcommit/replace/") for k in table.objects())

    url, options = reader_target(table, s3)
    check_readers_see(table, url, options, spark_rows, files)
    history = cli_history(url, options, files, capsys, monkeypatch)
    ops = [r["operation"] for r in sorted(history, key=lambda r: r["txn"])]
    assert ops == ["append", "overwrite", "append", "overwrite-partitions", "write-id", "write-id"]
    sequences = [r["sequence"] for r in sorted(history, key=lambda r: r["txn"])]
    assert sequences == [None, 1, None, 2, 3, 4]
    rerun = max(history, key=lambda r: r["txn"])
    assert rerun["writeId"] == "daily" and rerun["removedFiles"] >= 1

    # A checkpoint folds all six commits in; Spark and every reader outside it see the same.
    row = checkpoint(spark, table.url).collect()[0]
    written = (row["written"], row["checkpoint"], row["transactions"], row["through"])
    # Checkpoint 1 is the one that made the table log-only when it was created (I32).
    assert written == (True, 2, 6, 4)
    assert checkpoint(spark, table.url).collect()[0]["written"] is False  # up to date
    # A damaged newer checkpoint is skipped by every reader (it only summarises the records).
    table.write(
        f"_txcommit/checkpoints/{3:020d}.json",
        (table.read(f"_txcommit/checkpoints/{2:020d}.json") or b"")[:60],
    )
    df = spark.read.parquet(table.url)
    assert sorted((r["id"], r["k"]) for r in df.collect()) == spark_rows
    assert spark_files(df, table) == files
    check_readers_see(table, url, options, spark_rows, files)
    assert len(cli_history(url, options, files, capsys, monkeypatch)) == 6
    spark.conf.unset("spark.txcommit.checkpoint.interval")
