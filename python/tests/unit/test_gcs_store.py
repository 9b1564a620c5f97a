"""GCS's Python store: how its listing walks a tree (what the readers list a gs:// table with),
on fake-gcs-server."""

from __future__ import annotations

import uuid

import pytest

from txcommit.adapters import open_store
from txcommit.errors import AlreadyExistsError
from txcommit_store_gcs.devkit.emulator import FakeGcs
from txcommit_store_gcs.devkit.testkit import BUCKET


def test_gcs_walk_lists_every_depth_in_one_request_without_directory_placeholders(
    fake_gcs: FakeGcs,
) -> None:
    """Hadoop's GCS connector marks directories with empty objects named ``<dir>/``: not
    files."""
    import requests

    prefix = f"walk/{uuid.uuid4().hex}"
    store = open_store(f"gs://{BUCKET}/{prefix}", endpoint=fake_gcs.endpoint)
    for key in ("a", "d/b", "d/e/c"):
        store.write_replacing(key, b"x")
    placeholder = requests.post(
        f"{fake_gcs.endpoint}/upload/storage/v1/b/{BUCKET}/o",
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


def test_an_exclusive_create_above_8_mib_is_refused_when_the_record_exists(
    fake_gcs: FakeGcs,
) -> None:
    """A large commit record (10 MB at 100,000 files) is created exclusively too. Google's
    clients switch to a resumable upload above 8 MiB (google-cloud-storage) or 50 MiB (gcsfs),
    and fake-gcs-server ignores ``ifGenerationMatch=0`` there: a second create overwrites. The
    store sends one multipart upload whatever the size."""
    store = open_store(f"gs://{BUCKET}/large/{uuid.uuid4().hex}", endpoint=fake_gcs.endpoint)
    size = 9 * 1024 * 1024
    store.create_exclusive("_txcommit/commits/t1.json", b"a" * size)
    with pytest.raises(AlreadyExistsError, match="ifGenerationMatch=0"):
        store.create_exclusive("_txcommit/commits/t1.json", b"b" * size)
    assert store.read("_txcommit/commits/t1.json") == b"a" * size
