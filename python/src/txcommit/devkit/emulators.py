"""What the stores' emulators share: a child process on a free loopback port
(:class:`EmulatorProcess`), and the command that runs a store's alone. Each store's own is in its
folder (``txcommit_store_<name>.devkit.emulator``), named by its descriptor.

    python -m txcommit.devkit.emulators gcs --bucket lake      # prints "ready at URL"
    python -m txcommit.devkit.emulators azure --container lake
    python -m txcommit.devkit.emulators hdfs

What each really does with each precondition is recorded in docs/adapters.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from txcommit.errors import TxCommitError

START_TIMEOUT = 60.0
_E = TypeVar("_E", bound="EmulatorProcess")


class EmulatorError(TxCommitError):
    """An emulator could not be found or started; the message says how to install it."""


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class EmulatorProcess:
    """A child process serving on ``127.0.0.1:<port>`` (its own process group)."""

    name = "emulator"

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as we do
            prefix=f"txcommit-{self.name}-", suffix=".log", delete=False
        )

    @property
    def endpoint(self) -> str:
        """The URL clients reach it at."""
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Creates the bucket or container once the emulator accepts connections."""

    #: Seconds to wait for the port to accept connections (a JVM needs more).
    start_timeout = START_TIMEOUT

    def start(self: _E) -> _E:
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while not _accepts(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise EmulatorError(
                    f"txcommit: {self.name} did not start on port {self.port}: {self.log_tail()}"
                )
            time.sleep(0.1)
        try:
            self.prepare()
        except BaseException:
            self.stop()
            raise
        return self

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return Path(self._log.name).read_text(errors="replace")[-2000:]
        return "(no log)"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:  # test doubles: nothing to keep, so no long grace
                self.process.wait(2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        with contextlib.suppress(OSError):
            self._log.close()
            os.unlink(self._log.name)

    def __enter__(self: _E) -> _E:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    from txcommit.stores import store_descriptors

    emulators = {d.name: d.local_emulator() for d in store_descriptors() if d.emulator}
    runs = {name: e.standalone for name, e in emulators.items() if e.standalone is not None}
    p = argparse.ArgumentParser(
        prog="python -m txcommit.devkit.emulators",
        description="Run a store's local emulator on loopback until interrupted: a GCS "
        "(fake-gcs-server) or Azure Blob (Azurite) one in memory with one bucket or container, "
        "a one-machine HDFS (MiniDFSCluster). Prints 'ready at <endpoint>' once it serves "
        "(for hdfs, after 'webhdfs at <NameNode's WebHDFS URL>').",
    )
    p.add_argument("kind", choices=sorted(runs), help="which store's emulator")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument(
        "--bucket",
        "--container",
        dest="bucket",
        default="txcommit",
        help="bucket (gcs) or container (azure) to create (default txcommit)",
    )
    ns = p.parse_args(argv)
    emulator: EmulatorProcess = runs[ns.kind](ns.bucket, ns.port or None)
    try:
        emulator.start()
    except TxCommitError as e:
        print(e, flush=True)
        return 1
    webhdfs = getattr(emulator, "webhdfs", None)
    if webhdfs:  # Python readers reach HDFS over WebHDFS
        print(f"{emulator.name} webhdfs at {webhdfs}", flush=True)
    print(f"{emulator.name} ready at {emulator.endpoint}", flush=True)
    stop = signal.Signals.SIGTERM

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(stop, _stop)
    try:
        while emulator.process is not None and emulator.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


__all__ = ["START_TIMEOUT", "EmulatorError", "EmulatorProcess", "free_port", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
