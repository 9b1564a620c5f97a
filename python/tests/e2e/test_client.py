"""The client as a platform team runs it: the same words for a server without the plugin
everywhere (enable, the SQL wrappers, the command line), and sessions that `txcommit.connect`
opened from several threads closed at the interpreter's exit, also when their server is gone
(pyspark's own exit hooks retried a dead server for minutes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import txcommit
from txcommit.maintenance import history, vacuum

from support.servers import ServerProcess, new_session, running

# Two threads each open a session with txcommit.connect and use it; nobody stops them. The
# first exit hook registered runs last: it reports whether they were stopped by then.
THREADED = textwrap.dedent(
    """\
    import atexit, json, sys, threading
    SESSIONS = []
    atexit.register(lambda: print("STOPPED " + json.dumps([s.is_stopped for s in SESSIONS]),
                                  flush=True))
    import txcommit

    def work():
        spark = txcommit.connect(sys.argv[1])
        SESSIONS.append(spark)
        assert spark.range(10).count() == 10

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("READY", len(SESSIONS), flush=True)
    sys.stdin.readline()  # the test may stop the server first
    """
)


def _threaded_client(url: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", THREADED, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("READY 2"), line + (proc.stderr.read() if proc.stderr else "")
    return proc


def _exit(proc: subprocess.Popen[str]) -> tuple[float, str, str]:
    """Lets the client exit; how long its exit took, and what it printed."""
    started = time.monotonic()
    out, err = proc.communicate("\n", timeout=150)
    return time.monotonic() - started, out, err


def test_sessions_of_two_threads_are_released_at_exit(server: ServerProcess) -> None:
    took, out, err = _exit(_threaded_client(server.url))
    assert "STOPPED [true, true]" in out, out + err
    assert took < 60, f"the exit took {took:.0f} s"


def test_a_server_without_the_plugin_is_named_alike_everywhere_and_its_death_holds_no_exit(
    workdir: Path,
) -> None:
    srv = ServerProcess(workdir / "no-plugin-server", extra_args=["--no-plugin"])
    for _ in running(srv):
        spark = new_session(srv.url)
        table = str(workdir / "tables" / "no-plugin")
        for call, args in ((txcommit.enable, ()), (history, (table,)), (vacuum, (table,))):
            with pytest.raises(txcommit.TxCommitNotInstalledError) as caught:
                call(spark, *args)
            assert "--conf spark.plugins=io.txcommit.spark.TxCommitPlugin" in str(caught.value)
            assert "PARSE_SYNTAX_ERROR" not in str(caught.value)
        spark.stop()
        for command in ("vacuum", "manifest"):
            run = subprocess.run(
                [sys.executable, "-m", "txcommit.cli", command, table, "--remote", srv.url],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert run.returncode == 1, run.stderr
            assert f"txcommit is not installed on the Spark Connect server at {srv.url}" in (
                run.stderr
            ), run.stderr
            assert "spark.sql.extensions=io.txcommit.spark.TxCommitExtensions" in run.stderr
            assert "PARSE_SYNTAX_ERROR" not in run.stderr and "Traceback" not in run.stderr
        # Sessions of two threads, their server stopped before the client exits.
        client = _threaded_client(srv.url)
        srv.stop()
        took, out, err = _exit(client)
    assert client.returncode == 0, err[-3000:]
    assert "STOPPED [true, true]" in out, out + err
    assert took < 60, f"the exit took {took:.0f} s (pyspark's own hooks retry a dead server)"


def test_a_path_that_holds_no_table_exits_2_in_every_command(
    server: ServerProcess, workdir: Path
) -> None:
    """The same mistake exits the same way: `ls`, `log` and `doctor` read the store
    themselves, `vacuum` and `manifest` hear it from the server (NotATableError)."""
    missing = workdir / "tables" / "never-written"
    for argv in (
        ["ls", str(missing)],
        ["log", str(missing)],
        ["doctor", str(missing)],
        ["vacuum", str(missing), "--remote", server.url],
        ["manifest", str(missing), "--remote", server.url],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "txcommit.cli", *argv],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 2, (argv, run.stderr)
        assert str(missing) in run.stderr, (argv, run.stderr)
        assert "Traceback" not in run.stderr
    spark = new_session(server.url)
    with pytest.raises(txcommit.NotATableError) as caught:
        history(spark, str(missing))
    assert (caught.value.getCondition(), caught.value.getSqlState()) == (
        "TXCOMMIT_NOT_A_TABLE",
        "42K03",
    )
    spark.stop()
