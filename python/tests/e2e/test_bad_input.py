"""Bad input gets a clear error naming the file or key, and never loses or exposes data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import txcommit

from support.layout import committed


def committed_table(spark, table: Path, rows: int = 500) -> str:
    txcommit.enable(spark)
    # These tests damage the commit record; a checkpoint written by the commit (about one in
    # spark.txcommit.checkpoint.interval) would cover it, and readers would never read it.
    spark.conf.set("spark.txcommit.checkpoint.interval", "0")
    spark.range(rows).withColumn("k", F.col("id") % 2).write.partitionBy("k").parquet(str(table))
    (txn,) = committed(table)
    return txn


def test_truncated_commit_record_fails_the_read_naming_the_file(spark, table: Path):
    txn = committed_table(spark, table)
    record = table / "_txcommit" / "commits" / f"{txn}.json"
    record.write_bytes(record.read_bytes()[:40])
    with pytest.raises(Exception) as err:
        spark.read.parquet(str(table)).count()
    message = str(err.value)
    assert f"_txcommit/commits/{txn}.json" in message and "corrupt" in message
    # The documented escape hatch hides that transaction instead of failing.
    spark.conf.set("spark.txcommit.read.ignoreCorruptRecords", "true")
    assert spark.read.schema("id BIGINT, k INT").parquet(str(table)).count() == 0


def test_record_naming_a_file_outside_the_table_is_refused(spark, table: Path, workdir: Path):
    txn = committed_table(spark, table)
    outside = workdir / "secret.parquet"
    spark.range(7).write.mode("overwrite").parquet(str(workdir / "secret-src"))
    next(p for p in (workdir / "secret-src").glob("*.parquet")).rename(outside)
    record_path = table / "_txcommit" / "commits" / f"{txn}.json"
    record = json.loads(record_path.read_text())
    record["added"].append({"path": "../../secret.parquet", "size": 1})
    record["files"] += 1
    record_path.write_text(json.dumps(record))

    with pytest.raises(Exception, match="outside its table directory"):
        spark.read.parquet(str(table)).count()
    assert outside.exists(), "nothing outside the table is deleted"
    # and a new commit to the table (which rolls the log forward) does not touch it either
    spark.conf.set("spark.txcommit.read.ignoreCorruptRecords", "true")
    spark.range(3).withColumn("k", F.lit(0)).write.mode("append").partitionBy("k").parquet(
        str(table)
    )
    assert outside.exists()
    assert spark.read.parquet(str(table)).count() == 3


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.txcommit.read.filter", "maybe"),
        ("spark.txcommit.test.haltAt", "job.sometime"),
        ("spark.txcommit.commit.cleanupAttempts", "yes please"),
        ("spark.sql.sources.commitProtocolClass", "io.txcommit.spark.NoSuchProtocol"),
    ],
)
def test_nonsense_conf_values_are_refused_when_set(spark, key: str, value: str):
    with pytest.raises(Exception) as err:
        spark.conf.set(key, value)
    assert key in str(err.value) and value in str(err.value), "the error names key and value"
