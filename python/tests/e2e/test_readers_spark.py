"""Readers outside Spark against tables Spark wrote with txcommit, end to end: the JVM-less
Connect client writes committed appends (one with a task that failed once and left its
attempt's file), an aborted job (a failing UDF, its files kept on disk as a dead executor
would leave them) and an uncommitted copy of a data file; then ``txcommit.dataset`` (pyarrow),
DuckDB, polars, the fsspec file system and ``txcommit ls``/``log`` must see exactly the rows
and files Spark with the txcommit read filter sees, on the local file system and on S3.

A directory holding tables (each overwritten or appended to), each table and a partition
directory of one are read the same way by Spark, ``txcommit.dataset`` and ``txcommit ls``.
Overwrites and write-id re-runs are compared in test_readers_replacing.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit._names import NEW_TABLE_READS_CONF
from txcommit.cli.ls import main as ls_main
from txcommit.conformance.protocol import KEEP_JUNK, fail_at, fail_first_attempt_at
from txcommit.table.names import txn_of

from support.tables import (
    TableRef,
    check_readers_see,
    cli_history,
    make_table,
    reader_target,
    spark_files,
)


def write_mixed_history(spark, table: TableRef) -> None:
    """Two committed appends (a failed attempt's file left in the second), one aborted job
    whose committed tasks' files stay on disk, and one never-committed copy of a file."""
    table.prepare(spark)
    for k, v in KEEP_JUNK.items():
        spark.conf.set(k, v)

    def frame(start: int, end: int, parts: int):
        return spark.range(start, end, 1, parts).withColumn("k", (F.col("id") % 3).cast("int"))

    frame(0, 300, 3).write.mode("append").partitionBy("k").parquet(table.url)
    # The last row of task 1 fails once: that attempt wrote (and left) most of its rows.
    retried = frame(300, 600, 3).select(fail_first_attempt_at(499)("id").alias("id"), "k")
    retried.write.mode("append").partitionBy("k").parquet(table.url)

    oops = fail_at("id", 999, "oops!", after_ms=1500)  # the other tasks commit their files first

    with pytest.raises(Exception, match="oops"):
        frame(600, 1000, 4).select(oops.alias("id"), "k").write.mode("append").partitionBy(
            "k"
        ).parquet(table.url)
    table.plant_uncommitted_copy()


@pytest.mark.parametrize(
    ("store", "reads"), [("local", "log"), ("s3", "log"), ("local", "listing"), ("s3", "listing")]
)
def test_readers_outside_spark_see_exactly_what_spark_sees(
    spark,
    store: str,
    reads: str,
    workdir: Path,
    request: pytest.FixtureRequest,
    capsys,
    monkeypatch,
) -> None:
    """On both kinds of table (docs/protocol.md, I32): a log-only one, where a file written
    without txcommit is hidden, and one read by listing, where it shows."""
    s3 = request.getfixturevalue("local_s3") if store == "s3" else None
    client = request.getfixturevalue("s3_client") if store == "s3" else None
    table = make_table(store, workdir, client)
    spark.conf.set(NEW_TABLE_READS_CONF, reads)
    try:
        write_mixed_history(spark, table)
    finally:
        spark.conf.unset(NEW_TABLE_READS_CONF)
    # A file written without txcommit: a copy of a committed one (its rows a second time).
    src = next(k for k in table.data_files() if k.startswith("k=0/") and txn_of(k))
    body = table.read(src)
    assert body is not None
    table.write("k=0/written-without-txcommit.parquet", body)
    plain_rows = pq.read_table(pa.BufferReader(body)).num_rows

    df = spark.read.parquet(table.url)
    spark_rows = sorted((r["id"], r["k"]) for r in df.collect())
    assert len(set(spark_rows)) == 600
    assert len(spark_rows) == 600 + (plain_rows if reads == "listing" else 0)
    files = spark_files(df, table)
    # The junk is real: files of the aborted job, the failed attempt and the planted copy.
    junk = set(table.data_files()) - files
    assert len(junk) >= 3, junk

    url, options = reader_target(table, s3)
    check_readers_see(table, url, options, spark_rows, files)
    history = cli_history(url, options, files, capsys, monkeypatch)
    states = sorted(r["state"] for r in history)
    assert states == ["aborted", "committed", "committed"]
    committed = [r for r in history if r["state"] == "committed"]
    assert sum(r["files"] for r in committed) == len([f for f in files if txn_of(f)])
    assert all(r["operation"] == "append" and r["committedAt"] for r in committed)


def test_a_directory_of_tables_each_table_and_a_partition_read_alike(
    spark, workdir: Path, capsys
) -> None:
    """``events`` holds two tables: ``date=1`` written (10 rows) then overwritten (5 rows),
    ``date=2`` written (7 rows); both partitioned by k. Spark reads 12 rows at ``events``, and
    so must every reader outside Spark, listing no file the overwrite removed."""
    events = make_table("local", workdir, None)
    events.prepare(spark)

    def write(table: str, n: int, mode: str) -> None:
        frame = spark.range(n).withColumn("k", (F.col("id") % 2).cast("int"))
        frame.write.mode(mode).partitionBy("k").parquet(f"{events.url}/{table}")

    write("date=1", 10, "append")
    write("date=1", 5, "overwrite")
    write("date=2", 7, "append")
    listed: dict[str, set[str]] = {}
    for root, rows in (("", 12), ("date=1", 5), ("date=2", 7), ("date=2/k=1", 3)):
        url = f"{events.url}/{root}".rstrip("/")
        df = spark.read.parquet(url)
        spark_files = {
            unquote(r[0]).split(f"{url}/", 1)[1]
            for r in df.select(F.input_file_name()).distinct().collect()
        }
        assert df.count() == rows, f"Spark at {url}"
        assert txcommit.dataset(url).count_rows() == rows, f"txcommit.dataset at {url}"
        capsys.readouterr()
        assert ls_main([url, "--json"]) == 0
        listed[root] = {f["path"] for f in json.loads(capsys.readouterr().out)}
        assert listed[root] == spark_files, f"txcommit ls at {url}"
    # The overwritten files are still on disk: the readers hide them, not the store.
    assert events.local is not None
    on_disk = {p.relative_to(events.local).as_posix() for p in events.local.rglob("part-*")}
    assert on_disk > listed[""] and any(f.startswith("date=1/") for f in on_disk - listed[""])
