"""GCS's bindings of txcommit's shared tests: the store contract
(``txcommit.testing.store_contract``) bound to its Python mirror on fake-gcs-server (the
``fake_gcs`` fixture), how its listing walks a tree, and how the end-to-end tests lay out a
table there (``TABLE_MAKERS``). Collected by python/tests/unit/test_store_contract.py and
``support.tables.table_makers``, beside the fixtures every store's tests share."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from txcommit.adapters import Store, open_store
from txcommit.testing.store_contract import StoreContract
from txcommit_store_gcs.emulator import FakeGcs

from support.tables import TableMaker, TableRef


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


def gcs_table(store: str, name: str, workdir: Path, gcs: FakeGcs) -> TableRef:
    # The JSON API only (gcsfs' default class first asks a gRPC API emulators lack).
    from gcsfs.core import GCSFileSystem

    prefix = f"tables/{name}"
    fs = GCSFileSystem(
        endpoint_url=gcs.endpoint, token="anon", skip_instance_cache=True,
        use_listings_cache=False,
    )  # fmt: skip
    return TableRef(
        store, f"gs://{gcs.bucket}/{prefix}", bucket=gcs.bucket, prefix=prefix, hdfs=fs,
        fs_root=f"{gcs.bucket}/{prefix}",
    )  # fmt: skip


TABLE_MAKERS = {"gcs": TableMaker("fake_gcs", gcs_table)}
