"""The schema guard through a real Connect server and a JVM-less client: an append whose schema
cannot be read together with the table's is refused before its commit point, naming the column
and both types; ``mergeSchema`` admits added columns; an overwrite replaces the schema; HISTORY
and ``txcommit log`` show where the schema changed; a table whose records carry no schema keeps
working."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

import txcommit
from txcommit.cli import log as log_cli
from txcommit.maintenance import history
from txcommit.table.names import data_file_name, generate_txn
from txcommit.table.records import AddedFile, CommitRecord, encode_record

from support import streams


def _history_schemas(spark: SparkSession, url: str) -> list[tuple[str, str | None]]:
    """(operation, schema) of each committed transaction, oldest first."""
    rows = history(spark, url).where("state = 'committed'").orderBy("committedAt")
    return [(r["operation"], r["schema"]) for r in rows.collect()]


def test_an_append_that_changes_a_column_type_is_refused_and_the_table_still_reads(
    spark: SparkSession, table: Path
) -> None:
    url = str(table)
    txcommit.enable(spark)
    spark.range(5).write.parquet(url)
    with pytest.raises(txcommit.SchemaMismatchError) as caught, txcommit.typed_errors():
        spark.range(3).selectExpr("cast(id as string) as id").write.mode("append").parquet(url)
    message = str(caught.value)
    assert "column 'id': the table has BIGINT, this write STRING" in message, message
    assert "overwrite" in message, "the error says what to do"
    assert spark.read.parquet(url).count() == 5
    assert _history_schemas(spark, url) == [("append", "id BIGINT")], "nullable unless enforced"


def test_added_columns_need_merge_schema_not_null_holds_an_overwrite_replaces(
    spark: SparkSession, table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(table)
    txcommit.enable(spark)
    spark.conf.set("spark.txcommit.enforceNotNull", "true")
    spark.range(3).write.parquet(url)  # id BIGINT NOT NULL
    extra = spark.range(3, 5).selectExpr("id", "'x' as extra")
    with pytest.raises(txcommit.SchemaMismatchError, match="mergeSchema"), txcommit.typed_errors():
        extra.write.mode("append").parquet(url)
    extra.write.mode("append").option("mergeSchema", "true").parquet(url)
    rows = spark.read.option("mergeSchema", "true").parquet(url).orderBy("id").collect()
    assert [(r["id"], r["extra"]) for r in rows] == [
        (0, None),
        (1, None),
        (2, None),
        (3, "x"),
        (4, "x"),
    ]
    nullable = spark.range(5, 7).selectExpr("if(id > 5, id, null) as id", "'y' as extra")
    with pytest.raises(txcommit.SchemaMismatchError, match="NOT NULL"), txcommit.typed_errors():
        nullable.write.mode("append").parquet(url)
    spark.range(2).selectExpr("cast(id as string) as id").write.mode("overwrite").parquet(url)
    assert sorted(r["id"] for r in spark.read.parquet(url).collect()) == ["0", "1"]
    spark.range(2, 3).selectExpr("cast(id as string) as id").write.mode("append").parquet(url)

    changes = _history_schemas(spark, url)
    assert [op for op, _ in changes] == ["append", "append", "overwrite", "append"]
    assert changes[0][1] == "id BIGINT NOT NULL"
    assert changes[1][1] == "id BIGINT NOT NULL, extra STRING", "an added column is nullable"
    assert changes[2][1] == "id STRING NOT NULL"
    assert changes[3][1] is None, "an append that keeps the schema changes nothing"
    capsys.readouterr()
    assert log_cli.main([url, "--json"]) == 0
    logged = [r for r in json.loads(capsys.readouterr().out) if r["state"] == "committed"]
    assert [r["schema"] for r in reversed(logged)] == [s for _, s in changes]


def _table_from_before_the_guard(table: Path) -> None:
    """A table as a version without the schema guard left it: one committed append whose
    record carries no schema (built by hand: data written by pyarrow, the record encoded)."""
    txn = generate_txn()
    name = data_file_name("", 0, txn, 1, ".c000.snappy.parquet")
    table.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([0, 1, 2], pa.int64())}), table / name)
    commits = table / "_txcommit" / "commits"
    commits.mkdir(parents=True)
    size = (table / name).stat().st_size
    record = CommitRecord(txn, "tok", "job", 1, 2, (AddedFile(name, size),), None, "old")
    (commits / f"{txn}.json").write_bytes(encode_record(record))


@pytest.mark.parametrize("merge_schema", [False, True], ids=["plain", "mergeSchema"])
def test_a_write_partitioned_unlike_the_table_is_refused_naming_the_partitioning(
    spark: SparkSession, table: Path, merge_schema: bool
) -> None:
    """An unpartitioned append to a table partitioned by `day` (its frame has a `day` column):
    the advice names the partitioning, not mergeSchema, and mergeSchema does not let it
    through (its files at the root would make Spark and Python read different rows). The
    advice followed commits, and every reader then reads the same rows; the other way round
    (partitioned into an unpartitioned table) is refused too."""
    url = str(table)
    txcommit.enable(spark)
    frame = spark.range(10).selectExpr("id", "cast(id % 2 as int) as day")
    frame.write.partitionBy("day").parquet(url)
    writer = frame.write.mode("append")
    if merge_schema:
        writer = writer.option("mergeSchema", "true")
    with pytest.raises(txcommit.SchemaMismatchError) as caught:
        writer.parquet(url)
    message = str(caught.value)
    assert "the table's files are partitioned by (day), this write's by ()" in message, message
    assert 'partitionBy("day")' in message and "mergeSchema" not in message, message
    assert caught.value.getMessageParameters()["columns"] == "day"  # type: ignore[index]
    frame.write.mode("append").partitionBy("day").parquet(url)
    assert spark.read.parquet(url).count() == 20
    assert txcommit.dataset(url).count_rows() == 20, "Spark and Python read the same rows"
    flat = str(table) + "-flat"
    frame.write.parquet(flat)
    with pytest.raises(
        txcommit.SchemaMismatchError, match=r"partitioned by \(\), this write's by \(day\)"
    ):
        frame.write.mode("append").partitionBy("day").parquet(flat)
    assert spark.read.parquet(flat).count() == txcommit.dataset(flat).count_rows() == 10


def test_a_table_whose_records_carry_no_schema_keeps_working(
    spark: SparkSession, table: Path
) -> None:
    """Records written before the guard carry no schema: nothing is checked against them, and
    the first record that carries one defines the table's schema from then on."""
    url = str(table)
    _table_from_before_the_guard(table)
    txcommit.enable(spark)
    spark.range(3, 5).selectExpr("id", "id * 2 as twice").write.mode("append").parquet(url)
    assert spark.read.option("mergeSchema", "true").parquet(url).count() == 5
    with pytest.raises(txcommit.SchemaMismatchError, match="twice"), txcommit.typed_errors():
        spark.range(1).selectExpr("id", "'2' as twice").write.mode("append").parquet(url)
    assert spark.read.option("mergeSchema", "true").parquet(url).count() == 5
    assert [s for _, s in _history_schemas(spark, url)] == [None, "id BIGINT, twice BIGINT"]


def test_a_streaming_batch_is_judged_as_an_append(spark: SparkSession, table: Path) -> None:
    """The file sink's micro-batch goes through the same guard: a batch whose column changed
    type fails the query before its record."""
    url = str(table)
    txcommit.enable(spark)
    streams.configure(spark, "local")
    spark.range(3).selectExpr("cast(id as string) as value").write.parquet(url)
    query = streams.rate_to_parquet(spark, str(table.parent / f"{table.name}-checkpoint"), url)
    try:
        deadline = time.monotonic() + 90
        while query.exception() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        failure = str(query.exception())
    finally:
        query.stop()
    assert "SchemaMismatchException" in failure, failure
    assert "column 'value': the table has STRING, this write BIGINT" in failure, failure
    assert _history_schemas(spark, url) == [("append", "value STRING")], "the batch left no record"
