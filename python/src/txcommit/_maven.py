"""Jars from Maven Central, fetched once into ``~/.cache/txcommit/jars`` (or
``$TXCOMMIT_CACHE/jars``) and checked against Maven's SHA-1, never into a project tree. Which
jars a store needs is its descriptor's (``StoreDescriptor.connectors``).

Why not Spark's Ivy (``--packages``) or coursier: a connector goes on every JVM's own classpath
(``extraClassPath``), so it must be a local file before the server starts, and a JVM-less client
(``txcommit jars``) fetches it too. What this does not do, resolve a POM's dependencies, the
stores do not need: each names the few jars it needs, at the versions its Hadoop was built
with (docs/adapters.md says which). docs/architecture.md has the measured comparison.
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


#: The Hadoop each Spark line's pyspark ships (its hadoop-project POM): a store's connectors must
#: be of that version.
HADOOP_BY_LINE = {"4.0": "3.4.1", "4.1": "3.4.2", "4.2": "3.5.0", "4.3": "3.5.0"}
#: The line the checkout develops on (its .venv's pyspark), used when no pyspark is installed.
DEFAULT_LINE = "4.3"
HADOOP_VERSION = HADOOP_BY_LINE[DEFAULT_LINE]


def spark_line(version: str) -> str:
    """The line (``4.1``) of a Spark version (``4.1.1``); an error for a line txcommit lacks."""
    line = ".".join(version.split(".")[:2])
    if line not in HADOOP_BY_LINE:
        raise ServerStartError(
            f"Spark {version} is not supported: txcommit is built for the Spark lines "
            f"{', '.join(HADOOP_BY_LINE)} (install pyspark of one of them, e.g. "
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
