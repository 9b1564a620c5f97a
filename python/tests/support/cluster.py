"""A real Spark standalone cluster on this machine: one master and two workers, each its own JVM.

The daemons run from the jars of the server-side pyspark package (its `bin/spark-class`, the
same launcher `spark-submit` uses), so the cluster runs exactly the Spark of the Connect
server. Executors are separate JVMs that the workers launch for an application; a test can
list them and SIGKILL one, like a machine dying under a running job.

Each worker binds its own loopback address (127.0.0.1, 127.0.0.2, ...): Spark never launches
a speculative copy of a task on a host where that task already ran an attempt, so two
workers that share one host name could never run a speculative duplicate.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from support.servers import free_port, server_python

EXECUTOR_CLASS = b"org.apache.spark.executor.CoarseGrainedExecutorBackend"
START_TIMEOUT_S = 120


def python_path() -> str:
    """The server venv's interpreter as an absolute path (not resolved: that would leave the venv),
    valid whatever the working directory of the process that runs it."""
    return os.path.abspath(server_python())


def pyspark_home(python: str | None = None) -> Path:
    """The full pyspark package of the server-side venv (`jars/`, `bin/spark-class`)."""
    code = "import os, pyspark; print(os.path.dirname(pyspark.__file__))"
    out = subprocess.run(
        [python or python_path(), "-c", code], check=True, capture_output=True, text=True
    )
    home = Path(out.stdout.strip())
    if not (home / "bin" / "spark-class").is_file() or not (home / "jars").is_dir():
        raise RuntimeError(f"{home} is not a full pyspark install (no bin/spark-class or jars/)")
    return home


def _cmdline(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and ")", so split after the last ")".
    return int(stat.rsplit(")", 1)[1].split()[1])


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie, killed but not reaped, counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@dataclass
class StandaloneCluster:
    """A standalone master and `workers` workers (`cores` cores, `worker_memory` each) here."""

    workdir: Path
    workers: int = 2
    cores: int = 1
    worker_memory: str = "1g"
    daemon_memory: str = "256m"
    master_port: int = field(default_factory=free_port)
    webui_port: int = field(default_factory=free_port)
    home: Path | None = None
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def webui_url(self) -> str:
        return f"http://127.0.0.1:{self.webui_port}"

    def worker_hosts(self) -> list[str]:
        return [f"127.0.0.{i + 1}" for i in range(self.workers)]

    # ------------------------------------------------------------------------- lifecycle

    def start(self) -> StandaloneCluster:
        self.home = self.home or pyspark_home()
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._spawn(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.master_port),
                "--webui-port",
                str(self.webui_port),
            )
            self._wait(lambda state: True, "the master to answer")
            for i, host in enumerate(self.worker_hosts()):
                work = self.workdir / f"worker-{i}"
                work.mkdir(exist_ok=True)
                self._spawn(
                    f"worker-{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    self.master_url,
                    "--host",
                    host,
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.worker_memory,
                    "--webui-port",
                    "0",
                    "--work-dir",
                    str(work),
                )
            self._wait(
                lambda state: state.get("aliveworkers") == self.workers,
                f"{self.workers} workers to register",
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, cls: str, *args: str) -> None:
        assert self.home is not None
        env = {
            **os.environ,
            # The worker builds each executor's command line from SPARK_HOME (jars/, bin/).
            "SPARK_HOME": str(self.home),
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_LOCAL_DIRS": str(self.workdir / "local"),
            "SPARK_CONNECT_MODE": "0",
        }
        # The executors' Python interpreter comes from the application (the driver's
        # spark.pyspark.python or PYSPARK_PYTHON), not from the workers' environment.
        env.pop("PYSPARK_PYTHON", None)
        env.pop("SPARK_CONF_DIR", None)
        with (self.workdir / f"{name}.log").open("wb") as log:
            proc = subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), cls, *args],
                cwd=self.workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.procs.append(proc)

    def _wait(self, ready, what: str, timeout: float = START_TIMEOUT_S) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"a cluster daemon exited before {what}:\n" + self.logs())
            try:
                state = self.state()
            except (OSError, ValueError):  # not listening yet, or a half-written answer
                state = None
            if state is not None and ready(state):
                return state
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {what}:\n" + self.logs())

    def stop(self) -> None:
        """SIGKILLs every process the cluster started: daemons, executors and their children."""
        executors = self.executor_pids()
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        for pid in executors:  # in the workers' process groups: already dead, unless re-grouped
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self.procs.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- state

    def state(self) -> dict:
        """The master's JSON status (workers, active applications)."""
        with urllib.request.urlopen(self.webui_url + "/json/", timeout=5) as response:
            return json.load(response)

    def worker_pids(self) -> list[int]:
        return [p.pid for p in self.procs[1:] if p.poll() is None]

    def executor_pids(self, app_id: str | None = None) -> list[int]:
        """Live executor JVMs launched by this cluster's workers (of `app_id`, if given)."""
        workers = set(self.worker_pids())
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or _ppid(int(entry)) not in workers:
                continue
            cmdline = _cmdline(int(entry))
            if EXECUTOR_CLASS not in cmdline:
                continue
            if app_id is not None and app_id.encode() not in cmdline:
                continue
            if alive(int(entry)):
                pids.append(int(entry))
        return sorted(pids)

    def executor_pid(self, app_id: str, executor_id: str) -> int:
        """The JVM of executor `executor_id` (Spark's id, as in the UI) of `app_id`."""
        marker = b"--executor-id"
        for pid in self.executor_pids(app_id):
            args = _cmdline(pid)
            if marker in args and args[args.index(marker) + 1] == executor_id.encode():
                return pid
        raise AssertionError(f"no executor {executor_id} of {app_id}: {self.executor_pids()}")

    def wait_executors(
        self, count: int, timeout: float = 90, app_id: str | None = None
    ) -> list[int]:
        """Waits until `count` executor JVMs are alive and returns their pids."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.executor_pids(app_id)
            if len(pids) >= count:
                return pids
            time.sleep(0.2)
        raise AssertionError(
            f"expected {count} executors, found {self.executor_pids(app_id)}:\n" + self.logs()
        )

    def kill_executor(self, pid: int) -> None:
        """SIGKILL one executor JVM: no shutdown hook, no task clean-up, like a lost machine."""
        if pid not in self.executor_pids():
            raise ValueError(f"{pid} is not an executor of this cluster")
        os.kill(pid, signal.SIGKILL)

    def logs(self, lines: int = 40) -> str:
        out = []
        for log in sorted(self.workdir.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)
