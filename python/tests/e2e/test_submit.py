"""Deployments without Spark Connect: classic PySpark jobs sent with `spark-submit` to the
standalone cluster (two worker JVMs), nothing in the jobs' code naming txcommit.

- The plugin resolved as a Maven artifact of its Spark line (`sbt publishM2` of
  `io.txcommit:txcommit-spark-s3-4.3_2.13`, then `--packages` from a `file://` repository), as
  a cluster without a copied jar gets it: the first job's write commits through it.
- txcommit made the default by `spark-defaults.conf` (the documented snippet and the jar):
  a job whose task fails on every attempt, a read in the same application (Spark sees exactly
  the first job's rows), then a driver that dies at the commit point (the JVM-less reader
  still sees exactly the first job's rows).
"""

from __future__ import annotations

import os
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import txcommit
from txcommit._cache import cache_root
from txcommit._names import ALLOW_FAULT_INJECTION_CONF, HALT_AT_CONF

from support.cluster import StandaloneCluster, pyspark_home
from support.layout import committed, data_files, txn_of
from support.servers import TEST_JVM_OPTS, cluster_confs, server_python

REPO = Path(__file__).resolve().parents[3]
VERSION = "0.1.0"
CONNECT_ENV = (
    "SPARK_CONNECT_MODE_ENABLED",
    "SPARK_REMOTE",
    "SPARK_LOCAL_REMOTE",
    "SPARK_CONNECT_MODE",
)

# The documented snippet (docs/user-guide.md, "A classic spark-submit job").
DEFAULTS_SNIPPET = textwrap.dedent(
    """\
    spark.sql.sources.commitProtocolClass  io.txcommit.spark.TxCommitProtocol
    spark.plugins                          io.txcommit.spark.TxCommitPlugin
    spark.sql.extensions                   io.txcommit.spark.TxCommitExtensions
    """
)

# A plain PySpark batch job: nothing in it names txcommit.
JOB = textwrap.dedent(
    """\
    import sys
    from pyspark.sql import SparkSession, functions as F

    mode, table = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("nightly-" + mode).getOrCreate()
    df = spark.range(0, 1000, numPartitions=4).withColumn("k", F.col("id") % 4)
    if mode == "write":
        df.write.partitionBy("k").parquet(table)
    elif mode == "fail-then-halt":
        @F.udf("long")
        def checked(i):
            if i == 999:  # the last task fails on every attempt, after the others committed
                raise ValueError("bad record 999")
            return i
        try:
            df.withColumn("id", checked("id")).write.mode("append").partitionBy("k").parquet(table)
        except Exception as e:
            said = "bad record 999" if "bad record 999" in str(e) else repr(e)
            print("JOB FAILED: " + said, flush=True)
        print("ROWS=%d" % spark.read.parquet(table).count(), flush=True)
        # The driver dies at the commit point of this one (spark.txcommit.test.haltAt).
        df.write.mode("append").partitionBy("k").parquet(table)
    spark.stop()
    """
)


def submit(
    workdir: Path, args: list[str], *, conf_dir: Path, confs: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`spark-submit` of the job from the server venv's pyspark, its JVMs' home inside workdir."""
    job = workdir / "job.py"
    job.write_text(JOB)
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    # A Spark Connect session made earlier in this test process leaves its mode in the
    # environment (pyspark sets SPARK_CONNECT_MODE_ENABLED), and a classic job must not inherit it.
    inherited = {k: v for k, v in os.environ.items() if k not in CONNECT_ENV}
    env = {
        **inherited,
        # The server venv's full pyspark (the client's `import txcommit` points SPARK_HOME at
        # its own package, which has no launcher).
        "SPARK_HOME": str(pyspark_home()),
        "SPARK_CONF_DIR": str(conf_dir),
        "PYSPARK_PYTHON": server_python(),
        "PYSPARK_DRIVER_PYTHON": server_python(),
        # Java takes user.home from the password database, not $HOME: Ivy's caches and the
        # local Maven repository must come from the test's own directory.
        "SPARK_SUBMIT_OPTS": f"-Duser.home={home} {TEST_JVM_OPTS}".strip(),
        "HOME": str(home),
    }
    spark_submit = pyspark_home() / "bin" / "spark-submit"
    cmd = [str(spark_submit)]
    for key, value in confs.items():
        cmd += ["--conf", f"{key}={value}"]
    cmd += [*args[:-2], str(job), *args[-2:]]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=workdir
    )


def rows_seen(out: subprocess.CompletedProcess[str]) -> int:
    line = next((li for li in out.stdout.splitlines() if li.startswith("ROWS=")), None)
    assert line is not None, out.stdout[-2000:] + out.stderr[-4000:]
    return int(line.split("=", 1)[1])


def plugin_jar() -> str:
    code = "from txcommit.server import find_plugin_jar; print(find_plugin_jar())"
    out = subprocess.run([server_python(), "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_classic_jobs_on_the_cluster_get_the_plugin_from_packages_or_spark_defaults(
    workdir: Path, cluster: StandaloneCluster
) -> None:
    base = workdir / "submit-classic"
    base.mkdir()
    repo = publish_m2(base / "publisher-home")
    check_published_poms(repo)
    on_cluster = {"spark.master": cluster.master_url, **cluster_confs()}
    table = base / "events"

    # 1. The plugin from a Maven repository: the S3 adapter's artifact brings the plugin along
    # (its POM depends on it), the documented snippet turns it on.
    packaged = base / "conf-packages"
    packaged.mkdir()
    (packaged / "spark-defaults.conf").write_text(DEFAULTS_SNIPPET)
    packages = [
        "--packages",
        f"io.txcommit:txcommit-spark-s3-4.3_2.13:{VERSION}",
        "--repositories",
        repo.as_uri(),
    ]
    ivy = {"spark.jars.ivy": str(base / "ivy")}
    out = submit(
        base, [*packages, "write", str(table)], conf_dir=packaged, confs={**on_cluster, **ivy}
    )
    assert out.returncode == 0, out.stderr[-4000:]
    assert f"io.txcommit#txcommit-spark-4.3_2.13;{VERSION}" in out.stderr
    [first] = committed(table)
    assert {txn_of(p) for p in data_files(table)} == {first}

    # 2. spark-defaults.conf with the jar: a job whose task fails on every attempt (its three
    # other tasks' files stay on disk, as an executor that died before cleaning up would leave
    # them), then one whose driver dies at the commit point (every file written, no record).
    defaults = base / "conf"
    defaults.mkdir()
    (defaults / "spark-defaults.conf").write_text(
        DEFAULTS_SNIPPET + f"spark.jars                             {plugin_jar()}\n"
    )
    faults = {
        ALLOW_FAULT_INJECTION_CONF: "true",
        "spark.txcommit.test.keepAbortedFiles": "true",
        HALT_AT_CONF: "job.beforeRecord",
    }
    halted = submit(
        base, ["fail-then-halt", str(table)], conf_dir=defaults, confs={**on_cluster, **faults}
    )
    assert "JOB FAILED: bad record 999" in halted.stdout, halted.stdout[-2000:]
    # The classic job's own read, after its failed job: the failed job's files stay hidden.
    assert rows_seen(halted) == 1000
    assert halted.returncode != 0, "the driver halted at the commit point"

    on_disk = {txn_of(p) for p in data_files(table)}
    assert len(on_disk) == 3, f"the failed and the halted job left files to hide: {on_disk}"
    assert set(committed(table)) == {first}
    assert txcommit.dataset(str(table)).count_rows() == 1000


def check_published_poms(repo: Path) -> None:
    """What Spark, Hadoop, Jackson and Scala provide is never fetched (a second copy would
    clash), but the POMs name them with the line's real versions."""
    s3_pom = pom(repo, "txcommit-spark-s3-4.3_2.13")
    assert s3_pom["runtime"] == {f"io.txcommit:txcommit-spark-4.3_2.13:{VERSION}"}
    connectors = {"org.apache.hadoop:hadoop-aws:3.5.0", "software.amazon.awssdk:bundle:2.35.4"}
    assert connectors <= s3_pom["provided"]
    plugin_pom = pom(repo, "txcommit-spark-4.3_2.13")
    assert plugin_pom["runtime"] == set()
    assert {
        "org.apache.spark:spark-sql_2.13:4.3.0",
        "org.apache.hadoop:hadoop-client-api:3.5.0",
        "org.scala-lang:scala-library:2.13.18",
    } <= plugin_pom["provided"]
    jackson = "com.fasterxml.jackson.core:jackson-databind:"
    assert any(c.startswith(jackson) for c in plugin_pom["provided"])
    for kind in ("sources", "javadoc"):
        assert (
            repo
            / "io/txcommit/txcommit-spark-4.3_2.13"
            / VERSION
            / f"txcommit-spark-4.3_2.13-{VERSION}-{kind}.jar"
        ).is_file()


def publish_m2(home: Path) -> Path:
    """`sbt publishM2` of the plugin and the S3 adapter, with Java's home at `home`: returns the
    Maven repository it wrote (the other adapters' POMs are built the same way)."""
    home.mkdir()
    cmd = "bash .ci/sbt pluginJvm/publishM2 adapterS3/publishM2"
    out = subprocess.run(
        ["bash", "-c", cmd],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HOME": str(home), "TXCOMMIT_CACHE": str(cache_root())},
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    return home / ".m2" / "repository"


def pom(repo: Path, artifact: str) -> dict[str, set[str]]:
    """A published POM's dependencies: those a resolver fetches (compile, runtime) and provided."""
    path = repo / "io" / "txcommit" / artifact / VERSION / f"{artifact}-{VERSION}.pom"
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    root = ET.parse(path).getroot()
    assert root.findtext("m:groupId", namespaces=ns) == "io.txcommit"
    assert root.findtext("m:artifactId", namespaces=ns) == artifact
    deps: dict[str, set[str]] = {"runtime": set(), "provided": set(), "test": set()}
    for dep in root.iterfind("m:dependencies/m:dependency", ns):
        scope = dep.findtext("m:scope", default="compile", namespaces=ns)
        keys = ("groupId", "artifactId", "version")
        parts = (dep.findtext(f"m:{k}", namespaces=ns) for k in keys)
        coord = ":".join(p or "" for p in parts)
        deps["runtime" if scope in ("compile", "runtime") else scope].add(coord)
    return deps
