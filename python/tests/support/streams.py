"""Streaming queries under test: the per-session confs that put txcommit under them."""

from __future__ import annotations

import time
from collections import Counter

from support.stores import session_confs

MANAGER = "io.txcommit.streaming.TxCommitCheckpointFileManager"
SINK_PROTOCOL = "io.txcommit.streaming.TxCommitSinkProtocol"


def configure(spark, store: str) -> None:
    """Per-session confs, as a JVM-less client sets them."""
    spark.conf.set("spark.sql.streaming.checkpointFileManagerClass", MANAGER)
    spark.conf.set("spark.sql.streaming.commitProtocolClass", SINK_PROTOCOL)
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    for key, value in session_confs(store).items():
        spark.conf.set(key, value)


def rate_to_parquet(spark, ckpt_url: str, out_url: str):
    """A query copying the rate source's values (0, 1, 2, ...) to Parquet files at ``out_url``."""
    return (
        spark.readStream.format("rate")
        .option("rowsPerSecond", 50)
        .load()
        .select("value")
        .writeStream.format("parquet")
        .option("checkpointLocation", ckpt_url)
        .option("path", out_url)
        .trigger(processingTime="500 milliseconds")
        .start()
    )


def run_until_batch(query, batch: int, timeout: float = 120) -> None:
    """Waits until ``query`` has run ``batch``, failing at once if the query failed."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            progress = query.lastProgress
            assert query.exception() is None, f"the query failed: {query.exception()}"
            if progress and progress["batchId"] >= batch:
                return
            time.sleep(0.3)
        raise AssertionError(f"no batch {batch} within {timeout} s: {query.status}")
    finally:
        query.stop()


def assert_each_value_once(spark, out_url: str) -> None:
    """Every value the rate source produced is in the output exactly once, none missing."""
    values = Counter(r["value"] for r in spark.read.parquet(out_url).collect())
    assert values and all(n == 1 for n in values.values()), "every row exactly once"
    assert sorted(values) == list(range(len(values))), "no row missing"
