"""`txcommit server` is ready only when ITS process listens on the port.

A port that was free when the server was told to use it can be taken before the JVM binds it:
on a standalone cluster, an executor the driver just launched draws its block manager's port
from the same ephemeral range. A connection that succeeds then reaches that other process, and
a server that called this "ready" would hand out a URL where no Spark Connect server listens.
No JVM here: the "server" is a plain child process, which listens or not.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from txcommit.errors import ServerStartError
from txcommit.server import RunningServer
from txcommit.server.ports import listens_on


def _child(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port this test process listens on: for the child, another process holds it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _server(proc: subprocess.Popen[bytes], port: int, log: Path) -> RunningServer:
    log.write_text("java.net.BindException: Failed to bind to address localhost/127.0.0.1\n")
    return RunningServer(proc, "localhost", port, log)


def test_a_port_another_process_listens_on_is_not_the_server_being_ready(
    tmp_path: Path, held_port: int
) -> None:
    proc = _child("import time; time.sleep(60)")  # alive, never listens: a JVM still starting
    try:
        with pytest.raises(ServerStartError, match=f"another process listens on port {held_port}"):
            _server(proc, held_port, tmp_path / "server.log").wait_ready(timeout=3)
    finally:
        proc.kill()
        proc.wait()


def test_a_server_that_failed_to_bind_is_reported_with_its_log(
    tmp_path: Path, held_port: int
) -> None:
    proc = _child("import time; time.sleep(1); raise SystemExit(1)")  # the JVM's bind failed
    with pytest.raises(ServerStartError, match="exited with code 1") as failure:
        _server(proc, held_port, tmp_path / "server.log").wait_ready(timeout=30)
    assert f"port {held_port} was taken by another process" in str(failure.value)
    assert "BindException" in str(failure.value), "the error shows the server's own log"


def test_a_server_listening_on_its_port_is_ready(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    code = (
        "import socket, time\n"
        f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(60)\n"
    )
    proc = _child(code)
    try:
        started = time.monotonic()
        _server(proc, port, tmp_path / "server.log").wait_ready(timeout=30)
        assert time.monotonic() - started < 30
        assert listens_on(proc.pid, port) is True
    finally:
        proc.kill()
        proc.wait()


def test_listens_on_tells_the_listener_from_other_processes(held_port: int) -> None:
    import os

    proc = _child("import time; time.sleep(60)")
    try:
        assert listens_on(os.getpid(), held_port) is True
        assert listens_on(proc.pid, held_port) is False
    finally:
        proc.kill()
        proc.wait()
