"""Fixtures of every suite: local S3 endpoints and the GCS and Azure emulators, started on first
use and shared by the session. Nothing here starts a JVM (e2e/conftest.py has the servers)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import txcommit  # first: makes pyspark-client importable on a machine without SPARK_HOME
from txcommit.testing.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3

from support.s3 import LYING_BUCKET, TEST_BUCKET

if TYPE_CHECKING:
    from txcommit_store_azure.emulator import Azurite
    from txcommit_store_gcs.emulator import FakeGcs

# Each store's package comes from its folder (adapters/<name>/python/txcommit_store_<name>), as
# the checkout has it, ahead of an install's (an install of an older checkout maps none): the
# suites import them by name, and this loop finds a new store's folder with no edit.
for _folder in sorted(Path(__file__).resolve().parents[2].glob("adapters/*/python"), reverse=True):
    sys.path.insert(0, str(_folder))

#: The bucket (GCS) and container (Azure) the emulators create.
EMULATOR_BUCKET = "conformance"


@pytest.fixture(scope="session")
def local_s3() -> Iterator[LocalS3]:
    """moto's S3 server on loopback (in this process), with the test bucket."""
    s3 = LocalS3().start()
    s3.create_bucket(TEST_BUCKET)
    yield s3
    s3.stop()


@pytest.fixture(scope="session")
def lying_s3() -> Iterator[LocalS3]:
    """An S3 endpoint that accepts If-None-Match and ignores it (bucket LYING_BUCKET)."""
    s3 = LocalS3(ignore_if_none_match=True).start()
    s3.create_bucket(LYING_BUCKET)
    yield s3
    s3.stop()


@pytest.fixture(scope="session")
def s3_client(local_s3: LocalS3):  # noqa: ANN201 - a boto3 client
    import boto3

    return boto3.client(
        "s3", endpoint_url=local_s3.endpoint, region_name="us-east-1",
        aws_access_key_id=DUMMY_KEY, aws_secret_access_key=DUMMY_SECRET,
    )  # fmt: skip


@pytest.fixture(scope="session")
def fake_gcs() -> Iterator[FakeGcs]:
    """fake-gcs-server with bucket EMULATOR_BUCKET."""
    from txcommit_store_gcs.emulator import FakeGcs

    with FakeGcs(EMULATOR_BUCKET) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    """Azurite (Azure Blob) with container EMULATOR_BUCKET."""
    from txcommit_store_azure.emulator import Azurite

    with Azurite(EMULATOR_BUCKET) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("txcommit")


__all__ = ["txcommit"]
