"""The protocol on a real multi-JVM cluster: executors lost mid-write, speculative duplicates.

One Spark standalone cluster (a master and two workers, each its own JVM, see cluster.py)
serves the session; each test runs its own Connect server (driver) on it, whose two executors
are JVMs the workers launch. Every scenario runs on each store: the local file system, and S3
(moto over HTTP through Hadoop's S3A) with both S3 adapters.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StructField, StructType

from support.cluster import StandaloneCluster, alive
from support.races import Span, assert_overlaps, point, spanning
from support.servers import ServerProcess, free_port, new_session, running, server_on_cluster
from support.tables import TableRef
from support.waiting import wait_for

DATA_FILE = re.compile(r"part-(\d{5})-tid-([0-9a-z]{16})-(\d+)[-.]")

KEEP_JUNK = {
    # Leave the files of failed and killed attempts on disk (a dead executor cleans nothing
    # up anyway), so the tests prove that the READ side hides them.
    "spark.txcommit.test.keepAbortedFiles": "true",
    "spark.txcommit.commit.cleanupAttempts": "false",
}

SPECULATION = {
    "spark.speculation": "true",
    "spark.speculation.interval": "100ms",
    "spark.speculation.multiplier": "1.1",
    "spark.speculation.quantile": "0.5",
    # No copy before the first attempt has surely opened its file: on a loaded machine its
    # Python worker can take seconds to start, and a copy launched before that would leave
    # nothing for the test to see of the first attempt.
    "spark.speculation.minTaskRuntime": "8s",
}


def parse(name: str) -> tuple[int, str, int]:
    """(split, txn, Spark task attempt id) of a txcommit data file name."""
    m = DATA_FILE.search(name)
    assert m, f"not a txcommit data file name: {name}"
    return int(m.group(1)), m.group(2), int(m.group(3))


class FileWatch:
    """Lists the table every 50 ms while a job runs: every data file seen on the way."""

    def __init__(self, table: TableRef) -> None:
        self.table = table
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.seen.update(self.table.data_files())
            time.sleep(0.05)

    def __enter__(self) -> FileWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.seen.update(self.table.data_files())


def slow_rows(spark, n: int, parts: int, pause_ms: Callable[[int, int], int]):
    """`spark.range(n)` in `parts` tasks as (id, attempt): the row's task attempt number
    (TaskContext.attemptNumber(), >= 1 for a retry or a speculative copy) and, before the
    writer gets each row, a sleep of `pause_ms(partition, attempt)` ms.

    The sleep runs in the JVM (`reflect` of Thread.sleep) on the row's way to the writer, not
    in Python: a Python worker returns its results in 64 KiB chunks, so a sleeping UDF would
    hold back every row, and the task's data file, until its task is nearly done."""

    # A DataType and an explicit arrow choice, not a DDL string and the default: pyspark would
    # look both up through the thread's active session, which may belong to a dead server.
    row = StructType(
        [
            StructField("id", LongType()),
            StructField("attempt", IntegerType()),
            StructField("pause", LongType()),
        ]
    )

    @F.udf(returnType=row, useArrow=False)
    def tag(i):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        assert ctx is not None  # a UDF runs inside a task
        return (i, ctx.attemptNumber(), pause_ms(ctx.partitionId(), ctx.attemptNumber()))

    # Nondeterministic: else the optimiser inlines `t` into the filter and the projection
    # after it, and runs the UDF twice per row, the second time after the sleep.
    tag = tag.asNondeterministic()
    sleep = F.expr("reflect('java.lang.Thread', 'sleep', t.pause)")
    return (
        spark.range(0, n, 1, parts)
        .select(tag("id").alias("t"))
        .where(F.length(F.coalesce(sleep, F.lit(""))) >= 0)  # always true, never optimised away
        .select("t.id", "t.attempt")
    )


def read_rows(spark, table: TableRef) -> list[tuple[int, int]]:
    rows = spark.read.parquet(table.url).collect()
    return sorted((r["id"], r["attempt"]) for r in rows)


def start_write(
    df,
    table: TableRef,
    span: list[Span] | None = None,
) -> tuple[threading.Thread, list[BaseException]]:
    """Writes ``df`` in a thread; its span goes to ``span``."""
    errors: list[BaseException] = []

    def write() -> None:
        try:
            with spanning([] if span is None else span):
                df.write.parquet(table.url)
        except BaseException as e:  # reported by the test
            errors.append(e)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread, errors


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plugin_jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the plugin jar the servers would load.

    The driver serves `spark.jars` from their paths for the application's whole life, and an
    executor launched later (the replacement of a killed one) fetches what is on disk THEN:
    after a rebuild it would get classes that no longer match the driver's."""
    from support.servers import server_python

    code = "from txcommit.server import find_plugin_jar; print(find_plugin_jar())"
    found = subprocess.run(
        [server_python(), "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    copy = tmp_path_factory.mktemp("jars") / Path(found).name
    shutil.copyfile(found, copy)
    return copy


def own_server(
    request: pytest.FixtureRequest, name: str, plugin_jar: Path, **confs: str
) -> Iterator[ServerProcess]:
    """A Connect server of the test's own on the cluster (its UI port known, for its REST API)."""
    server = server_on_cluster(
        request.getfixturevalue("workdir") / name,
        request.getfixturevalue("cluster"),
        request.getfixturevalue("local_s3"),
        **{"spark.ui.enabled": "true", "spark.ui.port": str(free_port()), **confs},
    )
    server.env["TXCOMMIT_PLUGIN_JAR"] = str(plugin_jar)
    yield from running(server)


# One server per scenario, shared by its three stores: a killed executor is replaced by the
# cluster, and each test waits for two live executors of the application before it starts.
@pytest.fixture(scope="module")
def plain_server(request: pytest.FixtureRequest, plugin_jar: Path) -> Iterator[ServerProcess]:
    yield from own_server(request, "cluster-executor-kill", plugin_jar)


@pytest.fixture(scope="module")
def speculating_server(request: pytest.FixtureRequest, plugin_jar: Path) -> Iterator[ServerProcess]:
    yield from own_server(request, "cluster-speculation", plugin_jar, **SPECULATION)


def session_on(server: ServerProcess, table: TableRef):
    # The server is shared by a module's tests: once it is gone, each test fails at once
    # instead of waiting out the client's retries against a closed port.
    assert server.jvm_pids(), f"the module's server is not running:\n{server.log_tail()}"
    spark = new_session(server.url)
    table.prepare(spark)
    for key, value in KEEP_JUNK.items():
        spark.conf.set(key, value)
    return spark


def running_tasks(server: ServerProcess, app_id: str) -> dict[int, str]:
    """Running tasks of the application's active stages, task index -> executor id, from the
    driver's REST API (store-independent: S3 shows no object before a file is closed)."""
    base = f"http://127.0.0.1:{server.confs['spark.ui.port']}/api/v1/applications/{app_id}"
    running = {}
    for st in rest_json(f"{base}/stages?status=active"):
        url = f"{base}/stages/{st['stageId']}/{st['attemptId']}/taskList?status=running"
        running.update({t["index"]: t["executorId"] for t in rest_json(url)})
    return running


def rest_json(url: str, attempts: int = 4):
    """GETs the driver's REST API, retrying a timed-out answer: on a loaded 2-core CI machine
    the driver's UI thread can take more than a few seconds to answer while tasks run."""
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=20) as r:
                return json.load(r)
        except (TimeoutError, urllib.error.URLError):
            if attempt == attempts - 1:
                raise
            time.sleep(1)
    raise AssertionError("unreachable")


# --- an executor JVM killed while its task is writing ------------------------------------------


def run_executor_killed_mid_write(
    spark, table: TableRef, cluster: StandaloneCluster, server: ServerProcess
) -> None:
    # Split 0's first attempt writes for ~30 s after it opens its file, every other attempt
    # takes ~1 s: the victim is surely still writing when it is killed, however slowly a
    # loaded machine starts its task. The kill waits for what proves the attempt is writing,
    # not for a fixed time: on the local file system its file on disk; on S3, where no object
    # shows before its writer closes, the driver saying the task has run for a few seconds.
    n, parts = 2000, 2
    app_id = spark.conf.get("spark.app.id")
    before = cluster.wait_executors(2, app_id=app_id)
    df = slow_rows(spark, n, parts, lambda p, a: 30 if (p, a) == (0, 0) else 1)

    def split0_on_disk() -> bool:
        return any(parse(p)[0] == 0 for p in list(watch.seen))  # a copy: the watch adds to it

    with FileWatch(table) as watch:
        write: list[Span] = []
        thread, errors = start_write(df, table, write)
        wait_for(lambda: 0 in running_tasks(server, app_id), 120, "split 0's task running")
        if table.store == "local":
            wait_for(split0_on_disk, 120, "split 0's data file on disk")
        else:
            time.sleep(3)
        tasks = running_tasks(server, app_id)
        assert 0 in tasks, f"split 0's first attempt is still running: {tasks}"
        victim = cluster.executor_pid(app_id, tasks[0])  # the executor writing split 0
        cluster.kill_executor(victim)
        killed = point()
        thread.join(timeout=150)
    assert not thread.is_alive(), "the write did not finish"
    assert not errors, f"the job failed: {errors[0]!r} {errors[0]}"
    assert_overlaps(write, [killed], 1, "the write around the kill")

    # The executor is gone, and the cluster launched a replacement for the application.
    assert not alive(victim)
    wait_for(
        lambda: bool(set(cluster.executor_pids(app_id)) - set(before)), 60, "a replacement executor"
    )

    rows = read_rows(spark, table)
    assert [i for i, _ in rows] == list(range(n)), "every row exactly once"
    assert any(a >= 1 for _, a in rows), "the lost task's rows come from a re-run (attempt >= 1)"

    committed = table.committed_paths()
    by_split = {parse(p)[0]: parse(p)[2] for p in committed}
    assert len(by_split) == parts
    leftovers = watch.seen - committed
    for junk in leftovers:
        split, _, attempt = parse(junk)
        assert by_split[split] != attempt, f"{junk}: another attempt of split {split} committed"
    if table.store == "local":
        assert leftovers, "the killed attempt's file was on disk"
        assert set(table.data_files()) > committed, "the killed attempt's file is still there"
    else:
        # S3 shows an object only once its writer closes it: the killed attempt left none.
        assert set(table.data_files()) == committed, "nothing partial in the bucket"
        if table.store == "s3-multipart":
            assert not [k for k in table.objects() if k.startswith("__magic")], "markers gone"


@pytest.mark.cluster
def test_executor_killed_mid_write_is_rerun_and_its_files_stay_hidden(
    plain_server: ServerProcess, cluster: StandaloneCluster, any_table: TableRef
):
    spark = session_on(plain_server, any_table)
    try:
        run_executor_killed_mid_write(spark, any_table, cluster, plain_server)
    finally:
        spark.stop()


# --- a speculative duplicate wins -------------------------------------------------------------


def run_speculative_duplicate(spark, table: TableRef) -> None:
    n, parts = 400, 4
    # The first attempt of partition 0 takes 60 s; every other attempt is quick. The job must
    # finish long before (the speculative copy wins): 60 s leaves room for a loaded machine.
    df = slow_rows(spark, n, parts, lambda p, a: 600 if (p, a) == (0, 0) else 0)

    started = time.monotonic()
    with FileWatch(table) as watch:
        df.write.parquet(table.url)
    took = time.monotonic() - started

    committed = table.committed_paths()
    winner = [parse(p)[2] for p in committed if parse(p)[0] == 0]
    assert len(winner) == 1, f"one attempt of split 0 committed: {sorted(committed)}"
    assert took < 50, f"the job did not wait for the stalled attempt ({took:.1f} s)"

    rows = read_rows(spark, table)
    assert [i for i, _ in rows] == list(range(n)), "every row exactly once"
    assert {a for i, a in rows if i < n // parts} == {1}, "split 0's rows are the duplicate's"
    if table.store == "local":
        split0 = sorted(parse(p)[2] for p in watch.seen if parse(p)[0] == 0)
        assert len(split0) >= 2, f"two attempts of split 0 wrote a file: {sorted(watch.seen)}"
        assert winner == [max(split0)], "the later (speculative) attempt committed split 0"
        assert set(table.data_files()) > committed, "the losing attempt's file is on disk, hidden"
    else:
        # The stalled attempt's file appears only if Spark's kill of it closed its writer
        # (conditional put); whatever it left belongs to the loser and stays hidden. With
        # multipart uploads only the job commit completes anything: nothing beyond the record.
        extra = set(table.data_files()) - committed
        assert all(parse(k)[0] == 0 and parse(k)[2] not in winner for k in extra), extra
        if table.store == "s3-multipart":
            assert not extra, "no upload of the losing attempt was completed"


@pytest.mark.cluster
def test_speculative_duplicate_commits_once(speculating_server: ServerProcess, any_table: TableRef):
    spark = session_on(speculating_server, any_table)
    try:
        run_speculative_duplicate(spark, any_table)
    finally:
        spark.stop()
