"""The azure store's local emulator: Azurite's Blob service, ``azurite-blob`` from npm
(npm, installed by .ci/setup), found at ``$TXCOMMIT_AZURITE``,
on ``PATH``, or in that cache; its blobs under a temporary directory, telemetry off. The
container is created with azure-storage-blob (``pip install 'txcommit[local]'``) and
Azurite's well-known development account (``python -m txcommit.devkit.emulators azure``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from txcommit._cache import cache_root
from txcommit.devkit.emulators import EmulatorError, EmulatorProcess
from txcommit.stores import Emulator, LocalEmulator
from txcommit_store_azure import EMULATOR_ACCOUNT, EMULATOR_KEY, abfs_confs

AZURITE_VERSION = "3.37.0"


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


class Azurite(EmulatorProcess):
    """Azurite's Blob service, in memory, with ``container`` created (account
    ``devstoreaccount1``, Azurite's well-known development account)."""

    name = "azurite"

    def __init__(self, container: str = "txcommit", port: int | None = None) -> None:
        super().__init__(port)
        self.container = container
        self.base = Path(tempfile.mkdtemp(prefix="txcommit-azurite-"))

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/{EMULATOR_ACCOUNT}"

    def command(self) -> list[str]:
        return [
            str(azurite_binary()),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(self.port),
            # Blobs on disk, not in memory: in memory, an idle Azurite costs a tenth of a core.
            "--location",
            str(self.base),
            "--disableTelemetry",
            "--silent",
            "--skipApiVersionCheck",
            "--loose",
        ]

    def prepare(self) -> None:
        try:
            from azure.storage.blob import BlobServiceClient
        except ImportError:
            raise EmulatorError(
                "txcommit: creating an Azurite container needs azure-storage-blob; "
                "pip install 'txcommit[local]'"
            ) from None
        client = BlobServiceClient(
            self.endpoint,
            credential={"account_name": EMULATOR_ACCOUNT, "account_key": EMULATOR_KEY},
        )
        client.create_container(self.container)

    @property
    def abfs_url(self) -> str:
        """The container's root as Hadoop's ABFS names it (with :func:`abfs_confs`)."""
        return f"abfs://{self.container}@{EMULATOR_ACCOUNT}.dfs.core.windows.net/"

    def abfs_confs(self, *, prefix: str = "spark.hadoop.") -> dict[str, str]:
        """Hadoop settings that reach this emulator through ABFS; see :func:`abfs_confs`."""
        return abfs_confs(f"127.0.0.1:{self.port}", prefix=prefix)

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.base, ignore_errors=True)


def _start(container: str) -> tuple[Emulator, dict[str, str]]:
    azurite = Azurite(container).start()
    return azurite, azurite.abfs_confs()


LOCAL = LocalEmulator(
    start=_start,
    banner=lambda azurite, container: (
        f"local Azure Blob (Azurite) at {azurite.endpoint}, "
        f"container {azurite.abfs_url} (Azurite's public development key)"
    ),
    standalone=lambda container, port: Azurite(container, port),
)

__all__ = [
    "AZURITE_VERSION",
    "EMULATOR_ACCOUNT",
    "EMULATOR_KEY",
    "Azurite",
    "abfs_confs",
    "azurite_binary",
]
