"""The third-party jars a store adapter needs on the server, fetched once from Maven.

Spark's pyspark wheel bundles Hadoop's client but not its cloud connectors. The gcs adapter
needs Google's Cloud Storage connector (shaded); the Azure adapter needs Hadoop's ABFS
connector (hadoop-azure) and HdrHistogram. The S3 adapters
need Hadoop's S3A connector (hadoop-aws) of exactly the Hadoop version pyspark bundles, and
the AWS SDK bundle that hadoop-aws release was built with (mixing versions breaks S3A in
ways that are hard to diagnose). They are downloaded into ``~/.cache/txcommit/jars`` (or
``$TXCOMMIT_CACHE/jars``), checked against Maven's SHA-1, and never into a project tree.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from txcommit._cache import cache_root
from txcommit.errors import ServerStartError

#: Maven Central's default layout; a mirror can be set with TXCOMMIT_MAVEN_REPO.
DEFAULT_MAVEN_REPO = "https://repo1.maven.org/maven2"


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str
    #: Maven classifier (``shaded``: the jar with its dependencies relocated inside).
    classifier: str = ""

    @property
    def filename(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.name}-{self.version}{suffix}.jar"

    def url(self, repo: str) -> str:
        return f"{repo.rstrip('/')}/{self.group.replace('.', '/')}/{self.name}/{self.version}/"


#: hadoop-aws 3.5.0 matches the hadoop-client 3.5.0 of pyspark 4.3; the SDK and analytics
#: accelerator versions are the ones hadoop-project 3.5.0 pins.
HADOOP_VERSION = "3.5.0"
S3_ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("org.apache.hadoop", "hadoop-aws", HADOOP_VERSION),
    Artifact("software.amazon.awssdk", "bundle", "2.35.4"),
    Artifact("software.amazon.s3.analyticsaccelerator", "analyticsaccelerator-s3", "1.3.1"),
)
#: Hadoop's ABFS connector of pyspark's Hadoop version; HdrHistogram is the one dependency of
#: hadoop-azure 3.5.0 that pyspark's jars lack. (WASB is gone from hadoop-azure 3.5.0.)
AZURE_ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("org.apache.hadoop", "hadoop-azure", HADOOP_VERSION),
    Artifact("org.hdrhistogram", "HdrHistogram", "2.1.12"),
)
#: A one-machine HDFS (NameNode and DataNode) for trying and testing the `hdfs` adapter: one
#: shaded jar; it runs on the Hadoop client pyspark bundles. Servers never need it.
MINI_HDFS_ARTIFACTS = (Artifact("org.apache.hadoop", "hadoop-client-minicluster", HADOOP_VERSION),)
#: Google's Cloud Storage connector, shaded (its Google libraries relocated, so they cannot clash
#: with Spark's guava or jackson): one 40 MB jar. 4.0.4 is the newest whose shaded jar Maven
#: Central serves; Hadoop 3.5's own hadoop-gcp cannot be pointed at an emulator.
GCS_ARTIFACTS = (Artifact("com.google.cloud.bigdataoss", "gcs-connector", "4.0.4", "shaded"),)
STORE_ARTIFACTS: dict[str, tuple[Artifact, ...]] = {
    "local": (),
    "s3": S3_ARTIFACTS,
    "s3-multipart": S3_ARTIFACTS,
    "hdfs": (),  # Spark's own Hadoop client speaks HDFS
    "gcs": GCS_ARTIFACTS,
    "azure": AZURE_ARTIFACTS,
}


def cache_dir() -> Path:
    return cache_root() / "jars"


def _download(url: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
        expected = r.read().decode().split()[0].strip().lower()
    digest = hashlib.sha1()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=600) as r:
            while chunk := r.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != expected:
            raise ServerStartError(
                f"{url}: SHA-1 {digest.hexdigest()} does not match Maven's {expected}; "
                "the download is corrupt or was altered. Try again, or set TXCOMMIT_MAVEN_REPO."
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def jars_for(store: str, *, fetch: bool = True, log: bool = True) -> list[Path]:
    """Local paths of the jars ``store`` needs, downloading the missing ones if ``fetch``."""
    if store not in STORE_ARTIFACTS:
        known = ", ".join(sorted(STORE_ARTIFACTS))
        raise ServerStartError(f"unknown store '{store}'; known stores: {known}")
    return fetched(STORE_ARTIFACTS[store], f"the {store} jars", f"txcommit jars --store {store}",
                   fetch=fetch, log=log)  # fmt: skip


def fetched(
    artifacts: tuple[Artifact, ...], what: str, how: str, *, fetch: bool = True, log: bool = True
) -> list[Path]:
    """Local paths of ``artifacts`` in the cache, downloading the missing ones if ``fetch``
    (else the error names ``what`` is missing and ``how`` to fetch it)."""
    repo = os.environ.get("TXCOMMIT_MAVEN_REPO", DEFAULT_MAVEN_REPO)
    paths = []
    for art in artifacts:
        dest = cache_dir() / art.filename
        if not dest.exists():
            if not fetch:
                raise ServerStartError(f"{dest} is missing; fetch {what} with: {how}")
            if log:
                print(f"txcommit: fetching {art.filename} into {dest.parent}", flush=True)
            try:
                _download(art.url(repo) + art.filename, dest)
            except OSError as e:
                raise ServerStartError(
                    f"could not download {art.filename} from {repo} ({e}). Check the network, "
                    "set TXCOMMIT_MAVEN_REPO to a Maven mirror, or put the jar into "
                    f"{dest.parent} yourself."
                ) from e
        paths.append(dest)
    return paths
