"""A client pointed at the wrong port never hangs and never prints gRPC's internals: what
accepts connections but is no Spark Connect server (an HTTP server, a socket that accepts and
never answers) is refused within the connect timeout, by `txcommit.connect` and by every
command that takes `--remote`, with the same exit code as no server at all (1)."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

import txcommit
from txcommit.client import connect


@pytest.fixture(params=["http", "accepts-only"])
def wrong_port(request: pytest.FixtureRequest) -> Iterator[int]:
    """A port where something that is not Spark Connect accepts connections."""
    if request.param == "http":
        httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), http.server.BaseHTTPRequestHandler
        )
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield int(httpd.server_address[1])
        httpd.shutdown()
        httpd.server_close()
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # the kernel accepts; nobody ever reads or answers
        yield int(listener.getsockname()[1])
        listener.close()


def test_connect_refuses_a_port_that_is_no_spark_connect_server(wrong_port: int) -> None:
    started = time.monotonic()
    with pytest.raises(txcommit.ServerUnreachableError) as caught:
        connect(f"sc://127.0.0.1:{wrong_port}", timeout=3)
    assert time.monotonic() - started < 30, "refused within the timeout, not after retries"
    message = str(caught.value)
    assert f"127.0.0.1:{wrong_port} accepts connections but is no Spark Connect server" in message
    assert "_MultiThreadedRendezvous" not in message and "<" not in message


@pytest.mark.parametrize("command", ["vacuum", "manifest"])
def test_remote_commands_exit_1_naming_the_port(wrong_port: int, command: str) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcommit.cli",
            command,
            "/tmp/some-table",
            "--remote",
            f"sc://127.0.0.1:{wrong_port}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    assert "is no Spark Connect server" in run.stderr
    assert "_MultiThreadedRendezvous" not in run.stderr and "Traceback" not in run.stderr


def test_nothing_listening_exits_1_too() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcommit.cli",
            "vacuum",
            "/tmp/t",
            "--remote",
            f"sc://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "no Spark Connect server answers" in run.stderr, run.stderr
