"""``txcommit demo``: the DBIO paper's table, replayed live.

The paper asks of each commit protocol: does a reader see correct output after a failure?
This command answers it for Hadoop's FileOutputCommitter v1 and v2 and for txcommit, on an
embedded Spark Connect server with the plugin, by causing each failure for real and counting
the rows a reader then sees (each table holds 1,000 committed rows first):

* task failure: a task fails once after writing rows and Spark retries it; correct is every
  row of the job exactly once;
* job failure: the task holding row 9999 sleeps, then fails on every attempt, so the job fails
  after the other tasks committed; correct is none of the job's rows;
* driver failure during commit: the server is killed while the job commits; correct is all of
  the job or none of it. For v1 and v2 that is a real SIGKILL as soon as the job's first file
  reaches the table (on ``--store s3`` every rename is a copy the latency model makes slow,
  so the kill lands while their commit moves files); for txcommit the server halts at its
  commit point, just before the commit record. A new server then counts.

First it times a write of ``--rows`` rows as ``--files`` files with each protocol. Exit code 1 if
txcommit showed a reader anything but correct output.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from txcommit._console import text
from txcommit._names import ALLOW_FAULT_INJECTION_CONF, HALT_AT_CONF
from txcommit.bench.protocols import BY_KEY, Protocol
from txcommit.client import abandon
from txcommit.server import RunningServer, ServerConfig, free_port, start

#: (label, protocol key of txcommit.bench.protocols) in the paper's column order.
COLUMNS: list[tuple[str, str]] = [
    ("Hadoop commit v1", "v1"),
    ("Hadoop commit v2", "v2"),
    ("txcommit", "txcommit"),
]
TASK, JOB, DRIVER = "task failure", "job failure", "driver failure during commit"
#: The paper's own answers (v1, v2, DBIO transactional commit): correct output guaranteed?
PAPER: dict[str, tuple[str, str, str]] = {
    TASK: ("Yes", "Yes", "Yes"),
    JOB: ("Yes", "No", "Yes"),
    DRIVER: ("No", "No", "Yes"),
}
BASE_ROWS = 1_000
JOB_ROWS = 10_000
BUCKET = "demo"


@dataclass(frozen=True)
class Outcome:
    """What a reader saw of one failed job: ``seen`` of its ``rows`` rows (``twice`` of them
    more than once) and whether the table's earlier rows were intact."""

    seen: int
    rows: int
    base_intact: bool
    note: str = ""

    def kind(self) -> str:
        if not self.base_intact:
            return "earlier rows lost"
        if self.seen == 0:
            return "none"
        if self.seen == self.rows:
            return "all"
        if self.seen > self.rows:
            return f"duplicates: {self.seen:,} rows of {self.rows:,}"
        return f"part: {self.seen:,} of {self.rows:,} rows"

    def correct(self, scenario: str) -> bool:
        kind = self.kind()
        return (
            kind == "all"
            if scenario == TASK
            else kind == "none" or (scenario == DRIVER and kind == "all")
        )

    def cell(self, scenario: str) -> str:
        verdict = "correct" if self.correct(scenario) else "WRONG"
        return f"{self.kind()} ({verdict}{', ' + self.note if self.note else ''})"


@dataclass
class Demo:
    """The running pieces: a server (restarted after a driver failure), the store, tables."""

    store: str
    workdir: Path
    config: ServerConfig
    fail_delay: float
    s3: Any = None  # txcommit_store_s3.devkit.emulator.LocalS3 on --store s3
    server: RunningServer | None = None
    starts: int = 0

    def start_server(self) -> RunningServer:
        self.starts += 1
        log = str(self.workdir / f"server-{self.starts}.log")
        self.server = start(replace(self.config, port=free_port(), log_file=log))
        return self.server

    def url(self, name: str) -> str:
        if self.store == "s3":
            return f"s3a://{BUCKET}/{name}"
        return str(self.workdir / "tables" / name)

    def data_files(self, name: str) -> set[str]:
        """Data files of the table in a raw listing (names Spark reads: no ``_``/``.`` part)."""
        if self.s3 is not None:
            pages = (
                self._s3_client()
                .get_paginator("list_objects_v2")
                .paginate(Bucket=BUCKET, Prefix=f"{name}/")
            )
            rels = [o["Key"][len(name) + 1 :] for page in pages for o in page.get("Contents", [])]
        else:
            # os.walk skips a directory that vanishes under it: v1/v2 delete their
            # `_temporary` tree while this listing runs.
            root = self.workdir / "tables" / name
            rels = [
                str((Path(d) / f).relative_to(root)) for d, _, files in os.walk(root) for f in files
            ]
        return {r for r in rels if not any(part[:1] in "_." for part in r.split("/"))}

    def _s3_client(self) -> Any:
        import boto3

        from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET

        return boto3.client(
            "s3",
            endpoint_url=self.s3.endpoint,
            region_name="us-east-1",
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_SECRET,
        )

    @contextlib.contextmanager
    def session(self, proto: Protocol) -> Iterator[Any]:
        """A Connect session on the live server with exactly ``proto``'s confs."""
        from txcommit.client import connect, release

        if self.server is None or not self.server.alive():
            self.start_server()
        assert self.server is not None
        server = self.server
        spark = connect(server.url)
        for key, value in proto.session_confs(self.store).items():
            spark.conf.set(key, value)
        _register_udfs(spark, self.fail_delay)
        try:
            yield spark
        finally:
            release(spark, server.alive())

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=10.0)


def _register_udfs(spark: Any, delay: float) -> None:
    """``demo_fail_once(id)``: row 9999 fails its task's first attempt; ``demo_fail(id)``: row
    9999 sleeps ``delay`` s (the other tasks commit meanwhile), then fails every attempt."""
    from pyspark.sql.types import LongType

    def fail_once(i):  # type: ignore[no-untyped-def]  # hints would make Spark guess an eval type
        from pyspark import TaskContext

        task = TaskContext.get()
        assert task is not None  # a UDF runs inside a task
        if i == 9999 and task.attemptNumber() == 0:
            raise RuntimeError("oops! (first attempt)")
        return i

    def fail(i):  # type: ignore[no-untyped-def]  # hints would make Spark guess an eval type
        import time as _t

        if i == 9999:
            _t.sleep(delay)
            raise RuntimeError("oops!")
        return i

    spark.udf.register("demo_fail_once", fail_once, LongType())
    spark.udf.register("demo_fail", fail, LongType())


def _write(spark: Any, proto: Protocol, df: Any, url: str) -> None:
    df.write.options(**proto.write_options()).mode("append").parquet(url)


def _outcome(demo: Demo, proto: Protocol, url: str, note: str = "") -> Outcome:
    """Counts what a reader now sees of the job (rows BASE_ROWS.. of the table)."""
    with demo.session(proto) as spark:
        df = spark.read.parquet(url)
        base = df.where(f"id < {BASE_ROWS}").count()
        seen = df.where(f"id >= {BASE_ROWS}").count()
    return Outcome(int(seen), JOB_ROWS, base == BASE_ROWS, note)


def _job(spark: Any, udf: str | None, partitions: int) -> Any:
    df = spark.range(BASE_ROWS, BASE_ROWS + JOB_ROWS, 1, partitions)
    if udf is None:
        return df
    # The UDF sees the ids; 9999 is in the job's range (BASE_ROWS <= 9999 < BASE_ROWS + JOB_ROWS).
    return df.selectExpr(f"{udf}(id) AS id")


def _with_base(demo: Demo, proto: Protocol, name: str) -> str:
    url = demo.url(name)
    with demo.session(proto) as spark:
        _write(spark, proto, spark.range(BASE_ROWS), url)
    return url


def task_failure(demo: Demo, proto: Protocol, name: str) -> Outcome:
    url = _with_base(demo, proto, name)
    with demo.session(proto) as spark:
        _write(spark, proto, _job(spark, "demo_fail_once", 7), url)
    return _outcome(demo, proto, url)


def job_failure(demo: Demo, proto: Protocol, name: str) -> Outcome:
    url = _with_base(demo, proto, name)
    with demo.session(proto) as spark:
        try:
            _write(spark, proto, _job(spark, "demo_fail", 7), url)
        except Exception as e:  # the job must fail, as in the paper
            if "oops" not in str(e):
                raise
        else:
            raise SystemExit(f"the failing job of {proto.label} did not fail: the demo is broken")
    return _outcome(demo, proto, url)


def driver_failure(demo: Demo, proto: Protocol, name: str) -> Outcome:
    """Kills the server while the job commits, then counts on a new server."""
    url = _with_base(demo, proto, name)
    before = demo.data_files(name)
    note = ""
    with demo.session(proto) as spark:
        server = demo.server
        assert server is not None
        if proto.is_txcommit:
            spark.conf.set(HALT_AT_CONF, "job.beforeRecord")  # the server halts itself there
        job = threading.Thread(
            target=lambda: _quietly(lambda: _write(spark, proto, _job(spark, None, 20), url)),
            daemon=True,
        )
        job.start()
        deadline = time.monotonic() + 600
        while server.alive() and job.is_alive() and time.monotonic() < deadline:
            if not proto.is_txcommit and demo.data_files(name) - before:
                server.kill()  # the job's first file reached the table: its commit is under way
                break
            time.sleep(0.05)
        if server.alive():
            if job.is_alive():
                server.kill()
                note = "killed before any file reached the table"
            else:
                note = "the commit ended before the kill"
                server.kill()
        # The server is dead: close the client now, or pyspark keeps retrying the job's request
        # (for minutes) and the job thread, and this join, wait for it.
        abandon(spark)
        job.join(60)
    return _outcome(demo, proto, url, note)


def _quietly(fn: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):  # the server dies under the job: its error is expected
        fn()


SCENARIOS: list[tuple[str, Callable[[Demo, Protocol, str], Outcome]]] = [
    (TASK, task_failure),
    (JOB, job_failure),
    (DRIVER, driver_failure),
]


def performance(demo: Demo, rows: int, files: int) -> dict[str, float]:
    """Seconds to write ``rows`` rows as ``files`` files, per protocol."""
    out: dict[str, float] = {}
    for label, key in COLUMNS:
        proto = BY_KEY[key]
        with demo.session(proto) as spark:
            t0 = time.perf_counter()
            _write(spark, proto, spark.range(rows).repartition(files), demo.url(f"perf-{key}"))
            out[label] = time.perf_counter() - t0
    return out


def render(
    table: dict[str, dict[str, Outcome]], perf: dict[str, float], rows: int, files: int
) -> str:
    header = ["failure", *(label for label, _ in COLUMNS), "the paper (v1 / v2 / DBIO)"]
    body = [
        [
            f"write {rows:,} rows as {files} files (s)",
            *(f"{perf[label]:.1f}" for label, _ in COLUMNS),
            "fastest: DBIO",
        ]
    ]
    for scenario, _ in SCENARIOS:
        row = [scenario, *(table[scenario][label].cell(scenario) for label, _ in COLUMNS)]
        body.append([*row, " / ".join(PAPER[scenario])])
    return text(header, body, sep=" | ", rule=True, pad=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="txcommit demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--rows",
        type=int,
        default=1_000_000,
        help="rows of the timed write (default 1,000,000; the DBIO paper wrote 10,000,000)",
    )
    p.add_argument(
        "--files",
        type=int,
        default=20,
        help="files of the timed write (default 20: on --store s3 v1 renames each one "
        "through a slow copy, about 0.6 s a file, so 100 files add over two minutes)",
    )
    p.add_argument(
        "--store",
        choices=("local", "s3"),
        default="s3",
        help="where the tables are: s3 (default: a local S3 endpoint charging each request "
        "what it costs on S3, so a rename is a slow copy) or local (the local file system, "
        "where v1's commit is usually over before a kill can land)",
    )
    p.add_argument(
        "--master",
        default="local[*,4]",
        help="Spark master (default local[*,4]: a failed task is retried up to 4 times)",
    )
    p.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where tables and server logs go (default: a temporary directory, removed after)",
    )
    p.add_argument(
        "--fail-delay",
        type=float,
        default=5.0,
        help="seconds the failing task sleeps before it throws (default 5, as in the paper)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    for flag, value in (("--rows", ns.rows), ("--files", ns.files)):
        if value < 1:
            print(f"txcommit demo: {flag} must be 1 or more, got {value}", file=sys.stderr)
            return 2
    owned = ns.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="txcommit-demo-")) if owned else ns.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    confs = {
        ALLOW_FAULT_INJECTION_CONF: "true",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
        "spark.ui.enabled": "false",
    }
    s3 = None
    if ns.store == "s3":
        from txcommit.devkit.latency_model import s3_model
        from txcommit_store_s3 import s3a_confs
        from txcommit_store_s3.devkit.emulator import LocalS3

        s3 = LocalS3(latency=s3_model()).start()
        s3.create_bucket(BUCKET)
        confs.update(s3a_confs(s3.endpoint))
    config = ServerConfig(
        master=ns.master,
        confs=confs,
        store=ns.store,
        startup_timeout=300,
        die_with_parent=True,
    )
    demo = Demo(ns.store, workdir, config, ns.fail_delay, s3)

    def say(what: str) -> None:
        print(f"txcommit demo: {what}", file=sys.stderr, flush=True)

    try:
        say(f"starting a Spark Connect server with the plugin ({ns.master}, store {ns.store})")
        demo.start_server()
        say(f"timing a write of {ns.rows:,} rows as {ns.files} files with each protocol")
        perf = performance(demo, ns.rows, ns.files)
        table: dict[str, dict[str, Outcome]] = {}
        for scenario, run in SCENARIOS:
            table[scenario] = {}
            for label, key in COLUMNS:
                say(f"{scenario}: {label}")
                name = f"{scenario.split()[0]}-{key}"
                table[scenario][label] = run(demo, BY_KEY[key], name)
    finally:
        demo.stop()
        if s3 is not None:
            s3.stop()
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(f"The DBIO paper's table, live ({ns.store}): what a reader sees of a failed job")
    print()
    print(render(table, perf, ns.rows, ns.files))
    print()
    wrong = [s for s, _ in SCENARIOS if not table[s]["txcommit"].correct(s)]
    if wrong:
        print(f"FAIL: txcommit showed a reader wrong output after: {', '.join(wrong)}")
        return 1
    print("txcommit: correct output after every failure, earlier rows intact.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
