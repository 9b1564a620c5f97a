"""Fixtures of the end-to-end tests: ONE Connect server (with the plugin) for every test that
can share it, serving local, HDFS and S3 tables (both S3 adapters); a server per store whose
test kit needs its own; a standalone cluster. Each starts on first use."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcommit.devkit.lossy_proxy import LossyProxy
from txcommit.devkit.testkit import store_test_kits
from txcommit_store_s3.devkit.emulator import LocalS3

from support.cluster import StandaloneCluster
from support.s3 import LYING_BUCKET
from support.servers import (
    ServerProcess,
    abandon_sessions,
    new_session,
    running,
    server_for,
    server_on_cluster,
    server_with_hive,
    server_with_s3,
    with_test_jvm_opts,
)
from support.tables import STORES, TableRef, make_table_of, next_table_name

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


class StoreServers:
    """The servers and proxies of the stores whose tables need a server of their own (their
    test kit's ``own_server``), started on first use and shared by the session: for each, the
    server that writes its tables, another application that reads them, and a proxy in front of
    its emulator that can lose answers (``txcommit.devkit.lossy_proxy``, idle unless a test
    arms it), through which every server of the store reaches it."""

    def __init__(self, workdir: Path, request: pytest.FixtureRequest) -> None:
        self.workdir, self.request = workdir, request
        self.started: dict[tuple[str, bool], ServerProcess] = {}
        self.fronts: dict[str, LossyProxy] = {}

    def emulator(self, store: str) -> Any:
        fixture = store_test_kits()[store].fixture
        return self.request.getfixturevalue(fixture) if fixture else None

    def front(self, store: str) -> LossyProxy:
        """The proxy in front of ``store``'s emulator (its kit names the port)."""
        kit = store_test_kits()[store]
        assert kit.front_port is not None, f"the {store} test kit names no port to front"
        if store not in self.fronts:
            proxy = LossyProxy("127.0.0.1", kit.front_port(self.emulator(store)))
            self.fronts[store] = proxy.__enter__()
        return self.fronts[store]

    def server(self, store: str, *, other: bool = False) -> ServerProcess:
        key = (store, other)
        if key not in self.started:
            kit = store_test_kits()[store]
            front = self.front(store).host_port if kit.front_port else None
            name = f"{'other-' if other else ''}{store}-server"
            server = server_for(store, self.workdir / name, self.emulator(store), front=front)
            self.started[key] = server.start()
        return self.started[key]

    def close(self) -> None:
        for server in self.started.values():
            server.stop()
        for proxy in self.fronts.values():
            proxy.__exit__(None, None, None)


@pytest.fixture(scope="session")
def store_servers(workdir: Path, request: pytest.FixtureRequest) -> Iterator[StoreServers]:
    servers = StoreServers(workdir, request)
    yield servers
    servers.close()


# --- another Spark application: a second server, as a dashboard or a downstream job reading the
# same table is. Its reads apply the allowance for another application's clock
# (`spark.txcommit.read.maxClockSkewMs`, default). Started on first use.


@pytest.fixture(scope="session")
def other_server(workdir: Path, local_s3: LocalS3) -> Iterator[ServerProcess]:
    """Another application for the tables of the shared server's stores."""
    yield from running(server_with_s3(workdir / "other-application", local_s3))


@pytest.fixture
def server_of(request: pytest.FixtureRequest, store_servers: StoreServers):
    """``server_of(store)``: the shared local-mode server that writes ``store``'s tables;
    ``server_of(store, other=True)``: another application that reads them."""

    def get(store: str, *, other: bool = False) -> ServerProcess:
        if store_test_kits()[store].own_server:
            return store_servers.server(store, other=other)
        return request.getfixturevalue("other_server" if other else "server")

    return get


@pytest.fixture
def front_of(store_servers: StoreServers):
    """``front_of(store)``: the proxy every server of ``store`` reaches its emulator through."""
    return store_servers.front


@pytest.fixture
def spark(server: ServerProcess):
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
def store_spark(request: pytest.FixtureRequest, any_table: TableRef, server_of):
    """A session for `any_table`: tables of a store whose kit says so are written by executors
    on the cluster, the others by their store's local-mode server."""
    if store_test_kits()[any_table.store].on_cluster:
        server = request.getfixturevalue("cluster_server")
    else:
        server = server_of(any_table.store)
    session = new_session(server.url)
    yield session
    session.stop()


@pytest.fixture
def table(workdir: Path) -> Path:
    """A fresh table directory path (not created)."""
    return workdir / "tables" / next_table_name()


@pytest.fixture(params=STORES)
def any_table(request: pytest.FixtureRequest, workdir: Path) -> TableRef:
    """A fresh table on each store (STORES, or the stores a test names), on the emulator its
    test kit names."""
    return make_table_of(request.param, workdir, request)
