"""Level 2 of the conformance kit: the commit protocol, end to end, through Spark on the store.

A real Spark Connect server with the txcommit plugin is started on the store (the adapter's
JVM implementation: every store ``txcommit server --store`` serves, the registered
:func:`~txcommit.stores.store_descriptors`)
with fault injection allowed, and a Spark Connect client (pyspark's, in the same environment:
the kit runs where ``txcommit[server]`` is installed) runs these scenarios against tables below
the run's scratch root:

* ``task-retry``: a task fails on its first attempt, at its first row; the retry succeeds.
  Every row is visible exactly once.
* ``duplicate-attempts``: a task fails on its first attempt at its LAST row, so two attempts
  of one task have both written (almost) the whole partition and the first attempt's file is
  left in the store as a dead executor would leave it. Every row is visible exactly once.
* ``persistent-task-failure``: one task keeps failing, the job aborts after the other tasks
  committed theirs. No row of it is visible, the earlier rows are intact, the abort is
  recorded.
* ``driver-killed:<point>``, one per fault point of the protocol (docs/protocol.md): the
  server JVM halts (``spark.txcommit.test.haltAt``) in the middle of an append; a new server
  then sees all of the job (the record was created) or none of it, never a part, and the
  table stays writable (the next job commits).
* ``reader-check``: for every table the scenarios wrote, the files Spark reads are exactly
  the files the commit records add: no file of an uncommitted transaction or a losing
  attempt is ever visible, though the raw listing holds them.

Each scenario returns or raises :class:`CheckFailed` with a plain-words explanation, like the
Level 1 checks; :func:`run_level2` returns one :class:`~txcommit.conformance.runner.Row` per
scenario. ``python/tests/e2e/test_faults.py`` runs the same protocol under the same faults with
the test suite's fixtures (and more: a standalone cluster, random kills).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from txcommit._names import (
    ALLOW_FAULT_INJECTION_CONF,
    CLEANUP_ATTEMPTS_CONF,
    HALT_AT_CONF,
    JOB_AFTER_RECORD,
    JOB_BEFORE_RECORD,
    JOB_BEFORE_SUCCESS,
    JOB_DURING_CLEANUP,
    JOB_DURING_PUBLISH_DATA,
    KEEP_ABORTED_FILES_CONF,
    TASK_BEFORE_COMMIT,
)
from txcommit.adapters.base import MultipartStore, Store
from txcommit.adapters.declarations import AdapterDeclaration
from txcommit.paths import is_data_path, join
from txcommit.stores import (
    root_as_spark_names_it,
    store_descriptor,
    store_names,
)
from txcommit.table.layout import LogLayout, txn_of_record_name
from txcommit.table.names import txn_of
from txcommit.table.records import decode_record
from txcommit.testing.checks import CheckFailed

#: The fault points Level 2 kills the driver at (``HaltPoint.scala``; every point is in
#: ``txcommit._names.HALT_POINTS``), and whether the interrupted job must be visible afterwards:
#: only once its commit record exists.
VISIBLE_AFTER_HALT: dict[str, bool] = {
    TASK_BEFORE_COMMIT: False,
    JOB_DURING_PUBLISH_DATA: False,
    JOB_BEFORE_RECORD: False,
    JOB_AFTER_RECORD: True,
    JOB_DURING_CLEANUP: True,
    JOB_BEFORE_SUCCESS: True,
}
#: Leave the files of failed attempts in the store, as a dead executor would, so that the
#: reader check proves the READ side hides them rather than a cleanup that happened to run.
KEEP_JUNK = {
    KEEP_ABORTED_FILES_CONF: "true",
    CLEANUP_ATTEMPTS_CONF: "false",
}
HALT_TIMEOUT_S = 180.0


@dataclass
class ProtocolTarget:
    """What Level 2 runs on: the store's Python store at the run's scratch root (for raw
    listings and the log), the same root as Spark names it, and the server to start."""

    store: Store
    spark_root: str
    server_store: str
    server_confs: dict[str, str] = field(default_factory=dict)
    session_confs: dict[str, str] = field(default_factory=dict)
    master: str = "local[2,3]"  # 3 attempts per task: local mode retries nothing by default

    @property
    def declaration(self) -> AdapterDeclaration:
        return self.store.declaration


def unavailable_reason(declaration: AdapterDeclaration) -> str | None:
    """Why Level 2 cannot run for this adapter, or None when it can."""
    if not declaration.on_jvm:
        return (
            f"not available: no JVM adapter ('{declaration.name}' is implemented in "
            f"{', '.join(declaration.implementations)} only), so Spark cannot write through it"
        )
    if declaration.name not in store_names():
        return (
            f"not available: the kit cannot start a server for adapter '{declaration.name}' "
            f"(it starts servers for {', '.join(store_names())})"
        )
    return None


# --- the running server and sessions --------------------------------------------------------


class Level2Context:
    """One Level 2 run: the current server (restarted after each halt), sessions on it, the
    tables written and where their rows should stand."""

    def __init__(self, target: ProtocolTarget, workdir: Path) -> None:
        self.target = target
        self.workdir = workdir
        self.server: Any = None  # txcommit.server.RunningServer
        self.starts = 0
        #: table key (relative to the store root) -> rows a reader must see.
        self.tables: dict[str, int] = {}
        #: What the reader check found (shown with its pass).
        self.reader_note = ""
        self._names = iter(range(1_000_000))

    @property
    def store(self) -> Store:
        return self.target.store

    def declares(self, what: str) -> str:
        return f"adapter '{self.target.declaration.name}' {what}"

    def table(self, scenario: str) -> tuple[str, str]:
        """A fresh table: (key below the store root, URL for Spark)."""
        key = f"level2/{scenario.replace(':', '-')}-{next(self._names)}"
        return key, join(self.target.spark_root, key)

    def start_server(self) -> Any:
        from txcommit.server import ServerConfig, free_port, start

        self.starts += 1
        config = ServerConfig(
            port=free_port(),
            master=self.target.master,
            store=self.target.server_store,
            # The kit certifies the store it was given (a NameNode, a bucket), not an emulator:
            # the server starts none (no `local`).
            confs={
                ALLOW_FAULT_INJECTION_CONF: "true",
                "spark.sql.warehouse.dir": str(self.workdir / "warehouse"),
                "spark.ui.enabled": "false",
                **self.target.server_confs,
            },
            log_file=str(self.workdir / f"server-{self.starts}.log"),
            startup_timeout=240.0,
            die_with_parent=True,
        )
        self.server = start(config)
        return self.server

    def live_server(self) -> Any:
        if self.server is None or not self.server.alive():
            self.start_server()
        return self.server

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """A Connect session with txcommit on (and the target's session confs)."""
        from pyspark.sql import SparkSession

        import txcommit
        from txcommit.client import release

        server = self.live_server()
        spark = SparkSession.builder.remote(server.url).create()
        try:
            txcommit.enable(spark)
            for key, value in self.target.session_confs.items():
                spark.conf.set(key, value)
            yield spark
        finally:
            release(spark, server.alive())

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=10.0)
            self.server = None

    # -- the table as a non-Spark reader sees it ------------------------------------------

    def raw_data_files(self, table: str) -> set[str]:
        """Every data file under ``table`` in a raw listing (Spark's rule,
        :func:`~txcommit.paths.is_data_path`), relative to the table."""
        fs, root = self.store.fsspec()
        base = join(root, table)
        if not fs.exists(base):
            return set()
        found = set()
        for path in fs.find(base):
            rel = str(path)[len(base.rstrip("/")) + 1 :] if str(path).startswith(base) else path
            if is_data_path(str(rel)):
                found.add(str(rel))
        return found

    def commit_records(self, table: str) -> dict[str, Any]:
        """txn -> commit record, read from ``<table>/_txcommit/commits/`` with the mirror."""
        layout = LogLayout(table)
        records = {}
        for f in self.store.list(layout.commits_dir):
            txn = txn_of_record_name(f.name)
            data = self.store.read(f.key)
            if txn is None or data is None:
                continue
            records[txn] = decode_record(data, self.store.url_for(f.key), txn)
        return records

    def committed_files(self, table: str) -> set[str]:
        return {a.path for r in self.commit_records(table).values() for a in r.added}

    def aborted(self, table: str) -> set[str]:
        return {
            f.name[: -len(".json")]
            for f in self.store.list(LogLayout(table).aborted_dir)
            if f.name.endswith(".json")
        }

    def spark_files(self, spark: Any, url: str) -> set[str]:
        """The data files a Spark read of ``url`` draws rows from, relative to ``url``."""
        from pyspark.sql import functions as F

        rows = spark.read.parquet(url).select(F.input_file_name().alias("f")).distinct()
        base = urlsplit(url).path.rstrip("/") + "/"
        out = set()
        for row in rows.collect():
            path = unquote(urlsplit(row["f"]).path)
            out.add(path[len(base) :] if path.startswith(base) else path)
        return out


# --- UDFs that fail on purpose (they run in the server's Python workers) --------------------


def fail_first_attempt_at(*ids: int) -> Any:
    """A UDF that raises on the first attempt of the task that meets one of ``ids``.

    Explicit return type and arrow choice: otherwise pyspark reads them through the thread's
    active session, which after a crash may be one whose server is dead (minutes of retries).
    Pickled, not Arrow: a Python worker for an Arrow UDF imports pyarrow and pandas first (about
    a CPU-second per worker); rows go to the worker in batches of
    ``spark.sql.execution.python.udf.maxRecordsPerBatch`` (100 by default)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    targets = set(ids)

    @F.udf(returnType=LongType(), useArrow=False)
    def maybe_fail(i):  # type: ignore[no-untyped-def]  # hints would make Spark guess an eval type
        from pyspark import TaskContext

        task = TaskContext.get()
        assert task is not None  # a UDF runs inside a task
        if i in targets and task.attemptNumber() == 0:
            raise RuntimeError(f"txcommit conformance: injected failure at id {i}")
        return i

    return maybe_fail


#: The message of the kit's task that fails on every attempt.
PERSISTENT_FAILURE = "txcommit conformance: persistent injected failure"


def _sleep_ms(ms: int) -> Any:
    """A column that sleeps ``ms`` in the task that evaluates it: ``java.lang.Thread.sleep``
    through Spark's ``reflect``, which returns the string "null". Nondeterministic, so the
    optimizer keeps it; evaluated in the JVM, so no Python worker starts."""
    from pyspark.sql import functions as F

    return F.expr(f"reflect('java.lang.Thread', 'sleep', CAST({int(ms)} AS BIGINT))")


def fail_at(column: str, value: int, message: str, after_ms: int = 0) -> Any:
    """``column``, except that the row where it equals ``value`` fails its task, on every
    attempt, with ``message`` (after ``after_ms`` of sleep, so that the job's other tasks can
    commit first). Spark's own ``raise_error``: no Python worker, unlike a UDF."""
    from pyspark.sql import functions as F

    col = F.col(column)
    text = F.lit(message)
    if after_ms:
        text = F.concat(text, F.substring(_sleep_ms(after_ms), 1, 0))  # sleeps, adds nothing
    return F.when(col == value, F.raise_error(text)).otherwise(col)


def pause_at(column: str, value: int | None, ms: int) -> Any:
    """``column``, with a pause of ``ms`` in the task at the row where it equals ``value`` (at
    every row when ``value`` is None), evaluated in the JVM."""
    from pyspark.sql import functions as F

    col = F.col(column)
    paused = col + F.length(_sleep_ms(ms)) * 0
    return paused if value is None else F.when(col == value, paused).otherwise(col)


# --- scenarios ------------------------------------------------------------------------------


def _count_once(ctx: Level2Context, spark: Any, url: str, expected: int, what: str) -> None:
    df = spark.read.parquet(url)
    count, distinct = df.count(), df.distinct().count()
    if count != expected or distinct != expected:
        raise CheckFailed(
            f"{ctx.declares('runs the txcommit protocol')}, but after {what} a reader of {url} "
            f"sees {count} rows ({distinct} distinct) where exactly {expected} distinct rows "
            "must be visible"
        )


def _retry(ctx: Level2Context, name: str, last_row: bool) -> None:
    key, url = ctx.table(name)
    n, parts = 8000, 4
    with ctx.session() as spark:
        for k, v in KEEP_JUNK.items():
            spark.conf.set(k, v)
        # Small UDF batches: with last_row the failing attempt has written most of its rows.
        spark.conf.set("spark.sql.execution.python.udf.maxRecordsPerBatch", "100")
        fail_at = 2 * n // parts - 1 if last_row else n // parts
        df = spark.range(0, n, 1, parts).select(fail_first_attempt_at(fail_at)("id").alias("id"))
        df.write.parquet(url)
        ctx.tables[key] = n
        _count_once(ctx, spark, url, n, "a job whose task failed once and was retried")


def task_retry(ctx: Level2Context) -> None:
    _retry(ctx, "task-retry", last_row=False)


def duplicate_attempts(ctx: Level2Context) -> None:
    _retry(ctx, "duplicate-attempts", last_row=True)


def persistent_task_failure(ctx: Level2Context) -> None:
    key, url = ctx.table("persistent-task-failure")
    with ctx.session() as spark:
        spark.range(10_000).write.parquet(url)
        ctx.tables[key] = 10_000
        for k, v in KEEP_JUNK.items():
            spark.conf.set(k, v)
        df = (
            spark.range(10_000)
            .repartition(7)
            .select(fail_at("id", 9999, PERSISTENT_FAILURE, after_ms=2000).alias("id"))
        )
        try:
            df.write.mode("append").parquet(url)
        except Exception as e:
            if PERSISTENT_FAILURE not in str(e):
                raise CheckFailed(
                    f"{ctx.declares('runs the txcommit protocol')}, but a job with a "
                    f"persistently failing task failed for another reason: "
                    f"{str(e).splitlines()[0][:300]}"
                ) from None
        else:
            raise CheckFailed(
                f"{ctx.declares('runs the txcommit protocol')}, but a job whose task fails on "
                "every attempt succeeded"
            )
        _count_once(ctx, spark, url, 10_000, "an aborted append (its other tasks committed)")
    records, aborted = ctx.commit_records(key), ctx.aborted(key)
    if len(records) != 1 or len(aborted) != 1:
        raise CheckFailed(
            f"{ctx.declares('runs the txcommit protocol')}, but after one committed and one "
            f"aborted job {url} holds {len(records)} commit record(s) and {len(aborted)} abort "
            "record(s); expected 1 and 1"
        )


def _halted(ctx: Level2Context, point: str) -> None:
    from pyspark.sql import functions as F

    key, url = ctx.table(f"driver-killed:{point}")
    base, n = 1000, 6000
    with ctx.session() as spark:
        spark.range(base).withColumn("k", F.col("id") % 4).write.partitionBy("k").parquet(url)
        spark.conf.set(HALT_AT_CONF, point)
        server = ctx.server
        append = (
            spark.range(base, base + n, 1, 3)
            .withColumn("k", F.col("id") % 4)
            .write.mode("append")
            .partitionBy("k")
        )

        def write() -> None:
            with contextlib.suppress(Exception):
                append.parquet(url)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        deadline = time.monotonic() + HALT_TIMEOUT_S
        while server.alive() and time.monotonic() < deadline:
            writer.join(0.2)
            if not writer.is_alive():  # the job ended: give a halt in flight a moment
                time.sleep(3)
                break
        if server.alive():
            how = "the append finished" if not writer.is_alive() else "it ran"
            server.stop(grace=5.0)
            raise CheckFailed(
                f"the server did not halt at fault point {point} ({how} for "
                f"{HALT_TIMEOUT_S - max(0.0, deadline - time.monotonic()):.0f} s; log: "
                f"{server.log_path}); does this plugin honour {HALT_AT_CONF} with "
                f"{ALLOW_FAULT_INJECTION_CONF}?"
            )
    # The session is closed now (its server died): the append's request fails at once instead
    # of being retried for minutes. Wait for it, so that no thread is left inside gRPC.
    writer.join(60)
    visible = VISIBLE_AFTER_HALT[point]
    expected = base + (n if visible else 0)
    ctx.tables[key] = expected
    with ctx.session() as reader:  # a new server, as any reader after the crash
        _count_once(
            ctx,
            reader,
            url,
            expected,
            f"the driver died at {point} during an append of {n} rows to {base} "
            f"({'after' if visible else 'before'} the commit record)",
        )
        records = ctx.commit_records(key)
        if len(records) != (2 if visible else 1):
            raise CheckFailed(
                f"{ctx.declares('runs the txcommit protocol')}, but after the driver died at "
                f"{point} {url} holds {len(records)} commit records; expected "
                f"{2 if visible else 1}"
            )
        after = reader.range(base + n, base + n + 10).withColumn("k", F.col("id") % 4)
        after.write.mode("append").partitionBy("k").parquet(url)
        ctx.tables[key] = expected + 10
        _count_once(ctx, reader, url, expected + 10, f"the next append after a halt at {point}")


def halt_scenario(point: str) -> Callable[[Level2Context], None]:
    def run(ctx: Level2Context) -> None:
        _halted(ctx, point)

    return run


def reader_check(ctx: Level2Context) -> None:
    if not ctx.tables:
        raise CheckFailed("no table was written by the other scenarios; nothing to check")
    hidden = 0
    with ctx.session() as spark:
        for key in sorted(ctx.tables):
            url = join(ctx.target.spark_root, key)
            committed = ctx.committed_files(key)
            raw = ctx.raw_data_files(key)
            seen = ctx.spark_files(spark, url)
            shown = sorted(seen - committed)
            if shown:
                txns = sorted({str(txn_of(s.rsplit("/", 1)[-1])) for s in shown})
                raise CheckFailed(
                    f"{ctx.declares('runs the txcommit protocol')}, but a reader of {url} sees "
                    f"{len(shown)} file(s) that no commit record adds, e.g. {shown[0]} "
                    f"(transactions {', '.join(txns)}): uncommitted data is visible"
                )
            missing = sorted(committed - seen)
            if missing:
                raise CheckFailed(
                    f"{ctx.declares('runs the txcommit protocol')}, but a reader of {url} does "
                    f"not see {len(missing)} committed file(s), e.g. {missing[0]}"
                )
            gone = sorted(committed - raw)
            if gone:
                raise CheckFailed(
                    f"{ctx.declares('runs the txcommit protocol')}, but {len(gone)} file(s) "
                    f"that a commit record of {url} adds are not in the store, e.g. {gone[0]}"
                )
            # Row counts were checked by each scenario, after its last write to the table.
            hidden += len(raw - committed)
    ctx.reader_note = (
        f"{hidden} uncommitted file(s) in raw listings of {len(ctx.tables)} tables, none visible"
    )


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Level2Context], None]
    proves: str


def scenarios(halt_points: Sequence[str] = tuple(VISIBLE_AFTER_HALT)) -> list[Scenario]:
    """The Level 2 scenarios, in the order they run (the reader check last)."""
    unknown = [p for p in halt_points if p not in VISIBLE_AFTER_HALT]
    if unknown:
        raise ValueError(
            f"unknown fault point(s) {', '.join(unknown)}; known: {', '.join(VISIBLE_AFTER_HALT)}"
        )
    found = [
        Scenario(
            "task-retry",
            task_retry,
            "a task that fails once and is retried leaves every row visible exactly once",
        ),
        Scenario(
            "duplicate-attempts",
            duplicate_attempts,
            "two attempts of one task that both wrote the partition leave every row visible "
            "exactly once",
        ),
        Scenario(
            "persistent-task-failure",
            persistent_task_failure,
            "an aborted job shows none of its rows (its committed tasks' files included), "
            "earlier rows stay intact, and the abort is recorded",
        ),
    ]
    for point in halt_points:
        found.append(
            Scenario(
                f"driver-killed:{point}",
                halt_scenario(point),
                f"a driver killed at {point} leaves the append "
                f"{'wholly visible' if VISIBLE_AFTER_HALT[point] else 'wholly invisible'}, and the "
                "table writable",
            )
        )
    found.append(
        Scenario(
            "reader-check",
            reader_check,
            "in every table written above, a reader sees exactly the files the commit records "
            "add; no uncommitted file is ever visible",
        )
    )
    return found


def run_level2(
    target: ProtocolTarget,
    *,
    halt_points: Sequence[str] = tuple(VISIBLE_AFTER_HALT),
    workdir: Path | None = None,
    on_row: Callable[[Any], None] | None = None,
) -> list[Any]:
    """Runs the Level 2 scenarios on ``target``; returns their rows (pass / fail / not
    available). One server serves every scenario until a halt kills it; the next scenario
    starts a new one. Everything written goes below the target's scratch root."""
    from txcommit.conformance.runner import FAIL, NOT_AVAILABLE, PASS, Row, scrub

    plan = scenarios(halt_points)
    why = unavailable_reason(target.declaration)
    if why is not None:
        return [Row(s.name, "protocol", NOT_AVAILABLE, 0.0, why, level=2) for s in plan]
    own = workdir is None
    work = Path(tempfile.mkdtemp(prefix="txcommit-conformance-l2-")) if own else workdir
    assert work is not None
    ctx = Level2Context(target, work)
    rows = []
    try:
        for s in plan:
            start = time.monotonic()
            try:
                s.run(ctx)
            except CheckFailed as e:
                result, why_ = FAIL, str(e)
            except Exception as e:
                first = (str(e).splitlines() or [""])[0][:400]
                log = f" (server log: {ctx.server.log_path})" if ctx.server is not None else ""
                result, why_ = FAIL, f"the scenario crashed: {type(e).__name__}: {first}{log}"
            else:
                result, why_ = PASS, s.proves
                if s.name == "reader-check" and ctx.reader_note:
                    why_ = f"{s.proves} ({ctx.reader_note})"
            seconds = round(time.monotonic() - start, 3)
            row = Row(s.name, "protocol", result, seconds, scrub(why_), level=2)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    finally:
        ctx.stop()
        cleanup(target.store)
        if own and all(r.result == PASS for r in rows) and len(rows) == len(plan):
            shutil.rmtree(work, ignore_errors=True)  # server logs are kept when one failed
    return rows


def cleanup(store: Store) -> None:
    """Deletes the Level 2 tables (best effort) and aborts their open multipart uploads."""
    with contextlib.suppress(Exception):
        if isinstance(store, MultipartStore):
            for upload in store.list_multipart_uploads("level2"):
                store.abort_multipart(upload)
    with contextlib.suppress(Exception):
        fs, root = store.fsspec()
        base = join(root, "level2")
        if fs.exists(base):
            fs.rm(base, recursive=True)


def target_for(
    store: Store,
    *,
    endpoint: str | None = None,
    region: str | None = None,
    server_confs: Mapping[str, str] | None = None,
    session_confs: Mapping[str, str] | None = None,
) -> ProtocolTarget:
    """The Level 2 target of an open store (the kit's scratch root): where Spark reaches it
    and the server confs for it, as its store's descriptor says (``level2_target``)."""
    name = store.declaration.name
    known = name in store_names()
    if known:
        spark_root, confs = store_descriptor(name).level2_target(store, endpoint, region)
    else:  # unavailable_reason says why Level 2 cannot run
        spark_root, confs = root_as_spark_names_it(store, endpoint, region)
    confs = {**confs, **(server_confs or {})}
    return ProtocolTarget(
        store=store,
        spark_root=spark_root,
        server_store=name if known else "local",
        server_confs=confs,
        session_confs=dict(session_confs or {}),
    )


__all__ = [
    "KEEP_JUNK",
    "VISIBLE_AFTER_HALT",
    "ProtocolTarget",
    "Scenario",
    "cleanup",
    "fail_at",
    "fail_first_attempt_at",
    "pause_at",
    "run_level2",
    "scenarios",
    "target_for",
    "unavailable_reason",
]
