"""Reads of a past snapshot from a JVM-less client (docs/readers.md, "Reading a past snapshot"):
a write, an append by a writer whose clock runs an hour ahead, and an overwrite of one
partition; then each version, named by its transaction and by the store's time of its commit
(as TXCOMMIT HISTORY shows them), read by a DataFrame (``txcommit.asOf``), by SQL on the path
(``VERSION AS OF``, ``TIMESTAMP AS OF``) and by ``txcommit.dataset(as_of=...)``; a value naming
no snapshot fails typed; ``TXCOMMIT RESTORE`` back to version 2 and forward to 3 again;
after VACUUM deleted the replaced files, the snapshots that held them are refused whole (a
restore to one too) and the newest reads. On the local file system and S3, on the shared server."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.cli.ls import main as ls_main
from txcommit.errors import TimeTravelError
from txcommit.maintenance import history as txcommit_history
from txcommit.maintenance import restore, vacuum
from txcommit.table.names import generate_txn
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.tables import TableRef, dynamic_overwrite, parquet_bytes, reader_target

HOUR_MS = 3600 * 1000
EXPECTED = [[0, 1, 2, 3], [0, 1, 2, 3, 10, 11, 12], [1, 3, 11, 20]]


def iso(ms: int) -> str:
    t = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ids(df: Any) -> list[int]:
    return sorted(r["id"] for r in df.collect())


def write_three_versions(spark: Any, table: TableRef) -> None:
    def rows(*values: int) -> Any:
        return spark.createDataFrame([(v,) for v in values], "id long").withColumn(
            "k", (F.col("id") % 2).cast("int")
        )

    rows(0, 1, 2, 3).write.partitionBy("k").parquet(table.url)
    time.sleep(1.1)  # S3 dates objects to the second: one version per second here
    rows(10, 11, 12).write.mode("append").partitionBy("k").parquet(table.url)
    # The append as a driver whose clock runs an hour ahead wrote it: its record says so, the
    # store dates it now.
    # (Txn ids are time-ordered: the append's is the higher.)
    newest = max(k for k in table.objects() if k.startswith("_txcommit/commits/"))
    record = json.loads(table.read(newest) or b"{}")
    record["committedAt"] += HOUR_MS
    table.write(newest, json.dumps(record).encode())
    time.sleep(1.1)
    with dynamic_overwrite(spark):
        rows(20).write.mode("overwrite").partitionBy("k").parquet(table.url)


@pytest.mark.parametrize("any_table", ["local", "s3"], indirect=True)
def test_every_version_reads_as_committed_by_txn_and_by_store_time(
    spark, any_table: TableRef, local_s3: LocalS3
):
    table = any_table
    table.prepare(spark)
    write_three_versions(spark, table)
    history = [r for r in txcommit_history(spark, table.url).collect() if r["state"] == "committed"]
    assert [r["version"] for r in history] == [1, 2, 3]
    url, options = reader_target(table, local_s3)
    for r, rows in zip(history, EXPECTED, strict=True):
        txn, at = r["txn"], iso(r["storeTime"])
        for named in (txn, at):
            assert ids(spark.read.option("txcommit.asOf", named).parquet(table.url)) == rows
            arrow = txcommit.dataset(url, storage_options=options, as_of=named).to_table()
            assert sorted(arrow["id"].to_pylist()) == rows, named
        assert ids(spark.sql(f"SELECT * FROM parquet.`{table.url}` VERSION AS OF '{txn}'")) == rows
        assert ids(spark.sql(f"SELECT * FROM parquet.`{table.url}` TIMESTAMP AS OF '{at}'")) == rows
    # The append's driver said an hour later; the store's time names it all the same.
    assert (
        ids(spark.read.option("txcommit.asOf", iso(history[2]["storeTime"] - 1)).parquet(table.url))
        == EXPECTED[1]
    )

    unknown = generate_txn()
    with (
        pytest.raises(TimeTravelError, match=f"txcommit.asOf '{unknown}' of table .*not committed"),
        txcommit.typed_errors(),
    ):
        spark.read.option("txcommit.asOf", unknown).parquet(table.url).collect()
    with pytest.raises(TimeTravelError, match="option versionAsOf"), txcommit.typed_errors():
        spark.read.option("versionAsOf", 1).parquet(table.url).collect()

    # Restores, copying nothing: back to version 2, then forward to version 3 again; each is a
    # version of its own, read the same by Spark and by the Python readers.
    for r, rows in ((history[1], EXPECTED[1]), (history[2], EXPECTED[2])):
        [done] = restore(spark, table.url, r["txn"]).collect()
        assert done["versionTxn"] == r["txn"] and done["version"] == r["version"]
        assert ids(spark.read.parquet(table.url)) == rows
        assert (
            sorted(txcommit.dataset(url, storage_options=options).to_table()["id"].to_pylist())
            == rows
        )
    assert [r["operation"] for r in txcommit_history(spark, table.url).collect()][3:] == [
        "overwrite"
    ] * 2

    vacuum(spark, table.url, retain_hours=0, force=True).collect()
    with pytest.raises(TimeTravelError, match="VACUUM has deleted"), txcommit.typed_errors():
        restore(spark, table.url, history[0]["txn"]).collect()
    assert ids(spark.read.parquet(table.url)) == EXPECTED[2], "a refused restore writes nothing"
    for r in history[:2]:
        with pytest.raises(TimeTravelError, match="VACUUM has deleted"), txcommit.typed_errors():
            spark.read.option("txcommit.asOf", r["txn"]).parquet(table.url).collect()
        with pytest.raises(TimeTravelError, match="VACUUM has deleted"):
            txcommit.dataset(url, storage_options=options, as_of=r["txn"])
    assert (
        ids(spark.read.option("txcommit.asOf", history[2]["txn"]).parquet(table.url)) == EXPECTED[2]
    )


@pytest.mark.parametrize("any_table", ["local", "s3"], indirect=True)
def test_a_past_snapshot_holds_a_name_written_anew_by_identity_and_is_never_read_short(
    spark, any_table: TableRef, local_s3: LocalS3, capsys, monkeypatch
):
    """A writer without txcommit writes ``k=2/x.parquet``; an overwrite removes it; the writer
    writes another ``x.parquet``; an append (version 2); a dynamic overwrite of ``k=2`` removes
    the second file; VACUUM ``RETAIN 0 HOURS FORCE`` deletes it. Version 2 held that file:
    Spark, ``txcommit.dataset`` and ``txcommit ls --as-of`` refuse it naming the file (never
    its other rows alone), and a restore to it writes nothing."""
    table = any_table
    table.prepare(spark)

    def rows(k: int, *values: int) -> Any:
        return spark.createDataFrame([(v, k) for v in values], "id long, k int")

    table.write("k=2/x.parquet", parquet_bytes([100]))
    rows(1, 1, 2, 3).write.mode("overwrite").partitionBy("k").parquet(table.url)
    time.sleep(1.1)  # the store dates the next file in a later second than version 1
    table.write("k=2/x.parquet", parquet_bytes([4, 5, 6]))
    rows(1, 7).write.mode("append").partitionBy("k").parquet(table.url)
    with dynamic_overwrite(spark):
        rows(2, 9).write.mode("overwrite").partitionBy("k").parquet(table.url)
    history = txcommit_history(spark, table.url).collect()
    v = [r["txn"] for r in sorted(history, key=lambda r: r["version"] or 0) if r["version"]]
    assert len(v) == 3

    def as_of(txn: str) -> list[int]:
        return ids(spark.read.option("txcommit.asOf", txn).parquet(table.url))

    assert as_of(v[1]) == [1, 2, 3, 4, 5, 6, 7], "version 2 holds the second x, by identity"
    vacuum(spark, table.url, retain_hours=0, force=True).collect()
    assert table.read("k=2/x.parquet") is None
    named = f"version 2, transaction {v[1]}\\).*'k=2/x.parquet'"
    with pytest.raises(TimeTravelError, match=named), txcommit.typed_errors():
        as_of(v[1])
    url, options = reader_target(table, local_s3)
    with pytest.raises(TimeTravelError, match=named):
        txcommit.dataset(url, storage_options=options, as_of=v[1])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DUMMY_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", DUMMY_SECRET)
    cli = ["--endpoint", options["endpoint"]] if options else []
    capsys.readouterr()
    assert ls_main([url, "--as-of", v[1], *cli]) == 1
    assert "'k=2/x.parquet'" in capsys.readouterr().err
    with pytest.raises(TimeTravelError, match=named), txcommit.typed_errors():
        restore(spark, table.url, v[1]).collect()
    assert len(txcommit_history(spark, table.url).collect()) == len(history), "restore wrote none"
    assert as_of(v[0]) == [1, 2, 3], "the second x was written after version 1: not in it"
    assert as_of(v[2]) == [1, 2, 3, 7, 9]
