"""Real Spark Connect servers for the end-to-end tests.

The tests run in the JVM-less client venv (pyspark-client: no jars, no JVM). Servers are
started exactly as a user starts one, with the `txcommit server` command of the server-side
venv (`TXCOMMIT_SERVER_PYTHON`), and killed with SIGKILL where a test needs a crash.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from txcommit._names import ALLOW_FAULT_INJECTION_CONF
from txcommit.devkit.testkit import store_test_kits
from txcommit_store_s3 import s3a_confs
from txcommit_store_s3.devkit.emulator import LocalS3

from support.stores import server_args

if TYPE_CHECKING:
    from support.cluster import StandaloneCluster

READY_MARK = "ready at sc://"
#: The main class of the JVM spark-submit starts for a server (an executor's is
#: CoarseGrainedExecutorBackend).
DRIVER_MAIN = b"org.apache.spark.deploy.SparkSubmit"
START_TIMEOUT_S = 240
#: JVM options of every Spark JVM the tests start (Connect servers, classic spark-submit jobs,
#: the cluster's daemons and executors). Test JVMs live for seconds to minutes and share two
#: cores: the C1 compiler alone and the serial collector start them in about half the CPU time
#: of the defaults (C2 compiler and GC threads compete with the work). The benchmark and the
#: demo keep the JVM's defaults. TXCOMMIT_TEST_JVM_OPTS="" keeps them in the tests too. C1
#: alone reserves only 48 MB for compiled code, and a JVM whose code cache fills runs
#: interpreted from then on (a shared server did, 97 s into its life): 240 MB, as tiered has.
TEST_JVM_OPTS = os.environ.get(
    "TXCOMMIT_TEST_JVM_OPTS",
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=240m",
).strip()


def with_test_jvm_opts(env: dict[str, str]) -> dict[str, str]:
    """`env` with TEST_JVM_OPTS added to what spark-submit (SPARK_SUBMIT_OPTS) and the
    standalone daemons (SPARK_DAEMON_JAVA_OPTS) pass to their JVM."""
    out = dict(env)
    for var in ("SPARK_SUBMIT_OPTS", "SPARK_DAEMON_JAVA_OPTS"):
        out[var] = f"{out.get(var, '')} {TEST_JVM_OPTS}".strip()
    return out


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat after the command name (which may hold spaces and ')')."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and fields[1] == str(pid):
                out.append(int(entry))
    return out


@dataclass(frozen=True)
class Jvm:
    """A process recorded by pid AND start time, so a recycled pid is never mistaken for it."""

    pid: int
    start_ticks: str

    @staticmethod
    def of(pid: int) -> Jvm | None:
        fields = _stat_fields(pid)
        return None if fields is None else Jvm(pid, fields[19])

    def is_driver(self) -> bool:
        try:
            argv = Path(f"/proc/{self.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return b"java" in argv[0] and DRIVER_MAIN in argv

    def alive(self) -> bool:
        """Still the process recorded (not a recycled pid) and not a zombie."""
        fields = _stat_fields(self.pid)
        return fields is not None and fields[19] == self.start_ticks and fields[0] not in "ZX"

    def kill(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def server_python() -> str:
    python = os.environ.get("TXCOMMIT_SERVER_PYTHON")
    if not python:
        repo = Path(__file__).resolve().parents[3]
        python = str(repo / ".venv" / "bin" / "python")
    if not Path(python).exists():
        raise RuntimeError(
            f"server-side Python {python} not found: run `bash .ci/setup` first, or set "
            "TXCOMMIT_SERVER_PYTHON to a Python that has `txcommit[server]` installed"
        )
    # Absolute but not resolved (resolving would leave the venv): servers run in their own
    # working directories.
    return os.path.abspath(python)


#: What every test server runs with unless the test sets it: no web UI (its Jetty costs each
#: start about 2 s of CPU on two shared cores, and only the cluster tests read its REST API).
TEST_SERVER_CONFS = {"spark.ui.enabled": "false"}


class PortTakenError(RuntimeError):
    """The server could not listen on its port: another process holds it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServerProcess:
    """One `txcommit server` process and the Spark JVM it runs."""

    workdir: Path
    confs: dict[str, str] = field(default_factory=dict)
    master: str = "local[2,3]"
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    #: The driver JVM, recorded at start (pid and start time): the only process kill_jvm kills.
    jvm: Jvm | None = None

    @property
    def url(self) -> str:
        return f"sc://localhost:{self.port}"

    def start(self) -> ServerProcess:
        """Starts the server; on a port another process took meanwhile (ports drawn by
        `free_port` are free only when drawn, and two test streams draw side by side), once more
        on a new port."""
        for attempt in range(3):
            try:
                return self._start()
            except PortTakenError:
                if attempt == 2:
                    raise
                self.port = free_port()
                self.output.clear()
        raise AssertionError("unreachable")

    def _start(self) -> ServerProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.jvm = None
        args = [
            server_python(),
            "-m",
            "txcommit.cli",
            "server",
            "--port",
            str(self.port),
            "--master",
            self.master,
        ]
        confs = {
            "spark.sql.warehouse.dir": str(self.workdir / "warehouse"),
            **TEST_SERVER_CONFS,
            **self.confs,
        }
        for key, value in confs.items():
            args += ["--conf", f"{key}={value}"]
        args += self.extra_args
        env = {**os.environ, "PYSPARK_PYTHON": server_python(), **self.env}
        self.proc = subprocess.Popen(
            args,
            cwd=self.workdir,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            if READY_MARK in line:
                self.jvm = self._find_jvm()
                return self
        self.stop()
        tail = "".join(self.output[-60:])
        taken = (f"Port {self.port}", "already in use"), (f"port {self.port} was taken",)
        if any(all(t in tail for t in words) for words in taken) or "BindException" in tail:
            raise PortTakenError(f"port {self.port} was taken:\n{tail}")
        raise RuntimeError("server did not start:\n" + tail)

    def _find_jvm(self) -> Jvm | None:
        """The Spark driver JVM that this server's `txcommit server` process started: its
        child (spark-submit execs into the JVM) running SparkSubmit. Found by ancestry, never by
        the port: another test's server may carry the same port on its command line."""
        if self.proc is None:
            return None
        for pid in children(self.proc.pid):
            jvm = Jvm.of(pid)
            if jvm is not None and jvm.is_driver():
                return jvm
        return None

    def jvm_pids(self) -> list[int]:
        """The server's driver JVM, as recorded when the server started, while it is alive.
        Executors on a cluster are not the server: they exit on their own once it is gone."""
        if self.jvm is None:
            self.jvm = self._find_jvm()
        return [self.jvm.pid] if self.jvm is not None and self.jvm.alive() else []

    def kill_jvm(self) -> None:
        """SIGKILL the server JVM: no shutdown hook, no cleanup, like a machine dying."""
        if self.jvm is None:
            self.jvm = self._find_jvm()
        if self.jvm is not None:
            self.jvm.kill()

    def wait_dead(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.jvm_pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not self.jvm_pids(), "the server JVM is still running"
        if self.proc is not None:
            self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        # The JVM first, while `txcommit server` still is its parent (and so findable).
        if self.jvm is None:
            self.jvm = self._find_jvm()
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.kill_jvm()

    def log_tail(self, n: int = 80) -> str:
        return "".join(self.output[-n:])

    def log_file(self) -> Path:
        """The server's log file (the Spark driver's log, which `txcommit server` names)."""
        found = re.search(r"\(log: (.+)\)", "".join(self.output))
        assert found, "the server prints where its log is"
        return Path(found.group(1).strip())

    def log_count(self, text: str) -> int:
        """How often ``text`` is in the server's log so far."""
        return self.log_file().read_text(errors="replace").count(text)


def running(server: ServerProcess) -> Iterator[ServerProcess]:
    server.start()
    try:
        yield server
    finally:
        server.stop()
        if os.environ.get("TXCOMMIT_TEST_SHOW_SERVER_LOG"):
            sys.stderr.write(server.log_tail())


# --- servers and sessions as the tests use them -------------------------------------------------

#: Lets a test halt the server at a fault point (spark.txcommit.test.haltAt).
FAULTS_ALLOWED = {ALLOW_FAULT_INJECTION_CONF: "true"}


#: Every session the tests opened. `abandon_sessions` closes them at the end of the run without
#: a request: a test that failed while its session pointed at a server it had killed would
#: otherwise leave pyspark's exit hook retrying that server for ten minutes.
_SESSIONS: list[Any] = []


def new_session(url: str, *, one_clock: bool = False):
    """A session on the server at ``url``. With ``one_clock`` it reads tables that another
    server of this machine has just written: they share one clock, so it reads without the
    allowance for another application's clock (protocol I16) and sees their commits at once."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.remote(url).create()
    _give_up_sooner(session)
    _SESSIONS.append(session)
    if one_clock:
        session.conf.set("spark.txcommit.read.maxClockSkewMs", "0")
    return session


#: How long a test's session retries a server that does not answer: about 45 s (pyspark's
#: default is ten minutes, meant for a server restarting under a long job). A server that died
#: under a test fails that test within a minute instead of holding CI for ten.
_MAX_RETRIES, _MAX_BACKOFF_MS = 8, 10_000


def _give_up_sooner(session: Any) -> None:
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = session.client
    client.set_retry_policies(
        [
            DefaultPolicy(max_retries=_MAX_RETRIES, max_backoff=_MAX_BACKOFF_MS)
            if isinstance(p, DefaultPolicy)
            else p
            for p in client.get_retry_policies()
        ]
    )


def abandon_sessions() -> None:
    """Closes every session `new_session` opened, sending no request (`txcommit.abandon`)."""
    import txcommit

    while _SESSIONS:
        txcommit.abandon(_SESSIONS.pop())


def rows_per_b(url: str, table_url: str, *, one_clock: bool = False) -> dict[int, int]:
    """The number of rows of each value of column ``b`` of the table, read in a new session
    on the server at ``url`` (the view of a reader that did not write it)."""
    reader = new_session(url, one_clock=one_clock)
    try:
        df = reader.read.parquet(table_url)
        return {r["b"]: r["count"] for r in df.groupBy("b").count().collect()}
    finally:
        reader.stop()


def server_with_s3(
    workdir: Path, local_s3: LocalS3, confs: dict[str, str] | None = None, **kwargs: Any
) -> ServerProcess:
    """A `txcommit server --store s3` that reaches the shared local S3 endpoint."""
    return ServerProcess(
        workdir,
        confs={**FAULTS_ALLOWED, **s3a_confs(local_s3.endpoint), **(confs or {})},
        extra_args=server_args("s3"),
        **kwargs,
    )


def server_for(
    store: str,
    workdir: Path,
    emulator: Any,
    *,
    front: str | None = None,
    confs: dict[str, str] | None = None,
    **kwargs: Any,
) -> ServerProcess:
    """A `txcommit server --store <store>` that reaches ``emulator`` (the one its test kit's
    fixture gives), through the proxy at ``front`` (``host:port``) if given."""
    kit = store_test_kits()[store]
    return ServerProcess(
        workdir,
        confs={**FAULTS_ALLOWED, **kit.server_confs(emulator, front), **(confs or {})},
        extra_args=server_args(store),
        **kwargs,
    )


def server_with_hive(workdir: Path, local_s3: LocalS3) -> ServerProcess:
    """A plain Spark Connect server, WITHOUT txcommit (no plugin, extension or adapter jar), with
    Spark's own Hive support on an embedded Derby metastore in ``workdir``, reaching the shared
    local S3 endpoint through Hadoop's S3A: another engine, for the tables txcommit wrote."""
    listed = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "jars", "--store", "s3"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    s3a = ":".join(line for line in listed if line.endswith(".jar"))
    return ServerProcess(
        workdir,
        confs={
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.javax.jdo.option.ConnectionURL": (
                f"jdbc:derby:;databaseName={workdir / 'metastore_db'};create=true"
            ),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={workdir}",
            # Each split of Hive's SymlinkTextInputFormat names its manifest with a length of 0:
            # by default Spark drops such splits and reads no row.
            "spark.hadoopRDD.ignoreEmptySplits": "false",
            "spark.driver.extraClassPath": s3a,
            **s3a_confs(local_s3.endpoint),
        },
        extra_args=["--no-plugin"],
    )


def run_until_the_server_dies(crashing: ServerProcess, spark, write) -> None:
    """Runs `write` in a thread and returns once the server JVM is dead.

    After a server dies, pyspark's client retries for up to ~10 minutes; the test does not
    wait for that: the session is abandoned (closed without another request)."""
    import txcommit

    def attempt() -> None:
        with contextlib.suppress(Exception):
            write()

    threading.Thread(target=attempt, daemon=True).start()
    crashing.wait_dead(timeout=180)
    txcommit.abandon(spark)


def cluster_confs(**extra: str) -> dict[str, str]:
    """What a Connect server (the driver) needs to run two executors on the cluster: the plugin
    jars reach them through spark.jars, S3A through extraClassPath (`--store s3`), and Python
    UDFs run with the server venv's interpreter."""
    python = server_python()
    return {
        "spark.executor.memory": "1g",
        "spark.executor.cores": "1",
        "spark.cores.max": "2",
        "spark.driver.host": "127.0.0.1",
        "spark.pyspark.python": python,
        "spark.executorEnv.PYSPARK_PYTHON": python,
        # Serve only once both executors are registered, so jobs spread over both.
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        **({"spark.executor.extraJavaOptions": TEST_JVM_OPTS} if TEST_JVM_OPTS else {}),
        **extra,
    }


def server_on_cluster(
    workdir: Path, cluster: StandaloneCluster, local_s3: LocalS3, **confs: str
) -> ServerProcess:
    return server_with_s3(workdir, local_s3, cluster_confs(**confs), master=cluster.master_url)


def crashing_server(
    workdir: Path, store: str, request: Any, *, executors_matter: bool = True
) -> ServerProcess:
    """A server to crash that writes ``store``'s tables (and local and S3 ones, unless the
    store needs a server of its own): on the cluster for a store whose kit says so (executor
    JVMs writing through the store's connector when the driver dies), in local mode for the
    others and where ``executors_matter`` is false. It reaches the store's emulator directly,
    not through a proxy."""
    kit = store_test_kits()[store]
    if kit.own_server:
        emulator = request.getfixturevalue(kit.fixture) if kit.fixture else None
        return server_for(store, workdir, emulator)
    local_s3 = request.getfixturevalue("local_s3")
    if not (kit.on_cluster and executors_matter):
        return server_with_s3(workdir, local_s3)
    return server_on_cluster(workdir, request.getfixturevalue("cluster"), local_s3)
