"""A streaming query whose ``foreachBatch`` writes two tables in one multi-table transaction,
from a JVM-less client through a real Connect server (the function runs in the server's Python
worker): each micro-batch lands in both tables exactly once, whole or not at all, although the
function fails twice and the query is restarted from its checkpoint each time.

The two failures a user meets (docs/streaming.md, "foreachBatch into several tables"):

- the function raises inside the ``with`` block, after the first table's write: the transaction
  rolls back, the query stops, and its restart runs the batch again;
- the function raises after the ``with`` block: the transaction committed, but Spark never
  recorded the batch in the checkpoint's commit log, so the restarted query runs it again.

The writes carry a write id derived from the batch id (``txcommit.writeId``): the re-run of a
committed batch replaces (or, under ``skip``, keeps) that batch's rows, atomically at its own
decision. A third case runs the same query without write ids and shows what they are for: the
re-run of the committed batch doubles its rows (in both tables, still together).

A reader in another session reads both tables in one query in a loop during the whole run and
must never see a batch in one table without the other, or short; its reads that overlapped a
decision (a COMMIT's commit point, dated by watching the decisions appear in the first table's
log) are counted against a floor."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from support.races import CommitWatch, Span, assert_overlaps, timed
from support.servers import new_session
from support.tables import TableRef, make_table_of

BATCHES = 6
ROWS = 10  # orders per batch; each order has two lines
FAIL_INSIDE = 2  # its first run raises inside the block, after the orders write: rolled back
FAIL_AFTER = 4  # its first run raises after the block: committed, not in the checkpoint
#: Reads of both tables that must have spanned a committed decision.
MIN_OVERLAPPING_READS = 3


def write_inputs(directory: Path) -> None:
    """One JSON file per batch (``maxFilesPerTrigger`` 1), ids ``k*ROWS ..``, oldest first."""
    directory.mkdir(parents=True)
    base = time.time() - 3600
    for k in range(BATCHES):
        path = directory / f"in-{k:03d}.json"
        path.write_text("".join(json.dumps({"id": k * ROWS + i}) + "\n" for i in range(ROWS)))
        os.utime(path, (base + k, base + k))


def sink(
    orders_url: str, lines_url: str, markers: str, write_id: str | None, policy: str
) -> Callable[[Any, int], None]:
    """The foreachBatch function. Self-contained (it is pickled by value and runs in the
    server's Python worker); ``markers`` is a directory where it notes the failures it staged,
    so that each is staged once, on the batch's first run."""
    fail_inside, fail_after = FAIL_INSIDE, FAIL_AFTER

    def write_batch(df: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        import txcommit

        def first_run(where: str) -> bool:
            marker = os.path.join(markers, f"{where}-{batch_id}")
            if os.path.exists(marker):
                return False
            open(marker, "w").close()
            return True

        def append(frame: Any) -> Any:
            w = frame.write.mode("append")
            if write_id is not None:
                w = w.option("txcommit.writeId", f"{write_id}-{batch_id}")
                w = w.option("txcommit.writeIdPolicy", policy)
            return w

        spark = df.sparkSession
        orders = df.select("id", F.lit(batch_id).cast("int").alias("batch"))
        lines = orders.crossJoin(spark.range(2).withColumnRenamed("id", "line"))
        with txcommit.transaction(spark):
            append(orders).parquet(orders_url)
            if batch_id == fail_inside and first_run("inside"):
                raise RuntimeError(f"staged failure inside the transaction of batch {batch_id}")
            append(lines).parquet(lines_url)
        if batch_id == fail_after and first_run("after"):
            raise RuntimeError(f"staged failure after the transaction of batch {batch_id}")

    return write_batch


def run_query(spark, inputs: Path, checkpoint: Path, write_batch) -> str | None:
    """One run of the query from its checkpoint, until the input is used up or the function
    fails: the failure's message, or None."""
    query = (
        spark.readStream.schema("id BIGINT")
        .option("maxFilesPerTrigger", 1)
        .json(str(inputs))
        .writeStream.foreachBatch(write_batch)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        assert query.awaitTermination(300), "the query did not end within 5 minutes"
    except StreamingQueryException as e:
        return str(e)
    return None


def per_batch(spark, orders: TableRef, lines: TableRef) -> dict[int, tuple[int, int]]:
    """Rows of each batch in orders and in lines, read in ONE query (one snapshot of both)."""
    o = spark.read.parquet(orders.url).groupBy("batch").count().withColumnRenamed("count", "o")
    li = spark.read.parquet(lines.url).groupBy("batch").count().withColumnRenamed("count", "l")
    return {
        r["batch"]: (r["o"] or 0, r["l"] or 0) for r in o.join(li, "batch", "full_outer").collect()
    }


def decisions(table: TableRef) -> list[tuple[str, int]]:
    """Each decision the table keeps: its outcome and how many writes it names."""
    found = [
        json.loads(table.read(k) or b"{}")
        for k in table.objects()
        if k.startswith("_txcommit/groups/") and k.count("/") == 2
    ]
    return sorted((d.get("outcome", ""), len(d.get("participants", []))) for d in found)


@pytest.mark.parametrize("policy", ["replace", "skip", None])
def test_foreach_batch_writes_two_tables_exactly_once_across_restarts(
    spark, server, workdir: Path, request, policy: str | None
) -> None:
    orders = make_table_of("local", workdir, request)
    lines = make_table_of("local", workdir, request)
    base = workdir / f"stream-{orders.url.rsplit('/', 1)[-1]}"
    inputs, checkpoint, markers = base / "in", base / "checkpoint", base / "markers"
    write_inputs(inputs)
    markers.mkdir()
    orders.prepare(spark)
    # Both tables exist before the stream (batch -1), so the reader reads them from the start.
    spark.createDataFrame([(-1, -1)], "id BIGINT, batch INT").write.parquet(orders.url)
    lines_schema = "id BIGINT, batch INT, line BIGINT"
    spark.createDataFrame([(-1, -1, 0), (-1, -1, 1)], lines_schema).write.parquet(lines.url)
    write_batch = sink(
        orders.url, lines.url, str(markers), None if policy is None else "orders", policy or ""
    )

    reader = new_session(server.url)
    orders.prepare(reader)
    reads: list[tuple[Span, dict[int, tuple[int, int]]]] = []
    done, errors = threading.Event(), []

    def read_loop() -> None:
        try:
            while not done.is_set():
                reads.append(timed(lambda: per_batch(reader, orders, lines)))
        except BaseException as e:  # reported by the test's thread
            errors.append(e)

    failures = []
    with CommitWatch(orders, decisions=True) as watch:
        thread = threading.Thread(target=read_loop, name="reader")
        thread.start()
        try:
            for _ in range(3):  # the first run fails at FAIL_INSIDE, the second at FAIL_AFTER
                failure = run_query(spark, inputs, checkpoint, write_batch)
                if failure is None:
                    break
                failures.append(failure)
        finally:
            done.set()
            thread.join(timeout=300)
    if errors:
        raise errors[0]
    assert len(failures) == 2, failures
    assert "inside the transaction of batch 2" in failures[0], failures[0]
    assert "after the transaction of batch 4" in failures[1], failures[1]

    # What a user relies on, whatever the policy: a batch is in both tables or in neither, and
    # whole (two lines per order), in every read during the run; with write ids, once (a re-run
    # replaced or kept the first run's rows, never showed both).
    for _, seen in reads:
        for batch, (o, li) in seen.items():
            assert o > 0 and li == 2 * o, f"batch {batch} in one table only or short: {seen}"
            assert policy is None or batch < 0 or o == ROWS, f"batch {batch} not once: {seen}"
    committed = [
        window
        for name, window in watch.windows().items()
        if json.loads(orders.read(name) or b"{}").get("outcome") == "committed"
    ]
    assert_overlaps(
        [span for span, _ in reads],
        committed,
        MIN_OVERLAPPING_READS,
        "reads of both tables during the streaming run",
    )

    final = per_batch(spark, orders, lines)
    ids = sorted(r["id"] for r in spark.read.parquet(orders.url).collect())
    every = list(range(BATCHES * ROWS))
    # Batch 2's first run rolled back (its decision names no write: an aborted one commits none).
    outcomes = decisions(orders)
    assert [d for d in outcomes if d[0] == "aborted"] == [("aborted", 0)], outcomes
    committed_writes = sorted(n for outcome, n in outcomes if outcome == "committed")
    if policy is None:
        # Without a write id the re-run of the committed batch 4 is a second append: its rows
        # twice, in both tables (still together). This is what the write id is for.
        assert final == {-1: (1, 2)} | {
            k: (2 * ROWS, 4 * ROWS) if k == FAIL_AFTER else (ROWS, 2 * ROWS) for k in range(BATCHES)
        }
        assert ids == sorted([-1, *every, *range(FAIL_AFTER * ROWS, (FAIL_AFTER + 1) * ROWS)])
        assert committed_writes == [2] * (BATCHES + 1), outcomes
    else:
        assert final == {-1: (1, 2)} | {k: (ROWS, 2 * ROWS) for k in range(BATCHES)}, final
        assert ids == [-1, *every]
        # replace: batch 4's re-run committed again, replacing its first run in both tables at
        # its decision; skip: it found both write ids committed, and its decision names nothing.
        rerun = 2 if policy == "replace" else 0
        assert committed_writes == sorted([2] * BATCHES + [rerun]), outcomes
    reader.stop()
