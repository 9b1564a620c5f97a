"""Shared fixtures: ONE Connect server (with the plugin) for every test that can share it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import txcommit  # first: makes pyspark-client importable on a machine without SPARK_HOME

from servers import ServerProcess, running

FAULTS_ALLOWED = {"spark.txcommit.test.allowFaultInjection": "true"}
_counter = itertools.count()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("txcommit")


@pytest.fixture(scope="session")
def server(workdir: Path) -> Iterator[ServerProcess]:
    yield from running(ServerProcess(workdir / "shared-server", confs=dict(FAULTS_ALLOWED)))


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


__all__ = ["txcommit"]
