"""Multi-table transactions end to end, from a JVM-less client through a real Connect server
(docs/protocol.md, I33-I36): ``with txcommit.transaction(spark)`` around writes of several
tables, and the SQL form (``TXCOMMIT BEGIN`` / ``COMMIT`` / ``ROLLBACK``). What a user relies
on: until the block ends, readers see every table as it was; after it, every write at once;
an error, a failed write or a dead server leaves nothing, and the next writer after the lease
rolls a dead transaction back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.conformance.protocol import fail_at
from txcommit.errors import TransactionError
from txcommit.maintenance import history as txcommit_history
from txcommit.maintenance import restore
from txcommit.readers import dataset

from support.scale import SOAK
from support.servers import crashing_server, new_session, run_until_the_server_dies, running
from support.tables import EVERY_STORE, FEATURE_STORES, TableRef, make_table_of, reader_target
from support.transactions import (
    DECIDED_POINTS,
    TRANSACTION_POINTS,
    decisions,
    prepared_groups,
)


def ids(spark, url: str) -> list[int]:
    return sorted(r["id"] for r in spark.read.parquet(url).select("id").collect())


def rows(spark, start: int, n: int, parts: int = 2):
    return spark.range(start, start + n, 1, parts).withColumn("k", (F.col("id") % 3).cast("int"))


@pytest.fixture
def pair(workdir: Path, any_table: TableRef, request) -> tuple[TableRef, TableRef]:
    """Two fresh tables on the same store: orders and lines."""
    return any_table, another(any_table.store, workdir, request)


def another(store: str, workdir: Path, request) -> TableRef:
    """A fresh table on ``store``, on the emulator its table maker names."""
    return make_table_of(store, workdir, request)


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_writes_to_two_tables_are_visible_together_at_the_end_of_the_block(
    spark, server, pair: tuple[TableRef, TableRef], local_s3
) -> None:
    orders, lines = pair
    orders.prepare(spark)
    lines.prepare(spark)
    rows(spark, 0, 30).write.partitionBy("k").parquet(orders.url)
    rows(spark, 0, 90).write.partitionBy("k").parquet(lines.url)
    spark.sql(f"CREATE TABLE tx_lines_{id(pair)} USING parquet LOCATION '{lines.url}'")
    reader = new_session(server.url)
    with txcommit.transaction(spark) as tx:
        rows(spark, 100, 10).write.mode("append").partitionBy("k").parquet(orders.url)
        # A dynamic partition overwrite of k=1, then an SQL INSERT into the catalog table.
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        rows(spark, 1000, 9).where("k = 1").write.mode("overwrite").partitionBy("k").parquet(
            lines.url
        )
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
        spark.sql(f"INSERT INTO tx_lines_{id(pair)} SELECT 2000L AS id, 2 AS k")
        # Until the block ends, readers (another session, and this one) see both as they were.
        for s in (reader, spark):
            assert ids(s, orders.url) == list(range(30))
            assert ids(s, lines.url) == list(range(90))
        assert tx.id and decisions(orders) == [], "no decision before the block ends"
    assert tx.outcome == "committed" and tx.writes == 3
    expected_lines = sorted([i for i in range(90) if i % 3 != 1] + [1000, 1003, 1006] + [2000])
    assert ids(reader, orders.url) == list(range(30)) + list(range(100, 110))
    assert ids(reader, lines.url) == expected_lines
    (decision,) = decisions(orders)
    assert decision["outcome"] == "committed" and decision["group"] == tx.id
    assert len(decision["participants"]) == 3
    # The Python readers apply the same rule, the decision read from the first table's log.
    for table, expected in (
        (orders, list(range(30)) + list(range(100, 110))),
        (lines, expected_lines),
    ):
        url, options = reader_target(table, local_s3)
        got = (
            dataset(url, storage_options=options).to_table(columns=["id"]).column("id").to_pylist()
        )
        assert sorted(got) == expected
    reader.stop()


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_an_error_in_the_block_leaves_nothing(spark, pair: tuple[TableRef, TableRef]) -> None:
    orders, lines = pair
    orders.prepare(spark)
    rows(spark, 0, 6).write.parquet(orders.url)
    with (
        pytest.raises(RuntimeError, match="the pipeline changed its mind"),
        txcommit.transaction(spark) as tx,
    ):
        rows(spark, 100, 6).write.mode("append").parquet(orders.url)
        rows(spark, 200, 6).write.mode("overwrite").parquet(lines.url)
        raise RuntimeError("the pipeline changed its mind")
    assert tx.outcome == "aborted" and tx.writes == 2
    assert ids(spark, orders.url) == list(range(6))
    assert not [f for f in lines.data_files()], "the aborted writes' files are discarded"
    assert [d["outcome"] for d in decisions(orders)] == ["aborted"]
    # The session is out of it: the next write commits at once.
    rows(spark, 300, 3).write.mode("append").parquet(orders.url)
    assert ids(spark, orders.url) == list(range(6)) + [300, 301, 302]


@pytest.mark.parametrize("any_table", ["local"], indirect=True)
def test_sql_begin_commit_and_rollback_and_their_errors(spark, any_table: TableRef) -> None:
    table = any_table
    table.prepare(spark)

    def sql(text: str):
        with txcommit.typed_errors():
            return spark.sql(text).collect()

    with pytest.raises(TransactionError, match="no transaction is open"):
        sql("TXCOMMIT COMMIT")
    (begun,) = sql("TXCOMMIT BEGIN")
    assert spark.conf.get("spark.txcommit.transaction") == begun["transaction"]
    with pytest.raises(TransactionError, match="do not nest"):
        sql("TXCOMMIT BEGIN")
    rows(spark, 0, 4).write.parquet(table.url)
    (done,) = sql("TXCOMMIT COMMIT")
    assert (done["transaction"], done["outcome"], done["writes"]) == (
        begun["transaction"],
        "committed",
        1,
    )
    assert spark.conf.get("spark.txcommit.transaction", "") == ""
    sql("TXCOMMIT BEGIN")
    rows(spark, 10, 4).write.mode("append").parquet(table.url)
    (back,) = sql("TXCOMMIT ROLLBACK")
    assert back["outcome"] == "aborted" and back["writes"] == 1
    assert ids(spark, table.url) == list(range(4))
    # A transaction needs the session's writes to go through txcommit.
    txcommit.disable(spark)
    with pytest.raises(TransactionError, match="do not go through txcommit"):
        sql("TXCOMMIT BEGIN")


@pytest.mark.parametrize("any_table", ["local"], indirect=True)
def test_a_failed_write_leaves_the_transaction_only_a_rollback(spark, any_table: TableRef) -> None:
    table = any_table
    table.prepare(spark)
    rows(spark, 0, 4).write.parquet(table.url)
    spark.sql("TXCOMMIT BEGIN").collect()
    rows(spark, 10, 4).write.mode("append").parquet(table.url)
    boom = fail_at("id", 21, "injected write failure")
    with pytest.raises(Exception, match="injected write failure"):
        spark.range(20, 24, 1, 2).select(boom.alias("id")).withColumn("k", F.lit(0)).write.mode(
            "append"
        ).parquet(table.url)
    with pytest.raises(TransactionError, match="one of its writes failed"), txcommit.typed_errors():
        spark.sql("TXCOMMIT COMMIT").collect()
    spark.sql("TXCOMMIT ROLLBACK").collect()
    assert ids(spark, table.url) == list(range(4))


#: CI kills at the transaction's own points on the local file system and S3; the soak at every
#: point on every store.
KILLS = [
    (store, point)
    for store in (EVERY_STORE if SOAK else ("local", "s3"))
    for point in (
        TRANSACTION_POINTS if SOAK else ("transaction.beforeDecision", "transaction.afterDecision")
    )
]


@pytest.mark.parametrize(("any_table", "point"), KILLS, indirect=["any_table"])
def test_a_server_killed_at_each_transaction_point_leaves_all_or_nothing(
    point: str, workdir: Path, pair: tuple[TableRef, TableRef], request, server_of
) -> None:
    """The transaction overwrites ``lines`` (its first table: the decision's) and appends to
    ``orders``; the server dies at ``point``. Before the decision nothing of it is visible, and
    once its lease ran out the next overwrite of ``lines`` rolls it back (it decides every
    prepared record's transaction aborted); at or after the decision all of it is, and the next
    write of each table rolls its derived work forward."""
    orders, lines = pair
    committed = point in DECIDED_POINTS
    # In local mode on every store: the task point then halts the driver (its tasks are threads).
    crashing = crashing_server(
        workdir / f"halt-{point}-{orders.store}", orders.store, request, executors_matter=False
    )
    for _ in running(crashing):
        spark = new_session(crashing.url)
        orders.prepare(spark)
        spark.conf.set("spark.txcommit.transaction.leaseMs", "3000")
        rows(spark, 0, 6).write.partitionBy("k").parquet(orders.url)
        rows(spark, 0, 6).write.partitionBy("k").parquet(lines.url)
        # The point names the first job that passes it: the transaction's first write.
        spark.conf.set("spark.txcommit.test.haltAt", point)

        def transaction(s=spark) -> None:
            s.sql("TXCOMMIT BEGIN").collect()
            rows(s, 200, 6).write.mode("overwrite").partitionBy("k").parquet(lines.url)
            rows(s, 100, 6).write.mode("append").partitionBy("k").parquet(orders.url)
            s.sql("TXCOMMIT COMMIT").collect()

        run_until_the_server_dies(crashing, spark, transaction)
    reader = new_session(server_of(orders.store).url, one_clock=True)
    orders.prepare(reader)
    if committed:
        assert ids(reader, orders.url) == list(range(6)) + list(range(100, 106))
        assert ids(reader, lines.url) == list(range(200, 206))
        (decision,) = decisions(lines)
        assert decision["outcome"] == "committed"
        (over,) = [p["txn"] for p in decision["participants"] if p.get("sequence")]
        if point == "transaction.afterDecision":
            assert lines.read(f"_txcommit/commits/{over}.json") is None
        # The derived work the dead driver did not do is rolled forward by the next write.
        rows(reader, 300, 3).write.mode("append").partitionBy("k").parquet(lines.url)
        assert lines.read(f"_txcommit/commits/{over}.json") is not None
        assert ids(reader, lines.url) == list(range(200, 206)) + [300, 301, 302]
    else:
        assert ids(reader, orders.url) == list(range(6)) and ids(reader, lines.url) == list(
            range(6)
        )
        prepared = prepared_groups(orders, lines)
        # Nobody decided it: after its lease, the next overwrite of lines rolls it back itself.
        time.sleep(3.5)
        rows(reader, 300, 3).write.mode("overwrite").partitionBy("k").parquet(lines.url)
        found = decisions(lines)
        assert {d["group"] for d in found} == prepared, "every prepared transaction is decided"
        assert all(
            d["outcome"] == "aborted" and d["decidedBy"] == "lease-expired" for d in found
        ), found
        assert ids(reader, lines.url) == [300, 301, 302] and ids(reader, orders.url) == list(
            range(6)
        )
    print(f"killed at {point} on {orders.store}: {len(prepared_groups(orders, lines))} prepared")
    reader.stop()


def test_a_transaction_across_two_stores(spark, workdir: Path, request) -> None:
    """A local table and an S3 table in one transaction; the decision lives with the first."""
    local = another("local", workdir, request)
    s3 = another("s3", workdir, request)
    s3.prepare(spark)
    with txcommit.transaction(spark) as tx:
        rows(spark, 0, 5).write.parquet(s3.url)
        rows(spark, 10, 5).write.parquet(local.url)
        prepared = s3.committed().values()
        assert prepared and all(r["version"] == 4 and "group" in r for r in prepared)
        assert decisions(s3) == [], "prepared records only: nothing decided, nothing visible"
    assert tx.outcome == "committed"
    assert ids(spark, s3.url) == list(range(5)) and ids(spark, local.url) == list(range(10, 15))
    assert [d["outcome"] for d in decisions(s3)] == ["committed"] and decisions(local) == []


@pytest.mark.parametrize("any_table", ["local"], indirect=True)
def test_a_snapshot_as_of_any_write_of_a_transaction_holds_all_of_its_writes(
    spark, pair: tuple[TableRef, TableRef], local_s3
) -> None:
    """A transaction writes orders twice: two versions of orders, both dated by its decision.
    A read and a RESTORE as of either hold both writes (before, as of the first one they held
    only it); a RESTORE of orders to before the transaction leaves lines as it is."""
    orders, lines = pair
    orders.prepare(spark)
    rows(spark, 0, 3).write.parquet(orders.url)
    with txcommit.transaction(spark) as tx:
        rows(spark, 100, 3).write.mode("append").parquet(orders.url)
        rows(spark, 200, 3).write.mode("append").parquet(orders.url)
        rows(spark, 300, 3).write.parquet(lines.url)
    rows(spark, 400, 3).write.mode("append").parquet(orders.url)
    history = [
        r for r in txcommit_history(spark, orders.url).collect() if r["state"] == "committed"
    ]
    first = history[0]["txn"]
    writes = [r["txn"] for r in history if r["transaction"] == tx.id]
    assert len(writes) == 2
    whole = [*range(3), *range(100, 103), *range(200, 203)]
    url, options = reader_target(orders, local_s3)
    for txn in writes:
        arrow = txcommit.dataset(url, storage_options=options, as_of=txn).to_table()
        assert sorted(arrow["id"].to_pylist()) == whole, txn
        assert ids_of(spark.read.option("txcommit.asOf", txn).parquet(orders.url)) == whole, txn
    restore(spark, orders.url, writes[0]).collect()
    assert ids(spark, orders.url) == whole
    restore(spark, orders.url, first).collect()
    assert ids(spark, orders.url) == list(range(3))
    assert ids(spark, lines.url) == list(range(300, 303)), "a RESTORE of orders leaves lines"


def ids_of(df) -> list[int]:
    return sorted(r["id"] for r in df.select("id").collect())


@pytest.mark.parametrize("any_table", EVERY_STORE if SOAK else ["s3"], indirect=True)
def test_vacuum_rolls_back_a_dead_transaction_after_its_lease(
    workdir: Path, pair: tuple[TableRef, TableRef], request, server_of
) -> None:
    """A server dies before its transaction's decision; past the lease VACUUM decides it aborted
    (I37), whoever runs VACUUM, and nothing of it is visible. (On S3 and GCS VACUUM asked the
    store whether the log's directory existed, which an object store never says of a prefix,
    and left such a transaction undecided for ever.)"""
    orders, lines = pair
    crashing = crashing_server(
        workdir / f"vacuum-dead-{orders.store}", orders.store, request, executors_matter=False
    )
    for _ in running(crashing):
        spark = new_session(crashing.url)
        orders.prepare(spark)
        spark.conf.set("spark.txcommit.transaction.leaseMs", "2000")
        rows(spark, 0, 6).write.parquet(orders.url)
        rows(spark, 0, 6).write.parquet(lines.url)
        spark.conf.set("spark.txcommit.test.haltAt", "transaction.beforeDecision")

        def transaction(s=spark) -> None:
            s.sql("TXCOMMIT BEGIN").collect()
            rows(s, 200, 6).write.mode("overwrite").parquet(lines.url)
            rows(s, 100, 6).write.mode("append").parquet(orders.url)
            s.sql("TXCOMMIT COMMIT").collect()

        run_until_the_server_dies(crashing, spark, transaction)
    reader = new_session(server_of(orders.store).url, one_clock=True)
    orders.prepare(reader)
    prepared = prepared_groups(orders, lines)
    assert len(prepared) == 1 and not decisions(lines)
    time.sleep(3.5)  # the lease, and the allowance for clocks
    for t in (orders, lines):
        reader.sql(f"TXCOMMIT VACUUM '{t.url}' RETAIN 0 HOURS FORCE").collect()
    found = {d["group"]: (d["outcome"], d["decidedBy"]) for d in decisions(lines)}
    assert found == dict.fromkeys(prepared, ("aborted", "lease-expired"))
    assert ids(reader, orders.url) == list(range(6)) and ids(reader, lines.url) == list(range(6))
    reader.stop()


#: A client that opens a transaction, writes both tables inside it, says so and waits to be killed.
LOST_CLIENT = """
import sys, time
from pyspark.sql import SparkSession
import txcommit
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
txcommit.enable(spark)
spark.conf.set("spark.txcommit.transaction.leaseMs", "2000")
spark.sql("TXCOMMIT BEGIN").collect()
rows = "id", "cast(id % 3 as int) as k"
spark.range(200, 206, 1, 2).selectExpr(*rows).write.mode("overwrite").parquet(sys.argv[2])
spark.range(100, 106, 1, 2).selectExpr(*rows).write.mode("append").parquet(sys.argv[3])
print("written", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("any_table", ["local"], indirect=True)
def test_a_lost_client_and_a_cancelled_job_leave_nothing(
    spark, server, pair: tuple[TableRef, TableRef]
) -> None:
    """A client killed inside its transaction (its server lives on, its session open): nothing
    of it is visible, and past the lease VACUUM decides it aborted. A job cancelled inside a
    transaction (``interruptAll``) fails its write; leaving the block rolls the whole back."""
    import subprocess
    import sys
    import threading

    orders, lines = pair
    orders.prepare(spark)
    rows(spark, 0, 6).write.parquet(orders.url)
    rows(spark, 0, 6).write.parquet(lines.url)
    client = subprocess.Popen(
        [sys.executable, "-c", LOST_CLIENT, server.url, lines.url, orders.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout is not None
        said = client.stdout.readline().strip()
    finally:
        client.kill()
        _, err = client.communicate()
    assert said == "written", [line for line in err.splitlines() if "Exception" in line][:3]
    (prepared,) = prepared_groups(orders, lines)
    assert ids(spark, orders.url) == list(range(6)) and ids(spark, lines.url) == list(range(6))
    time.sleep(3.5)  # the lease, and the allowance for clocks
    for t in (orders, lines):
        spark.sql(f"TXCOMMIT VACUUM '{t.url}' RETAIN 0 HOURS FORCE").collect()
    found = {d["group"]: (d["outcome"], d["decidedBy"]) for d in decisions(lines)}
    assert found == {prepared: ("aborted", "lease-expired")}
    assert ids(spark, orders.url) == list(range(6)) and ids(spark, lines.url) == list(range(6))

    # A write cancelled while it runs: every task sleeps, the driver interrupts the job.
    slow = spark.range(300, 306, 1, 2).selectExpr(
        "id + length(coalesce(reflect('java.lang.Thread', 'sleep', bigint(30000)), '')) * 0 as id",
        "cast(id % 3 as int) as k",
    )
    cancel = threading.Timer(8.0, spark.interruptAll)
    with pytest.raises(Exception) as raised, txcommit.transaction(spark) as tx:
        rows(spark, 100, 6).write.mode("append").parquet(orders.url)
        cancel.start()
        slow.write.mode("append").parquet(lines.url)
    cancel.cancel()
    assert "interrupt" in str(raised.value).lower() or "cancel" in str(raised.value).lower(), raised
    assert tx.outcome == "aborted" and tx.writes == 1
    assert ids(spark, orders.url) == list(range(6)) and ids(spark, lines.url) == list(range(6))
    assert [d["outcome"] for d in decisions(orders) if d["group"] == tx.id] == ["aborted"]
