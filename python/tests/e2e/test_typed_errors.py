"""A JVM-less client gets the server plugin's errors as txcommit's typed exceptions, each with
pyspark's exception as its cause, from a real Spark Connect server."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import txcommit
from txcommit.conformance.protocol import pause_at

from support.races import CommitWatch, Span, assert_overlaps, spanning
from support.servers import ServerProcess, new_session
from support.tables import WRITE_ID, TableRef


def test_racing_overwrites_raise_a_commit_conflict(server: ServerProcess, table: Path) -> None:
    """A slow overwrite of k=1 starts first; a fast one commits while it runs: the slow one's
    commit is a conflict, raised as CommitConflictError."""
    url = str(table)
    setup = new_session(server.url)
    txcommit.enable(setup)
    setup.range(30).withColumn("k", (F.col("id") % 3).cast("int")).write.partitionBy("k").parquet(
        url
    )
    setup.stop()
    started = threading.Event()
    outcome: dict[str, BaseException | None] = {}
    slow: list[Span] = []

    def overwrite(label: str, delay: bool) -> None:
        s = new_session(server.url)
        try:
            s.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
            df = s.range(100, 101, 1, 1).withColumn("k", F.lit(1))
            if delay:
                df = df.select(pause_at("id", None, 8000).alias("id"), "k")
                started.set()
            with txcommit.transactional(s), spanning(slow if delay else []):
                df.write.mode("overwrite").partitionBy("k").parquet(url)
            outcome[label] = None
        except BaseException as exc:
            outcome[label] = exc
        finally:
            s.stop()

    pending = table / "_txcommit" / "pending"
    before = len(list(pending.iterdir()))
    racer = threading.Thread(target=overwrite, args=("slow", True))
    with CommitWatch(TableRef("local", url, local=table)) as watch:
        racer.start()
        # The slow job notes what it replaces before it writes its pending marker; its task then
        # sleeps while the fast one commits.
        deadline = time.monotonic() + 60
        while len(list(pending.iterdir())) == before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.is_set() and len(list(pending.iterdir())) > before, "the slow job started"
        overwrite("fast", False)
        racer.join(timeout=300)
    # The slow job began before the fast one's commit point and ended after it.
    assert_overlaps(slow, watch.points(), 1, "the slow overwrite")

    assert outcome["fast"] is None, outcome["fast"]
    loser = outcome["slow"]
    assert isinstance(loser, txcommit.CommitConflictError), repr(loser)
    assert not isinstance(loser, txcommit.FencedError)
    assert isinstance(loser, txcommit.TxCommitError)
    assert isinstance(loser.__cause__, PySparkException)
    assert loser.server_class == "io.txcommit.CommitConflictException"
    assert str(loser).startswith("txcommit: ") and "conflict" in str(loser)


def test_a_committed_write_id_with_policy_fail_is_typed(spark, table: Path) -> None:
    url = str(table)
    txcommit.enable(spark)
    spark.range(3).write.option(WRITE_ID, "load-1").parquet(url)
    writer = spark.range(3).write.option(WRITE_ID, "load-1")
    writer = writer.option("txcommit.writeIdPolicy", "fail").mode("append")
    with pytest.raises(txcommit.WriteIdCommittedError) as caught, txcommit.typed_errors():
        writer.parquet(url)
    assert isinstance(caught.value.__cause__, PySparkException)
    assert "load-1" in str(caught.value)
    # Errors that are not the plugin's pass unchanged.
    with pytest.raises(PySparkException), txcommit.typed_errors():
        spark.sql("SELECT no_such_column FROM range(1)").collect()
