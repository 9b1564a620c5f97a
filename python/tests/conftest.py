"""Shared fixtures: ONE Connect server (with the plugin) and ONE local S3 endpoint for every
test that can share them. The server serves local tables and S3 tables (both S3 adapters)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import txcommit  # first: makes pyspark-client importable on a machine without SPARK_HOME
from txcommit.testing.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3, s3a_confs

from cluster import StandaloneCluster
from servers import ServerProcess, running, server_python
from tables import STORES, TableRef

FAULTS_ALLOWED = {"spark.txcommit.test.allowFaultInjection": "true"}
TEST_BUCKET = "txcommit-tests"
LYING_BUCKET = "txcommit-liar"
_counter = itertools.count()


@pytest.fixture(scope="session")
def local_s3() -> Iterator[LocalS3]:
    """moto's S3 server on loopback (in this process), with the test bucket."""
    s3 = LocalS3().start()
    s3.create_bucket(TEST_BUCKET)
    yield s3
    s3.stop()


@pytest.fixture(scope="session")
def s3_client(local_s3: LocalS3):  # noqa: ANN201 - a boto3 client
    import boto3

    return boto3.client(
        "s3", endpoint_url=local_s3.endpoint, region_name="us-east-1",
        aws_access_key_id=DUMMY_KEY, aws_secret_access_key=DUMMY_SECRET,
    )  # fmt: skip


def server_with_s3(
    workdir: Path, local_s3: LocalS3, confs: dict[str, str] | None = None, **kwargs: object
) -> ServerProcess:
    """A `txcommit server --store s3` that reaches the shared local S3 endpoint."""
    return ServerProcess(
        workdir,
        confs={**FAULTS_ALLOWED, **s3a_confs(local_s3.endpoint), **(confs or {})},
        extra_args=["--store", "s3", "--no-local-s3"],
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("txcommit")


@pytest.fixture(scope="session")
def lying_s3() -> Iterator[LocalS3]:
    """An S3 endpoint that accepts If-None-Match and ignores it (bucket LYING_BUCKET)."""
    s3 = LocalS3(ignore_if_none_match=True).start()
    s3.create_bucket(LYING_BUCKET)
    yield s3
    s3.stop()


@pytest.fixture(scope="session")
def server(workdir: Path, local_s3: LocalS3, lying_s3: LocalS3) -> Iterator[ServerProcess]:
    # S3A's per-bucket settings send LYING_BUCKET to the lying endpoint.
    liar = {f"spark.hadoop.fs.s3a.bucket.{LYING_BUCKET}.endpoint": lying_s3.endpoint}
    yield from running(server_with_s3(workdir / "shared-server", local_s3, liar))


def new_session(url: str):  # noqa: ANN201 - pyspark's connect SparkSession
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(url).create()


def rows_per_b(url: str, table_url: str) -> dict[int, int]:
    """The number of rows of each value of column ``b`` of the table, read in a new session
    on the server at ``url`` (the view of a reader that did not write it)."""
    reader = new_session(url)
    try:
        df = reader.read.parquet(table_url)
        return {r["b"]: r["count"] for r in df.groupBy("b").count().collect()}
    finally:
        reader.stop()


@pytest.fixture
def spark(server: ServerProcess):  # noqa: ANN201
    session = new_session(server.url)
    yield session
    session.stop()


# --- a real multi-JVM cluster: a standalone master and two workers (see cluster.py) ------------


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    # Two cores and 3 GiB per worker: two applications (2 one-core executors each, one per
    # worker) can run at once, e.g. the shared cluster server and a test's own.
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), cores=2, worker_memory="3g") as c:
        yield c


def cluster_confs(**extra: str) -> dict[str, str]:
    """What a Connect server (the driver) needs to run two executors on the cluster: the plugin
    jars reach them through spark.jars, S3A through extraClassPath (`--store s3`), and Python
    UDFs run with the server venv's interpreter."""
    python = server_python()
    return {
        "spark.executor.memory": "1g",
        "spark.executor.cores": "1",
        "spark.cores.max": "2",
        "spark.driver.host": "127.0.0.1",
        "spark.pyspark.python": python,
        "spark.executorEnv.PYSPARK_PYTHON": python,
        # Serve only once both executors are registered, so jobs spread over both.
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        **extra,
    }


def server_on_cluster(
    workdir: Path, cluster: StandaloneCluster, local_s3: LocalS3, **confs: str
) -> ServerProcess:
    return server_with_s3(workdir, local_s3, cluster_confs(**confs), master=cluster.master_url)


@pytest.fixture(scope="session")
def cluster_server(
    workdir: Path, cluster: StandaloneCluster, local_s3: LocalS3
) -> Iterator[ServerProcess]:
    """One Connect server whose executors run on the cluster, shared by the S3 fault tests."""
    yield from running(server_on_cluster(workdir / "cluster-server", cluster, local_s3))


@pytest.fixture
def store_spark(request: pytest.FixtureRequest, any_table: TableRef):  # noqa: ANN201
    """A session for `any_table`: S3 tables are written by executors on the cluster, local
    ones by the shared local-mode server."""
    name = "server" if any_table.store == "local" else "cluster_server"
    session = new_session(request.getfixturevalue(name).url)
    yield session
    session.stop()


@pytest.fixture
def table(workdir: Path) -> Path:
    """A fresh table directory path (not created)."""
    return workdir / "tables" / f"t{next(_counter)}"


def make_table(store: str, workdir: Path, s3_client) -> TableRef:  # noqa: ANN001
    name = f"t{next(_counter)}"
    if store == "local":
        path = workdir / "tables" / name
        return TableRef(store, str(path), local=path)
    prefix = f"tables/{store}/{name}"
    return TableRef(
        store, f"s3a://{TEST_BUCKET}/{prefix}", s3=s3_client, bucket=TEST_BUCKET, prefix=prefix
    )


@pytest.fixture(params=STORES)
def any_table(request: pytest.FixtureRequest, workdir: Path) -> TableRef:
    """A fresh table on each store: the local file system, and S3 through both adapters."""
    store = request.param
    client = request.getfixturevalue("s3_client") if store != "local" else None
    return make_table(store, workdir, client)


__all__ = ["txcommit"]
