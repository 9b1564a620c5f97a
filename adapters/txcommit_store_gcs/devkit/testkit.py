"""GCS's test kit: tables on fake-gcs-server, read raw with gcsfs; the store contract on the
Python store; a proxy in front of the emulator loses the answer to an upload."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcommit.adapters import open_store
from txcommit.devkit.testkit import StoreTestKit, behind_lossy_proxy
from txcommit_store_gcs import gcs_emulator_confs
from txcommit_store_gcs.devkit.emulator import FakeGcs

#: The bucket the tests' emulator creates.
BUCKET = "conformance"


@pytest.fixture(scope="session")
def fake_gcs() -> Iterator[FakeGcs]:
    """fake-gcs-server with bucket BUCKET."""
    with FakeGcs(BUCKET) as emulator:
        yield emulator


def _table(store: str, name: str, workdir: Path, gcs: FakeGcs) -> dict[str, Any]:
    # The JSON API only (gcsfs' default class first asks a gRPC API emulators lack).
    from gcsfs.core import GCSFileSystem

    prefix = f"tables/{name}"
    fs = GCSFileSystem(
        endpoint_url=gcs.endpoint, token="anon", skip_instance_cache=True, use_listings_cache=False
    )
    return {
        "url": f"gs://{gcs.bucket}/{prefix}",
        "bucket": gcs.bucket,
        "prefix": prefix,
        "hdfs": fs,
        "fs_root": f"{gcs.bucket}/{prefix}",
    }


def _creates(names: str) -> bytes:
    # The one-request (multipart) upload: the object's name is in its JSON metadata.
    return (
        rb"POST /upload/storage/v1/b/[^\r\n]*\r\n(?:(?!(?:GET|HEAD|POST|PUT|DELETE|PATCH) /).)"
        rb'{0,20000}?"name": ?"[^"]*/' + names.encode() + rb'"'
    )


def _contract(store: str, endpoint: str) -> Any:
    return open_store(
        f"gs://{BUCKET}/contract/{uuid.uuid4().hex}", {"gs": store}, endpoint=endpoint
    )


KIT = StoreTestKit(
    fixture="fake_gcs",
    table=_table,
    contract={"": lambda store, gcs, _: _contract(store, gcs.endpoint)},
    lossy_contract=lambda store, gcs, _: behind_lossy_proxy(
        int(gcs.port), _creates, lambda front: _contract(store, f"http://{front}")
    ),
    own_server=True,
    server_confs=lambda gcs, front: gcs_emulator_confs(
        f"http://{front}" if front else gcs.endpoint
    ),
    front_port=lambda gcs: int(gcs.port),
    creates=_creates,
)
