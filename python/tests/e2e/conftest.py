"""Fixtures of the end-to-end tests: ONE Connect server (with the plugin) for every test that
can share it, serving local tables and S3 tables (both S3 adapters), and a standalone cluster.
Each starts on first use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from txcommit.testing.local_s3 import LocalS3
from txcommit.testing.lossy_proxy import LossyProxy
from txcommit_store_azure.emulator import Azurite, abfs_confs
from txcommit_store_gcs.emulator import FakeGcs
from txcommit_store_gcs.plugin import gcs_emulator_confs
from txcommit_store_hdfs.emulator import MiniHdfs

from support.cluster import StandaloneCluster, pyspark_home
from support.s3 import LYING_BUCKET
from support.servers import (
    ServerProcess,
    abandon_sessions,
    new_session,
    running,
    server_on_cluster,
    server_with_azure,
    server_with_gcs,
    server_with_hive,
    server_with_s3,
    with_test_jvm_opts,
)
from support.tables import STORES, TableRef, make_table, next_table_name, table_makers

# Every Spark JVM started from here on (servers, the kit's and the demo's servers, cluster
# daemons) inherits the tests' JVM options; see TEST_JVM_OPTS.
os.environ.update(with_test_jvm_opts(dict(os.environ)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Servers are gone by now: close the clients without a request (see abandon_sessions).
    abandon_sessions()


@pytest.fixture(scope="session")
def server(workdir: Path, local_s3: LocalS3, lying_s3: LocalS3) -> Iterator[ServerProcess]:
    # S3A's per-bucket settings send LYING_BUCKET to the lying endpoint.
    liar = {f"spark.hadoop.fs.s3a.bucket.{LYING_BUCKET}.endpoint": lying_s3.endpoint}
    yield from running(server_with_s3(workdir / "shared-server", local_s3, liar))


@pytest.fixture(scope="session")
def gcs_front(fake_gcs: FakeGcs) -> Iterator[LossyProxy]:
    """The way every gs:// server of the tests reaches the shared fake-gcs-server: a proxy
    that can lose answers (txcommit.testing.lossy_proxy), idle unless a test arms it."""
    with LossyProxy("127.0.0.1", fake_gcs.port) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def azure_front(azurite: Azurite) -> Iterator[LossyProxy]:
    """The same for Azurite."""
    with LossyProxy("127.0.0.1", azurite.port) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def hdfs_front(mini_hdfs: MiniHdfs) -> Iterator[LossyProxy]:
    """The same for the NameNode's RPC port: a table at ``hdfs://<hdfs_front.host_port>/...``
    is the same HDFS table, reached through the proxy (data still flows to the DataNode)."""
    with LossyProxy("127.0.0.1", mini_hdfs.port) as proxy:
        yield proxy


def _gcs_server(workdir: Path, name: str, fake_gcs: FakeGcs, front: LossyProxy) -> ServerProcess:
    return server_with_gcs(
        workdir / name, fake_gcs, gcs_emulator_confs(f"http://{front.host_port}")
    )


def _azure_server(workdir: Path, name: str, azurite: Azurite, front: LossyProxy) -> ServerProcess:
    return server_with_azure(workdir / name, azurite, abfs_confs(front.host_port))


@pytest.fixture(scope="session")
def gcs_server(workdir: Path, fake_gcs: FakeGcs, gcs_front: LossyProxy) -> Iterator[ServerProcess]:
    """A server with Google's Cloud Storage connector (`--store gcs`) on the shared
    fake-gcs-server, for gs:// tables; started on first use."""
    yield from running(_gcs_server(workdir, "gcs-server", fake_gcs, gcs_front))


@pytest.fixture(scope="session")
def azure_server(
    workdir: Path, azurite: Azurite, azure_front: LossyProxy
) -> Iterator[ServerProcess]:
    """A server with Hadoop's ABFS connector (`--store azure`) on the shared Azurite, for
    abfs:// tables; started on first use."""
    yield from running(_azure_server(workdir, "azure-server", azurite, azure_front))


# --- another Spark application per store: a second server, as a dashboard or a downstream job
# reading the same table is. Its reads apply the allowance for another application's clock
# (`spark.txcommit.read.maxClockSkewMs`, default). Started on first use.


@pytest.fixture(scope="session")
def other_server(workdir: Path, local_s3: LocalS3) -> Iterator[ServerProcess]:
    """Another application for local, HDFS and S3 tables."""
    yield from running(server_with_s3(workdir / "other-application", local_s3))


@pytest.fixture(scope="session")
def other_gcs_server(
    workdir: Path, fake_gcs: FakeGcs, gcs_front: LossyProxy
) -> Iterator[ServerProcess]:
    yield from running(_gcs_server(workdir, "other-gcs-application", fake_gcs, gcs_front))


@pytest.fixture(scope="session")
def other_azure_server(
    workdir: Path, azurite: Azurite, azure_front: LossyProxy
) -> Iterator[ServerProcess]:
    yield from running(_azure_server(workdir, "other-azure-application", azurite, azure_front))


@pytest.fixture
def server_of(request: pytest.FixtureRequest):  # noqa: ANN201
    """``server_of(store)``: the shared local-mode server that writes ``store``'s tables;
    ``server_of(store, other=True)``: another application that reads them."""

    def get(store: str, *, other: bool = False) -> ServerProcess:
        name = {"gcs": "gcs_server", "azure": "azure_server"}.get(store, "server")
        return request.getfixturevalue(f"other_{name}" if other else name)

    return get


@pytest.fixture
def spark(server: ServerProcess):  # noqa: ANN201
    session = new_session(server.url)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def hive_server(workdir: Path, local_s3: LocalS3) -> Iterator[ServerProcess]:
    """Another engine: Spark's own Hive support (embedded Derby metastore) in a server without
    txcommit, reaching local and S3 tables (support.servers.server_with_hive)."""
    yield from running(server_with_hive(workdir / "hive-server", local_s3))


# --- a real multi-JVM cluster: a standalone master and two workers (support/cluster.py) ----------


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    # Two cores and 3 GiB per worker: two applications (2 one-core executors each, one per
    # worker) can run at once, e.g. the shared cluster server and a test's own.
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), cores=2, worker_memory="3g") as c:
        yield c


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
    name = {
        "s3": "cluster_server",
        "s3-multipart": "cluster_server",
        "gcs": "gcs_server",
        "azure": "azure_server",
    }.get(any_table.store, "server")
    session = new_session(request.getfixturevalue(name).url)
    yield session
    session.stop()


@pytest.fixture
def table(workdir: Path) -> Path:
    """A fresh table directory path (not created)."""
    return workdir / "tables" / next_table_name()


@pytest.fixture(params=STORES)
def any_table(request: pytest.FixtureRequest, workdir: Path) -> TableRef:
    """A fresh table on each store (STORES, or the stores a test names), on the emulator its
    table maker names."""
    store = request.param
    fixture = table_makers()[store].fixture
    return make_table(store, workdir, request.getfixturevalue(fixture) if fixture else None)


@pytest.fixture(scope="session")
def mini_hdfs() -> Iterator[MiniHdfs]:
    """A real NameNode and DataNode (MiniDFSCluster) in their own JVM, on the Hadoop client of
    the server side's pyspark; every server reaches it at hdfs://127.0.0.1:<port>."""
    with MiniHdfs(spark_jars=pyspark_home() / "jars") as hdfs:
        yield hdfs
