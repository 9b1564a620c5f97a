"""The JVM pieces of the benchmark: the bench-only floor protocol and spark-hadoop-cloud.

* ``DirectWriteCommitProtocol`` (``java/DirectWriteCommitProtocol.java``, next to this file)
  is compiled with ``javac`` against the server's own Spark jars into a jar in the cache; it
  never ships in the plugin.
* The S3A magic committer needs Spark's ``spark-hadoop-cloud`` module
  (``PathOutputCommitProtocol``, ``BindingParquetOutputCommitter``), which pyspark does not
  bundle. Maven Central has no 4.3.0 release of it (the newest is 4.1.2); its two classes are
  thin bindings to Hadoop's committer API and work against Spark 4.3.0, which the benchmark
  checks by running them. Fetched once, SHA-1 checked, like the S3A jars (txcommit._maven).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from txcommit._maven import Artifact, cache_dir, fetched
from txcommit.errors import ServerStartError

FLOOR_SOURCE = "DirectWriteCommitProtocol.java"
#: The newest spark-hadoop-cloud on Maven Central for Scala 2.13 (there is no 4.3.0).
HADOOP_CLOUD = Artifact("org.apache.spark", "spark-hadoop-cloud_2.13", "4.1.2")
PATH_OUTPUT_PROTOCOL = "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
BINDING_PARQUET_COMMITTER = "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"


def hadoop_cloud_jar() -> Path:
    """spark-hadoop-cloud from Maven Central (cached under ~/.cache/txcommit/jars)."""
    (jar,) = fetched((HADOOP_CLOUD,), "spark-hadoop-cloud", "txcommit bench")
    return jar


def floor_jar(spark_jars: Path) -> Path:
    """The compiled floor protocol (rebuilt when its source changes)."""
    source = resources.files("txcommit.bench") / "java" / FLOOR_SOURCE
    text = source.read_bytes()
    digest = hashlib.sha1(text).hexdigest()[:12]
    dest = cache_dir().parent / "bench" / f"txcommit-bench-floor-{digest}.jar"
    if dest.exists():
        return dest
    javac, jar = shutil.which("javac"), shutil.which("jar")
    if not (javac and jar):
        raise ServerStartError(
            "the benchmark's no-commit floor is compiled with javac and jar (a JDK 17); "
            "install a JDK or leave the floor out with --protocols"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="txcommit-bench-") as tmp:
        src = Path(tmp) / FLOOR_SOURCE
        src.write_bytes(text)
        classes = Path(tmp) / "classes"
        subprocess.run(
            [
                javac,
                "--release",
                "17",
                "-nowarn",
                "-d",
                str(classes),
                "-cp",
                f"{spark_jars}/*",
                str(src),
            ],
            check=True,
            capture_output=True,
        )
        part = dest.with_suffix(".jar.part")
        subprocess.run([jar, "cf", str(part), "-C", str(classes), "."], check=True)
        os.replace(part, dest)
    return dest
