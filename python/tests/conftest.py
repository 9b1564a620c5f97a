"""Fixtures of every suite. Each store's emulator fixture is in its test kit (its folder's
``devkit/testkit.py``), a pytest plugin listed here from the registry; nothing here starts a
JVM (e2e/conftest.py has the servers)."""

from __future__ import annotations

from pathlib import Path

import pytest

import txcommit  # first: makes pyspark-client importable on a machine without SPARK_HOME
from txcommit.devkit.testkit import kit_modules

pytest_plugins = kit_modules()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("txcommit")


__all__ = ["txcommit"]
