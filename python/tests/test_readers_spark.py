"""Readers outside Spark against tables Spark wrote with txcommit, end to end: the JVM-less
Connect client writes committed appends (one with a task that failed once and left its
attempt's file), an aborted job (a failing UDF, its files kept on disk as a dead executor
would leave them) and an uncommitted copy of a data file; then ``txcommit.dataset`` (pyarrow),
DuckDB, polars, the fsspec file system and ``txcommit ls``/``log`` must see exactly the rows
and files Spark with the txcommit read filter sees, on the local file system and on S3.

Overwrites and write-id re-runs are compared in test_readers_replacing.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import fsspec
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import LongType

import txcommit
from txcommit.history import main as log_main
from txcommit.listing import main as ls_main
from txcommit.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3

from conftest import make_table
from tables import TableRef

KEEP_JUNK = {
    "spark.txcommit.test.keepAbortedFiles": "true",
    "spark.txcommit.commit.cleanupAttempts": "false",
}


def reader_target(table: TableRef, s3: LocalS3 | None) -> tuple[str, dict[str, Any]]:
    """The table's location and storage options for the readers outside Spark."""
    if table.local is not None:
        return str(table.local), {}
    assert s3 is not None
    options = {
        "endpoint": s3.endpoint,
        "region": "us-east-1",
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
    }
    return f"s3://{table.bucket}/{table.prefix}", options


def fail_first_attempt_at(target: int):  # noqa: ANN201
    @F.udf(returnType=LongType(), useArrow=False)
    def maybe_fail(i):  # noqa: ANN001, ANN202
        from pyspark import TaskContext

        if i == target and TaskContext.get().attemptNumber() == 0:
            raise RuntimeError(f"injected failure at id {i}")
        return i

    return maybe_fail


def write_mixed_history(spark, table: TableRef) -> None:  # noqa: ANN001
    """Two committed appends (a failed attempt's file left in the second), one aborted job
    whose committed tasks' files stay on disk, and one never-committed copy of a file."""
    table.prepare(spark)
    for k, v in KEEP_JUNK.items():
        spark.conf.set(k, v)

    def frame(start: int, end: int, parts: int):  # noqa: ANN202
        return spark.range(start, end, 1, parts).withColumn("k", (F.col("id") % 3).cast("int"))

    frame(0, 300, 3).write.mode("append").partitionBy("k").parquet(table.url)
    # The last row of task 1 fails once: that attempt wrote (and left) most of its rows.
    retried = frame(300, 600, 3).select(fail_first_attempt_at(499)("id").alias("id"), "k")
    retried.write.mode("append").partitionBy("k").parquet(table.url)

    @F.udf(returnType=LongType(), useArrow=False)
    def oops(i):  # noqa: ANN001, ANN202
        if i == 999:
            import time

            time.sleep(1.5)  # let the other tasks commit their files first
            raise RuntimeError("oops!")
        return i

    with pytest.raises(Exception, match="oops"):
        frame(600, 1000, 4).select(oops("id").alias("id"), "k").write.mode("append").partitionBy(
            "k"
        ).parquet(table.url)
    table.plant_uncommitted_copy()


@pytest.mark.parametrize("store", ["local", "s3"])
def test_readers_outside_spark_see_exactly_what_spark_sees(
    spark, store: str, workdir: Path, request: pytest.FixtureRequest, capsys, monkeypatch
) -> None:  # noqa: ANN001
    s3 = request.getfixturevalue("local_s3") if store == "s3" else None
    client = request.getfixturevalue("s3_client") if store == "s3" else None
    table = make_table(store, workdir, client)
    write_mixed_history(spark, table)

    df = spark.read.parquet(table.url)
    spark_rows = sorted((r["id"], r["k"]) for r in df.collect())
    assert len(spark_rows) == 600 and len(set(spark_rows)) == 600
    spark_files = {
        unquote(r[0]).split(f"{table.prefix or str(table.local)}/", 1)[1]
        for r in df.select(F.input_file_name()).distinct().collect()
    }
    # The junk is real: files of the aborted job, the failed attempt and the planted copy.
    junk = set(table.data_files()) - spark_files
    assert len(junk) >= 3, junk

    url, options = reader_target(table, s3)
    ds = txcommit.dataset(url, storage_options=options)
    arrow = ds.to_table()
    assert sorted(zip(arrow["id"].to_pylist(), arrow["k"].to_pylist(), strict=True)) == spark_rows
    rel = txcommit.duckdb_relation(url, storage_options=options)
    assert sorted(rel.project("id, k").fetchall()) == spark_rows
    frame = txcommit.polars_frame(url, storage_options=options).select("id", "k").collect()
    assert sorted(frame.iter_rows()) == spark_rows

    if store == "s3":
        fs = fsspec.filesystem("txcommit+s3", **options)
        root = f"{table.bucket}/{table.prefix}"
    else:
        fs, root = fsspec.filesystem("txcommit+file"), str(Path(url).resolve())
    assert {p[len(root) + 1 :] for p in fs.find(root)} == spark_files

    cli = ["--endpoint", options["endpoint"]] if options else []
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)  # the CLI's credentials: environment only
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
    capsys.readouterr()
    assert ls_main([url, "--json", *cli]) == 0
    assert {f["path"] for f in json.loads(capsys.readouterr().out)} == spark_files
    assert log_main([url, "--json", *cli]) == 0
    history = json.loads(capsys.readouterr().out)
    states = sorted(r["state"] for r in history)
    assert states == ["aborted", "committed", "committed"]
    committed = [r for r in history if r["state"] == "committed"]
    assert sum(r["files"] for r in committed) == len(spark_files)
    assert all(r["operation"] == "append" and r["committedAt"] for r in committed)
