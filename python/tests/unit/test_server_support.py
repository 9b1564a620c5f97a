"""The end-to-end tests' server support kills only the processes it started.

Two test streams run side by side in CI, and ports are reused: a process of another test whose
command line carries the same port (a server started by the other stream on a port this test
also drew) must survive this test's crash and clean-up. No JVM here: the "other server" is a
plain process whose command line looks like a Spark Connect driver's.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.servers import DRIVER_MAIN, ServerProcess


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


@pytest.fixture
def lookalike() -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """A process that is not ours, with a Connect driver's command line on a port we also use:
    argv[0] 'java', the SparkSubmit main class and the gRPC port conf."""
    from support.servers import free_port

    port = free_port()
    args = [DRIVER_MAIN.decode(), "--conf", f"spark.connect.grpc.binding.port={port}"]
    # `exec -a java` names the process "java" (argv[0]) without starting a JVM.
    script = 'exec -a java "$0" -c "import time; time.sleep(120)" "$@"'
    proc = subprocess.Popen(["bash", "-c", script, sys.executable, *args], start_new_session=True)
    deadline = time.monotonic() + 10
    while not Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(b"java\0"):
        assert time.monotonic() < deadline and _alive(proc), "the look-alike did not start"
        time.sleep(0.05)
    yield port, proc
    proc.kill()
    proc.wait()


def test_stop_of_a_server_that_never_started_kills_no_other_process(
    tmp_path: Path, lookalike: tuple[int, subprocess.Popen[bytes]]
) -> None:
    port, other = lookalike
    ServerProcess(tmp_path, port=port).stop()
    time.sleep(0.2)
    assert _alive(other), "stop() killed a process it did not start"


def test_kill_jvm_reaches_only_the_recorded_jvm(
    tmp_path: Path, lookalike: tuple[int, subprocess.Popen[bytes]]
) -> None:
    port, other = lookalike
    server = ServerProcess(tmp_path, port=port)
    assert server.jvm_pids() == [], "a server that was never started has no JVM"
    server.kill_jvm()
    time.sleep(0.2)
    assert _alive(other), "kill_jvm() killed a process it did not start"


def test_a_session_on_a_server_that_is_gone_fails_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's session gives up on a server that does not answer after a few retries: a server
    that died under a test fails the test, instead of pyspark retrying for ten minutes."""
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    import support.servers as servers

    monkeypatch.setattr(servers, "_MAX_RETRIES", 2)
    monkeypatch.setattr(servers, "_MAX_BACKOFF_MS", 100)
    started = time.monotonic()
    with pytest.raises(SparkConnectGrpcException, match="UNAVAILABLE|Connection refused"):
        session = servers.new_session(f"sc://localhost:{servers.free_port()}")
        session.range(1).collect()
    assert time.monotonic() - started < 60, "pyspark's own retries (ten minutes) were used"
    servers.abandon_sessions()
