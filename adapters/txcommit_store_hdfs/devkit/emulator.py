"""The hdfs store's local emulator: Hadoop's MiniDFSCluster (a NameNode and one DataNode) from
``hadoop-client-minicluster`` 3.5.0, fetched once into ``$TXCOMMIT_CACHE/jars``, in its own JVM
on the Hadoop client pyspark bundles; blocks under a temporary directory
(``python -m txcommit.devkit.emulators hdfs``)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from txcommit._maven import HADOOP_VERSION, Artifact, fetched
from txcommit.devkit.emulators import EmulatorError, EmulatorProcess, free_port
from txcommit.stores import Emulator, LocalEmulator

#: A one-machine HDFS in one shaded jar; it runs on the Hadoop client pyspark bundles.
MINI_HDFS_ARTIFACTS = (Artifact("org.apache.hadoop", "hadoop-client-minicluster", HADOOP_VERSION),)


class MiniHdfs(EmulatorProcess):
    """A real HDFS on one machine: Hadoop's MiniDFSCluster (a NameNode and one DataNode) in its
    own JVM, on loopback. Spark reaches it at :attr:`endpoint` with no extra jar or conf (its
    own Hadoop client speaks HDFS); :attr:`webhdfs` is the NameNode's REST API."""

    name = "hdfs"
    start_timeout = 180.0

    def __init__(self, port: int | None = None, spark_jars: Path | None = None) -> None:
        """``spark_jars``: a full pyspark's ``jars/`` (default: the installed pyspark's)."""
        super().__init__(port)
        self.spark_jars = spark_jars
        self.http_port = free_port()
        self.base = Path(tempfile.mkdtemp(prefix="txcommit-hdfs-"))
        self.details = self.base / "details.json"

    @property
    def endpoint(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    @property
    def webhdfs(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/webhdfs/v1"

    def command(self) -> list[str]:
        cluster = fetched(
            MINI_HDFS_ARTIFACTS, "the HDFS mini cluster", "python -m txcommit.devkit.emulators hdfs"
        )
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
            str(java),
            "-Xmx768m",
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-XX:ReservedCodeCacheSize=240m",
            f"-Duser.home={self.base}",
            "-cp",
            os.pathsep.join(str(j) for j in classpath),
            "org.apache.hadoop.test.MiniDFSClusterManager",
            "-format",
            "-datanodes",
            "1",
            "-nnport",
            str(self.port),
            "-httpport",
            str(self.http_port),
            "-writeDetails",
            str(self.details),
            *[arg for k, v in settings.items() for arg in ("-D", f"{k}={v}")],
        ]

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
    wanted = (
        "hadoop-client-api-",
        "hadoop-client-runtime-",
        "slf4j-api-",
        "jcl-over-slf4j-",
        "log4j-slf4j2-impl-",
        "log4j-api-",
        "log4j-core-",
        "log4j-1.2-api-",
    )
    return sorted(j for j in spark_jars.glob("*.jar") if j.name.startswith(wanted))


__all__ = ["MiniHdfs"]


def _start(bucket: str) -> tuple[Emulator, dict[str, str]]:
    """A one-machine HDFS; the server reaches it by its hdfs:// URL, no conf needed (``bucket``
    does not apply: the file system is the cluster's)."""
    return MiniHdfs().start(), {}


LOCAL = LocalEmulator(
    start=_start,
    banner=lambda hdfs, bucket: (
        f"local HDFS (MiniDFSCluster) at {hdfs.endpoint}/ (WebHDFS: {hdfs.webhdfs})"
    ),
    standalone=lambda bucket, port: MiniHdfs(port),
    artifacts=MINI_HDFS_ARTIFACTS,
)
