"""The store contract (:mod:`txcommit.testing.store_contract`: the conformance kit's Level 1
checks) bound to every adapter's Python mirror on its real store or an emulator: local
directories, S3 on moto (both adapters), GCS on fake-gcs-server and Azure Blob on Azurite."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from txcommit.adapters import (
    LocalStore,
    Store,
    open_store,
)
from txcommit.testing.local_s3 import LocalS3
from txcommit.testing.store_contract import StoreContract
from txcommit_store_azure.emulator import Azurite
from txcommit_store_gcs.emulator import FakeGcs
from txcommit_store_s3.store import S3MultipartStore, S3Store

from support.s3 import fresh_s3_url, s3_options


class TestLocalStoreContract(StoreContract):
    adapter = "local"

    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(tmp_path / "table")


class TestLocalStoreWithObstoreCreateContract(StoreContract):
    """obstore's own ``put(mode="create")`` (link(2) without fsync) keeps the contract too."""

    adapter = "local"

    @pytest.fixture
    def store(self, tmp_path: Path) -> LocalStore:
        return LocalStore(f"file://{tmp_path}/table", durable=False)


class TestS3StoreContract(StoreContract):
    adapter = "s3"

    @pytest.fixture
    def store(self, local_s3: LocalS3) -> S3Store:
        return S3Store(fresh_s3_url(), **s3_options(local_s3))


class TestS3MultipartStoreContract(StoreContract):
    adapter = "s3-multipart"

    @pytest.fixture
    def store(self, local_s3: LocalS3) -> S3MultipartStore:
        return S3MultipartStore(fresh_s3_url("s3a"), **s3_options(local_s3))


class TestGcsStoreContract(StoreContract):
    adapter = "gcs"

    @pytest.fixture
    def store(self, fake_gcs: FakeGcs) -> Store:
        url = f"gs://conformance/contract/{uuid.uuid4().hex}"
        return open_store(url, endpoint=fake_gcs.endpoint)


def test_gcs_walk_lists_every_depth_in_one_request_without_directory_placeholders(
    fake_gcs: FakeGcs,
) -> None:
    """What the readers list a gs:// table with. Hadoop's GCS connector marks directories with
    empty objects named ``<dir>/``: not files."""
    import requests

    prefix = f"walk/{uuid.uuid4().hex}"
    store = open_store(f"gs://conformance/{prefix}", endpoint=fake_gcs.endpoint)
    for key in ("a", "d/b", "d/e/c"):
        store.write_replacing(key, b"x")
    placeholder = requests.post(
        f"{fake_gcs.endpoint}/upload/storage/v1/b/conformance/o",
        params={"uploadType": "media", "name": f"{prefix}/d/"},
        data=b"",
    )
    assert placeholder.status_code == 200
    before = store.requests.snapshot().get("LIST", 0)
    assert [f.key for f in store.walk()] == ["a", "d/b", "d/e/c"]
    assert store.requests.snapshot()["LIST"] - before == 1
    assert [f.key for f in store.walk("d")] == ["d/b", "d/e/c"]
    assert [f.key for f in store.list("d")] == ["d/b"]
    assert store.walk("no/such/dir") == []


class TestAzureStoreContract(StoreContract):
    adapter = "azure"

    @pytest.fixture
    def store(self, azurite: Azurite) -> Store:
        url = f"az://conformance/contract/{uuid.uuid4().hex}"
        return open_store(url, endpoint=azurite.endpoint, emulator=True)
