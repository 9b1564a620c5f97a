"""At most one transaction log on any path (docs/protocol.md, I18), on every store.

Writing into a partition directory of a table (``df.write.parquet("<table>/k=1")``) would
create a second log inside the table: the table's readers would then hide the table's own
files in that directory, and VACUUM of the table would delete the inner table's files as never
committed. Such a write is refused before anything is written, with the write that does it
right; so is a write above a table. Nothing is remembered between jobs, so a tree changed
since the last write (a table deleted, another written in its old partition directory) is
checked again. Where two logs already share a path, VACUUM of either table refuses (it cannot
tell whose files are whose), and so does an overwrite of either, naming both logs.
"""

from __future__ import annotations

import shutil
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit._names import NEW_TABLE_READS_CONF
from txcommit.maintenance import vacuum
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, encode_record

from support.tables import FEATURE_STORES, TableRef, reader_target


def remove_tree(table: TableRef) -> None:
    """``rm -r`` of the table directory, log and all."""
    if table.local is not None:
        shutil.rmtree(table.local)
    elif table.hdfs is not None:
        table.hdfs.rm(table.root, recursive=True)
    else:
        for key in table.objects():
            table.delete(key)


def k_counts(spark, url: str) -> dict[int, int]:
    return {r["k"]: r["count"] for r in spark.read.parquet(url).groupBy("k").count().collect()}


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_a_write_into_a_partition_directory_is_refused_and_the_table_keeps_its_data(
    store_spark, any_table: TableRef
):
    spark, table = store_spark, any_table
    table.prepare(spark)
    spark.range(1000).withColumn("k", F.col("id") % 4).write.partitionBy("k").parquet(table.url)
    with pytest.raises(Exception, match="inside the txcommit table") as refused:
        spark.range(5).write.mode("append").parquet(f"{table.url}/k=1")
    assert 'partitionBy("k")' in str(refused.value), "the error says how to write the partition"
    assert not [k for k in table.objects() if k.startswith("k=1/_txcommit/")], "no second log"
    assert k_counts(spark, table.url) == {0: 250, 1: 250, 2: 250, 3: 250}

    # The write the error proposes lands in the table's own log.
    spark.range(5).withColumn("k", F.lit(1)).write.partitionBy("k").mode("append").parquet(
        table.url
    )
    assert k_counts(spark, table.url)[1] == 255
    vacuum(spark, table.url, retain_hours=0, force=True).collect()
    assert sum(k_counts(spark, table.url).values()) == 1005, "VACUUM deletes no committed file"


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_a_write_above_a_table_is_refused(store_spark, any_table: TableRef):
    spark, table = store_spark, any_table
    table.prepare(spark)
    spark.range(10).write.parquet(f"{table.url}/inner")  # a table one level down
    with pytest.raises(Exception, match="holds the txcommit table"):
        spark.range(10).write.mode("append").parquet(table.url)
    assert not [k for k in table.objects() if k.startswith("_txcommit/")], "no log above it"
    assert spark.read.parquet(f"{table.url}/inner").count() == 10


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_a_tree_nested_by_an_older_version_loses_no_data_for_readers(
    store_spark, any_table: TableRef, request: pytest.FixtureRequest
):
    """A log inside a table, as a version without the one-log-per-path check wrote it: Spark
    and the Python readers show the table's own files in that directory and the nested log's
    committed file, not a transaction neither log committed."""
    spark, table = store_spark, any_table
    table.prepare(spark)
    # A table that older version wrote is read by listing: it has no read mode (a log-only table
    # reads only what its own log names, docs/protocol.md I32).
    spark.conf.set(NEW_TABLE_READS_CONF, "listing")
    try:
        spark.range(1000).withColumn("k", F.col("id") % 4).write.partitionBy("k").parquet(table.url)
    finally:
        spark.conf.unset(NEW_TABLE_READS_CONF)
    # The nested table's data: a copy of one of the table's files under a new txn, committed
    # by a log in k=1; and one more copy under a txn that never committed.
    sample = next(k for k in table.data_files() if k.startswith("k=1/"))
    body = table.read(sample)
    assert body is not None
    rows = pq.read_table(pa.BufferReader(body)).num_rows
    inner, lost = generate_txn(), generate_txn()
    inner_file = data_file_name("", 0, inner, 1, "-c000.snappy.parquet")
    table.write(f"k=1/{inner_file}", body)
    table.write(f"k=1/{data_file_name('', 0, lost, 2, '-c000.snappy.parquet')}", body)
    record = CommitRecord(
        txn=inner,
        token="t",
        job_id="j",
        started_at=1,
        committed_at=2,
        added=(AddedFile(inner_file, len(body)),),
        app_id=None,
        writer="older-version",
    )
    table.write(f"k=1/_txcommit/commits/{inner}.json", encode_record(record))
    # The nested log's file is judged by the clock cut, which dates another application's
    # commit by the store's time on its record: it is read once the clock allowance
    # (spark.txcommit.read.maxClockSkewMs, 1 s) has passed since the record was written.
    time.sleep(1.5)

    assert k_counts(spark, table.url) == {0: 250, 1: 250 + rows, 2: 250, 3: 250}
    s3 = request.getfixturevalue("local_s3") if table.local is None else None
    url, options = reader_target(table, s3)
    assert txcommit.dataset(url, storage_options=options).count_rows() == 1000 + rows

    # VACUUM of the inner table cannot tell the outer table's files in k=1 (committed by the
    # outer log) from files that never committed, and VACUUM of the outer one cannot tell the
    # inner table's: both refuse, naming both logs, and delete nothing.
    inner_log, outer_log = f"{table.url}/k=1/_txcommit", f"{table.url}/_txcommit"
    with pytest.raises(Exception, match="lies above this table's own") as refused:
        vacuum(spark, f"{table.url}/k=1", retain_hours=0, force=True).collect()
    assert outer_log in str(refused.value) and inner_log in str(refused.value)
    with pytest.raises(Exception, match="more transaction log") as refused:
        vacuum(spark, table.url, retain_hours=0, force=True).collect()
    assert outer_log in str(refused.value) and inner_log in str(refused.value)
    # An overwrite of either table could not hide the other's files there: refused.
    with pytest.raises(Exception, match="holds a transaction log of its own") as refused:
        spark.range(4).withColumn("k", F.lit(1)).write.mode("overwrite").partitionBy("k").parquet(
            table.url
        )
    assert outer_log in str(refused.value) and inner_log in str(refused.value)
    with pytest.raises(Exception, match="holds a transaction log of its own") as refused:
        spark.range(3).write.mode("overwrite").parquet(f"{table.url}/k=1")
    assert outer_log in str(refused.value) and inner_log in str(refused.value)
    assert k_counts(spark, table.url) == {0: 250, 1: 250 + rows, 2: 250, 3: 250}
    assert txcommit.dataset(url, storage_options=options).count_rows() == 1000 + rows


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_a_table_deleted_and_written_again_in_its_partition_is_checked_again(
    store_spark, any_table: TableRef
):
    """The server checked the table's path when it wrote it; after the table is deleted and a
    new table written in its old partition directory, an append to the old path would put a
    log above that table: refused, though the same path passed before."""
    spark, table = store_spark, any_table
    table.prepare(spark)
    df = spark.range(1000).selectExpr("id", "id % 4 as k")
    df.write.partitionBy("k").parquet(table.url)
    table.row_counts(set(table.committed()))  # written after the job: wait, then delete it too
    remove_tree(table)
    spark.range(5).write.parquet(f"{table.url}/k=1")  # no table above it any more
    with pytest.raises(Exception, match="holds the txcommit table"):
        df.write.mode("append").partitionBy("k").parquet(table.url)
    assert not [k for k in table.objects() if k.startswith("_txcommit/")], "no log above it"
    assert spark.read.parquet(f"{table.url}/k=1").count() == 5
    vacuum(spark, f"{table.url}/k=1", retain_hours=0, force=True).collect()
    assert spark.read.parquet(f"{table.url}/k=1").count() == 5
