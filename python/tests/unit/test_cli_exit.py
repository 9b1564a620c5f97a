"""The ``txcommit`` command's exit code is its verdict, whatever is still running at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# A command whose main() returns `code` and leaves a thread behind that would hold the
# interpreter's teardown for a minute (as a pyspark request retried against a dead server).
_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    import txcommit.cli as cli

    def main(argv=None):
        threading.Thread(target=time.sleep, args=(60,)).start()
        print("verdict printed")
        return int(sys.argv[2])

    cli.main = main
    sys.argv = ["txcommit", sys.argv[1], sys.argv[2]]
    cli.console()
    """
)


def _run(command: str, code: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, command, str(code)],
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("command", ["conformance", "demo", "bench", "bench-streaming"])
@pytest.mark.parametrize("code", [0, 1])
def test_a_verdict_command_exits_with_its_code_without_waiting_for_teardown(
    command: str, code: int
) -> None:
    done = _run(command, code)
    assert done.returncode == code, done.stderr
    assert done.stdout == "verdict printed\n"  # flushed before leaving


def test_other_commands_still_exit_through_the_interpreter() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(
            [sys.executable, "-c", _SCRIPT, "version", "0"], capture_output=True, timeout=3
        )
