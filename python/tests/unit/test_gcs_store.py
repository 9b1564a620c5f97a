"""GCS's Python store: how its listing walks a tree (what the readers list a gs:// table with),
on fake-gcs-server."""

from __future__ import annotations

import uuid

from txcommit.adapters import open_store
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
