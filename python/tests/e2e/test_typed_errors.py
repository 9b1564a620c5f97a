"""A JVM-less client gets the server plugin's errors as txcommit's typed exceptions from a real
Spark Connect server, with nothing but ``import txcommit``: no context manager. Each is also
pyspark's exception (``except PySparkException`` still catches it) and carries the error
condition and SQLSTATE Spark's error framework sent (``getCondition()``, ``getSqlState()``)."""

from __future__ import annotations

import os
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import txcommit
from txcommit.conformance.protocol import pause_at

from support.cluster import pyspark_home
from support.races import CommitWatch, Span, assert_overlaps, spanning
from support.servers import ServerProcess, new_session, server_python
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
            txcommit.enable(s)  # no typed_errors(), no transactional(): a plain import does it
            with spanning(slow if delay else []):
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
    assert isinstance(loser, PySparkException), "still pyspark's exception"
    assert loser.getCondition() == "TXCOMMIT_COMMIT_CONFLICT"
    assert loser.getSqlState() == "40001", "a conflict is a serialization failure"
    assert loser.server_class == "io.txcommit.CommitConflictException"
    assert str(loser).startswith("txcommit: ") and "conflict" in str(loser)


def test_a_committed_write_id_with_policy_fail_is_typed(spark, table: Path) -> None:
    url = str(table)
    txcommit.enable(spark)
    spark.range(3).write.option(WRITE_ID, "load-1").parquet(url)
    writer = spark.range(3).write.option(WRITE_ID, "load-1")
    writer = writer.option("txcommit.writeIdPolicy", "fail").mode("append")
    with pytest.raises(txcommit.WriteIdCommittedError) as caught:
        writer.parquet(url)
    error = caught.value
    assert isinstance(error, PySparkException)
    assert (error.getCondition(), error.getSqlState()) == ("TXCOMMIT_WRITE_ID_COMMITTED", "23505")
    assert "load-1" in str(error) and "load-1" in (error.getMessageParameters() or {})["message"]
    # Inside the old context manager it is the same exception.
    with pytest.raises(txcommit.WriteIdCommittedError), txcommit.typed_errors():
        writer.parquet(url)
    # Errors that are not the plugin's pass unchanged.
    with pytest.raises(PySparkException) as other:
        spark.sql("SELECT no_such_column FROM range(1)").collect()
    assert not isinstance(other.value, txcommit.TxCommitError)


# A classic PySpark job (py4j, no Connect) with the plugin: nothing but `import txcommit`.
CLASSIC_JOB = textwrap.dedent(
    """\
    import sys
    import txcommit
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession
    from txcommit._names import EXTENSIONS_CLASS, PLUGIN_CLASS
    from txcommit.server import find_plugin_jar

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.jars", str(find_plugin_jar()))
        .config("spark.plugins", PLUGIN_CLASS)
        .config("spark.sql.extensions", EXTENSIONS_CLASS)
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    txcommit.enable(spark)
    table = sys.argv[1]
    spark.range(3).write.option("txcommit.writeId", "load-1").parquet(table)
    writer = spark.range(3).write.option("txcommit.writeId", "load-1")
    try:
        writer.option("txcommit.writeIdPolicy", "fail").mode("append").parquet(table)
        print("NOT RAISED")
    except txcommit.WriteIdCommittedError as e:
        print("TYPED", e.getCondition(), e.getSqlState(), isinstance(e, PySparkException),
              e.server_class, "load-1" in str(e), flush=True)
    try:
        spark.sql("SELECT no_such_column FROM range(1)").collect()
    except PySparkException as e:
        print("OTHER", isinstance(e, txcommit.TxCommitError), flush=True)
    spark.stop()
    """
)


def test_a_classic_job_gets_the_typed_errors_too(workdir: Path, table: Path) -> None:
    script = workdir / "classic_typed_job.py"
    script.write_text(CLASSIC_JOB)
    # A classic session: nothing of the client's Spark Connect settings (pyspark-client sets
    # some in the environment when imported).
    connect = (
        "SPARK_CONNECT_MODE_ENABLED",
        "SPARK_REMOTE",
        "SPARK_LOCAL_REMOTE",
        "SPARK_CONNECT_MODE",
    )
    env = {k: v for k, v in os.environ.items() if k not in connect}
    env["SPARK_HOME"] = str(pyspark_home())
    run = subprocess.run(
        [server_python(), str(script), str(table)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=workdir,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert (
        "TYPED TXCOMMIT_WRITE_ID_COMMITTED 23505 True io.txcommit.WriteIdCommittedException True"
        in run.stdout
    ), run.stdout + run.stderr[-3000:]
    assert "OTHER False" in run.stdout, run.stdout
