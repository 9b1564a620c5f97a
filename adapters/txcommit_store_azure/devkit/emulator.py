"""The azure store's local emulator: Azurite's Blob service, ``azurite-blob`` from npm
(``npm install --prefix $TXCOMMIT_CACHE/npm azurite@3.37.0``), found at ``$TXCOMMIT_AZURITE``,
on ``PATH``, or in that cache; its blobs under a temporary directory, telemetry off. The
container is created with azure-storage-blob (``pip install 'txcommit[azure-local]'``) and
Azurite's well-known development account (``python -m txcommit.testing.emulators azure``)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from txcommit._cache import cache_root
from txcommit.testing.emulators import EmulatorError, EmulatorProcess

AZURITE_VERSION = "3.37.0"
#: Azurite's well-known development account (public, documented by Microsoft; not a secret),
#: which the Python mirror uses for an emulator endpoint.
EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


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
            str(azurite_binary()), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
            # Blobs on disk, not in memory: in memory, an idle Azurite costs a tenth of a core.
            "--location", str(self.base), "--disableTelemetry",
            "--silent", "--skipApiVersionCheck", "--loose",
        ]  # fmt: skip

    def prepare(self) -> None:
        try:
            from azure.storage.blob import BlobServiceClient
        except ImportError:
            raise EmulatorError(
                "txcommit: creating an Azurite container needs azure-storage-blob; "
                "pip install 'txcommit[azure-local]'"
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


def abfs_confs(host_port: str, *, prefix: str = "spark.hadoop.") -> dict[str, str]:
    """Hadoop ABFS settings that reach Azurite at ``host_port`` (Azurite's Blob endpoint over
    plain HTTP, its well-known development account and key): the settings docs/adapters.md
    lists as checked with hadoop-azure 3.5.0."""
    confs = {
        "fs.azure.abfs.endpoint": host_port,
        "fs.azure.always.use.https": "false",
        # ABFS's default HTTP client fails on plain http.
        "fs.azure.networking.library": "JDK_HTTP_URL_CONNECTION",
        "fs.azure.account.auth.type": "SharedKey",
        f"fs.azure.account.key.{EMULATOR_ACCOUNT}.dfs.core.windows.net": EMULATOR_KEY,
        "fs.azure.account.hns.enabled": "false",
        # ABFS 3.5 sends client metrics to the account at JVM exit and retries for minutes
        # when the emulator is already gone.
        "fs.azure.metrics.collection.enabled": "false",
    }
    return {prefix + k: v for k, v in confs.items()}


__all__ = [
    "AZURITE_VERSION",
    "EMULATOR_ACCOUNT",
    "EMULATOR_KEY",
    "Azurite",
    "abfs_confs",
    "azurite_binary",
]
