"""Shared fixtures: ONE Connect server (with the plugin) and ONE local S3 endpoint for every
test that can share them. The server serves local tables and S3 tables (both S3 adapters)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import txcommit  # first: makes pyspark-client importable on a machine without SPARK_HOME
from txcommit.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3, s3a_confs

from servers import ServerProcess, running
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


@pytest.fixture
def spark(server: ServerProcess):  # noqa: ANN201
    session = new_session(server.url)
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
