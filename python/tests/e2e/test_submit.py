"""Deployments without Spark Connect: a classic PySpark job sent with `spark-submit`.

- To the standalone cluster (two worker JVMs), with txcommit made the default by
  `spark-defaults.conf` and nothing in the job's code: a job that succeeds, a job whose task
  fails on every attempt, a driver that dies at the commit point; then Spark and the JVM-less
  reader see exactly the successful job.
- With the plugin resolved as a Maven artifact of its Spark line
  (`io.txcommit:txcommit-spark-4.3_2.13`, published by `sbt publishM2`, then `--packages` from
  a `file://` repository), as a cluster without a copied jar gets it.
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
    elif mode == "fail":
        @F.udf("long")
        def checked(i):
            if i == 999:  # the last task fails on every attempt, after the others committed
                raise ValueError("bad record 999")
            return i
        df.withColumn("id", checked("id")).write.mode("append").partitionBy("k").parquet(table)
    elif mode == "append":
        df.write.mode("append").partitionBy("k").parquet(table)
    elif mode == "count":
        print("ROWS=%d" % spark.read.parquet(table).count(), flush=True)
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
    assert out.returncode == 0, out.stderr[-4000:]
    line = next(li for li in out.stdout.splitlines() if li.startswith("ROWS="))
    return int(line.split("=", 1)[1])


def plugin_jar() -> str:
    code = "from txcommit.server import find_plugin_jar; print(find_plugin_jar())"
    out = subprocess.run([server_python(), "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_a_classic_pyspark_job_on_the_cluster_commits_transactionally_by_default(
    workdir: Path, cluster: StandaloneCluster
) -> None:
    base = workdir / "submit-classic"
    conf_dir = base / "conf"
    conf_dir.mkdir(parents=True)
    (conf_dir / "spark-defaults.conf").write_text(
        DEFAULTS_SNIPPET + f"spark.jars                             {plugin_jar()}\n"
    )
    table = base / "events"
    on_cluster = {"spark.master": cluster.master_url, **cluster_confs()}

    assert submit(base, ["write", str(table)], conf_dir=conf_dir, confs=on_cluster).returncode == 0
    [first] = committed(table)
    assert {txn_of(p) for p in data_files(table)} == {first}

    # A job whose task fails on every attempt: its three other tasks' files stay on disk (as
    # an executor that died before cleaning up would leave them) and are hidden.
    keep = {ALLOW_FAULT_INJECTION_CONF: "true", "spark.txcommit.test.keepAbortedFiles": "true"}
    failed = submit(base, ["fail", str(table)], conf_dir=conf_dir, confs={**on_cluster, **keep})
    assert failed.returncode != 0 and "bad record 999" in failed.stderr
    # A driver that dies at the commit point: every file written, no commit record.
    halt = {ALLOW_FAULT_INJECTION_CONF: "true", HALT_AT_CONF: "job.beforeRecord"}
    halted = submit(base, ["append", str(table)], conf_dir=conf_dir, confs={**on_cluster, **halt})
    assert halted.returncode != 0

    on_disk = {txn_of(p) for p in data_files(table)}
    assert len(on_disk) == 3, f"the failed and the halted job left files to hide: {on_disk}"
    assert set(committed(table)) == {first}
    count = submit(base, ["count", str(table)], conf_dir=conf_dir, confs=on_cluster)
    assert rows_seen(count) == 1000
    assert txcommit.dataset(str(table)).count_rows() == 1000


def test_the_plugin_resolved_with_packages_from_a_maven_repository(workdir: Path) -> None:
    base = workdir / "submit-packages"
    base.mkdir()
    repo = publish_m2(base / "publisher-home")
    s3_pom = pom(repo, "txcommit-spark-s3-4.3_2.13")
    # What Spark, Hadoop, Jackson and Scala provide is never fetched (a second copy would
    # clash), but the POM names them with the line's real versions.
    assert s3_pom["runtime"] == {f"io.txcommit:txcommit-spark-4.3_2.13:{VERSION}"}
    connectors = {"org.apache.hadoop:hadoop-aws:3.5.0", "software.amazon.awssdk:bundle:2.35.4"}
    assert connectors <= s3_pom["provided"]
    plugin_pom = pom(repo, "txcommit-spark-4.3_2.13")
    assert plugin_pom["runtime"] == set()
    assert {"org.apache.spark:spark-sql_2.13:4.3.0", "org.apache.hadoop:hadoop-client-api:3.5.0",
            "org.scala-lang:scala-library:2.13.18"} <= plugin_pom["provided"]  # fmt: skip
    jackson = "com.fasterxml.jackson.core:jackson-databind:"
    assert any(c.startswith(jackson) for c in plugin_pom["provided"])
    for kind in ("sources", "javadoc"):
        assert (repo / "io/txcommit/txcommit-spark-4.3_2.13" / VERSION /
                f"txcommit-spark-4.3_2.13-{VERSION}-{kind}.jar").is_file()  # fmt: skip

    conf_dir = base / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(DEFAULTS_SNIPPET)
    table = base / "events"
    # The S3 adapter's artifact brings the plugin along: its POM depends on it.
    packages = [
        "--packages", f"io.txcommit:txcommit-spark-s3-4.3_2.13:{VERSION}",
        "--repositories", repo.as_uri(),
    ]  # fmt: skip
    confs = {"spark.master": "local[2]", "spark.jars.ivy": str(base / "ivy")}
    out = submit(base, [*packages, "write", str(table)], conf_dir=conf_dir, confs=confs)
    assert out.returncode == 0, out.stderr[-4000:]
    assert f"io.txcommit#txcommit-spark-4.3_2.13;{VERSION}" in out.stderr
    [txn] = committed(table)
    assert {txn_of(p) for p in data_files(table)} == {txn}
    # Reading through the plugin with spark-submit is the test above's; here the JVM-less
    # reader checks what the resolved plugin committed.
    assert txcommit.dataset(str(table)).count_rows() == 1000


def publish_m2(home: Path) -> Path:
    """`sbt publishM2` of the plugin and the S3 adapter, with Java's home at `home`: returns the
    Maven repository it wrote (the other adapters' POMs are built the same way)."""
    home.mkdir()
    cmd = "bash .ci/sbt pluginJvm/publishM2 adapterS3/publishM2"
    out = subprocess.run(
        ["bash", "-c", cmd], cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "HOME": str(home), "TXCOMMIT_CACHE": str(cache_root())},
    )  # fmt: skip
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
