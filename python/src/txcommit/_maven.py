"""The third-party jars a store adapter needs on the server, and the one-machine HDFS its
emulator runs, fetched once from Maven. Which store needs which is its descriptor's
(``StorePlugin.connectors``, ``txcommit_store_<name>.plugin``); the coordinates per Spark line are
here.

Spark's pyspark wheel bundles Hadoop's client but not its cloud connectors. The gcs adapter
needs Google's Cloud Storage connector (shaded); the Azure adapter needs Hadoop's ABFS
connector (hadoop-azure) and HdrHistogram. The S3 adapters
need Hadoop's S3A connector (hadoop-aws) of exactly the Hadoop version pyspark bundles (it
follows the Spark line: ``SPARK_LINES``), and the AWS SDK bundle that hadoop-aws release was
built with (mixing versions breaks S3A in
ways that are hard to diagnose). They are downloaded into ``~/.cache/txcommit/jars`` (or
``$TXCOMMIT_CACHE/jars``), checked against Maven's SHA-1, and never into a project tree.
"""

from __future__ import annotations

import hashlib
import os
import re
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


@dataclass(frozen=True)
class SparkLine:
    """A Spark line and the Hadoop its pyspark ships: connectors must be of that Hadoop version,
    with the AWS SDK bundle (and analytics accelerator) that Hadoop release was built with."""

    line: str
    hadoop: str
    aws_sdk: str
    #: hadoop-aws 3.4.2+ reads S3 through Amazon's analytics accelerator (a compile dependency).
    analytics_accelerator: str = ""


#: The versions each line's hadoop-project POM pins (Spark 4.0 ships Hadoop 3.4.1, 4.1 ships
#: 3.4.2, 4.2 and 4.3 ship 3.5.0).
SPARK_LINES: dict[str, SparkLine] = {
    "4.0": SparkLine("4.0", "3.4.1", "2.24.6"),
    "4.1": SparkLine("4.1", "3.4.2", "2.29.52", "1.2.1"),
    "4.2": SparkLine("4.2", "3.5.0", "2.35.4", "1.3.1"),
    "4.3": SparkLine("4.3", "3.5.0", "2.35.4", "1.3.1"),
}
#: The line the checkout develops on (its .venv's pyspark), used when no pyspark is installed.
DEFAULT_LINE = "4.3"
HADOOP_VERSION = SPARK_LINES[DEFAULT_LINE].hadoop


def spark_line(version: str) -> str:
    """The line (``4.1``) of a Spark version (``4.1.1``); an error for a line txcommit lacks."""
    line = ".".join(version.split(".")[:2])
    if line not in SPARK_LINES:
        raise ServerStartError(
            f"Spark {version} is not supported: txcommit is built for the Spark lines "
            f"{', '.join(SPARK_LINES)} (install pyspark of one of them, e.g. "
            f"pip install 'pyspark[connect]>=4.0,<4.4')."
        )
    return line


def installed_spark_line() -> str:
    """The line of the installed full pyspark (read from its version.py, without importing it);
    the default line when none is installed."""
    from txcommit._spark_home import pyspark_dir

    home = pyspark_dir()
    if home is None or not (home / "version.py").is_file():
        return DEFAULT_LINE
    text = (home / "version.py").read_text()
    found = re.search(r"""__version__[^=]*=\s*["']([^"']+)["']""", text)
    return spark_line(found.group(1)) if found else DEFAULT_LINE


def s3_artifacts(line: str) -> tuple[Artifact, ...]:
    """Hadoop's S3A connector of the line's Hadoop and the AWS SDK it was built with."""
    spec = SPARK_LINES[line]
    arts = [
        Artifact("org.apache.hadoop", "hadoop-aws", spec.hadoop),
        Artifact("software.amazon.awssdk", "bundle", spec.aws_sdk),
    ]
    if spec.analytics_accelerator:
        arts.append(Artifact("software.amazon.s3.analyticsaccelerator", "analyticsaccelerator-s3",
                             spec.analytics_accelerator))  # fmt: skip
    return tuple(arts)


def azure_artifacts(line: str) -> tuple[Artifact, ...]:
    """Hadoop's ABFS connector of the line's Hadoop; HdrHistogram is the one dependency of
    hadoop-azure that pyspark's jars lack."""
    return (
        Artifact("org.apache.hadoop", "hadoop-azure", SPARK_LINES[line].hadoop),
        Artifact("org.hdrhistogram", "HdrHistogram", "2.1.12"),
    )


S3_ARTIFACTS = s3_artifacts(DEFAULT_LINE)
AZURE_ARTIFACTS = azure_artifacts(DEFAULT_LINE)
#: A one-machine HDFS (NameNode and DataNode) for trying and testing the `hdfs` adapter: one
#: shaded jar; it runs on the Hadoop client pyspark bundles. Servers never need it.
MINI_HDFS_ARTIFACTS = (Artifact("org.apache.hadoop", "hadoop-client-minicluster", HADOOP_VERSION),)
#: Google's Cloud Storage connector, shaded (its Google libraries relocated, so they cannot clash
#: with Spark's guava or jackson): one 40 MB jar, the same for every line. 4.0.4 is the newest
#: whose shaded jar Maven Central serves; Hadoop 3.5's own hadoop-gcp cannot be pointed at an
#: emulator.
GCS_ARTIFACTS = (Artifact("com.google.cloud.bigdataoss", "gcs-connector", "4.0.4", "shaded"),)


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


def fetched(
    artifacts: tuple[Artifact, ...],
    what: str,
    how: str,
    *,
    fetch: bool = True,
    log: bool = True,
    subdir: str = "",
) -> list[Path]:
    """Local paths of ``artifacts`` in the cache, downloading the missing ones if ``fetch``
    (else the error names ``what`` is missing and ``how`` to fetch it)."""
    repo = os.environ.get("TXCOMMIT_MAVEN_REPO", DEFAULT_MAVEN_REPO)
    paths = []
    for art in artifacts:
        dest = cache_dir() / subdir / art.filename
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
