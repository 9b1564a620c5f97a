"""S3's test kit (both adapters): tables in a bucket of moto, read raw with boto3; the store
contract on both Python stores; an endpoint that ignores If-None-Match. Lost answers come from
the emulator itself (``LocalS3(lose_response=...)``), not a proxy."""

from __future__ import annotations

import contextlib
import functools
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcommit.devkit.testkit import StoreTestKit
from txcommit.testing.store_contract import LossyStore
from txcommit_store_s3 import DEFAULT_REGION, DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3, fault_state, lose_responses
from txcommit_store_s3.store import S3MultipartStore, S3Store

#: The bucket of the shared honest endpoint, and of the endpoint that ignores If-None-Match.
TEST_BUCKET = "txcommit-tests"
LYING_BUCKET = "txcommit-liar"


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


@functools.cache
def client(endpoint: str) -> Any:
    """A boto3 client of the endpoint: the tests read S3 raw with it, around txcommit. It
    retries more than boto3's default: moto can answer 500 to a listing that races a
    deletion, and a test's observer must not fail where S3A (retrying) would not."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=DEFAULT_REGION,
        aws_access_key_id=DUMMY_KEY,
        aws_secret_access_key=DUMMY_SECRET,
        config=Config(retries={"max_attempts": 10, "mode": "standard"}),
    )


@pytest.fixture(scope="session")
def s3_client(local_s3: LocalS3) -> Any:
    return client(local_s3.endpoint)


def s3_options(s3: LocalS3 | str, **extra: Any) -> dict[str, Any]:
    """Options of an S3 store (``open_store``, ``S3Store``) on the local endpoint ``s3`` (or
    its URL)."""
    options: dict[str, Any] = {
        "endpoint": s3 if isinstance(s3, str) else s3.endpoint,
        "region": DEFAULT_REGION,
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
        "max_retries": 1,
    }
    options.update(extra)
    return options


def fresh_s3_url(scheme: str = "s3", bucket: str = TEST_BUCKET) -> str:
    """A new, empty prefix in ``bucket``."""
    return f"{scheme}://{bucket}/adapters-py/t-{uuid.uuid4().hex[:12]}"


def _table(store: str, name: str, workdir: Path, s3_client: Any) -> dict[str, Any]:
    prefix = f"tables/{store}/{name}"
    return {
        "url": f"s3a://{TEST_BUCKET}/{prefix}",
        "s3": s3_client,
        "bucket": TEST_BUCKET,
        "prefix": prefix,
    }


def _contract(store: str, endpoint: str) -> S3Store:
    if store == "s3-multipart":
        return S3MultipartStore(fresh_s3_url("s3a"), **s3_options(endpoint))
    return S3Store(fresh_s3_url(), **s3_options(endpoint))


@contextlib.contextmanager
def _lossy_contract(store: str, c: Any, _: Path) -> Iterator[LossyStore]:
    """The contract's store on the shared endpoint, which loses answers itself when armed."""
    endpoint = c.meta.endpoint_url
    made = _contract(store, endpoint)
    root = f"{made.location.bucket}/{made.location.prefix}/"

    def lose_create(key: str) -> None:
        lose_responses(endpoint, f"^PUT {re.escape(root + key)}$")

    def lost() -> list[str]:
        found: list[str] = fault_state(endpoint)["lost"]
        lose_responses(endpoint, "", count=0)
        return found

    try:
        yield LossyStore(made, lose_create, lost)
    finally:
        lose_responses(endpoint, "", count=0)


S3 = StoreTestKit(
    fixture="s3_client",
    table=_table,
    contract={"": lambda store, c, _: _contract(store, c.meta.endpoint_url)},
    lossy_contract=_lossy_contract,
    on_cluster=True,
)
S3_MULTIPART = StoreTestKit(
    fixture="s3_client",
    table=_table,
    contract={"": lambda store, c, _: _contract(store, c.meta.endpoint_url)},
    lossy_contract=_lossy_contract,
    # Tasks stage data as pending uploads: the state differs while the uploads complete
    # (either side of the commit point its bucket holds what the `s3` adapter's holds).
    kill_points=("job.duringPublishData",),
    on_cluster=True,
)
