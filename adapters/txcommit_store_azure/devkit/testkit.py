"""Azure Blob's test kit: tables on Azurite, read raw with obstore's fsspec file system; the
store contract on the Python store; a proxy in front of the emulator loses the answer to a
Put Blob."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcommit.adapters import open_store
from txcommit.devkit.testkit import StoreTestKit, behind_lossy_proxy
from txcommit_store_azure import EMULATOR_ACCOUNT, EMULATOR_KEY, abfs_confs
from txcommit_store_azure.devkit.emulator import Azurite

#: The container the tests' emulator creates.
CONTAINER = "conformance"


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    """Azurite (Azure Blob) with container CONTAINER."""
    with Azurite(CONTAINER) as emulator:
        yield emulator


def _table(store: str, name: str, workdir: Path, azure: Azurite) -> dict[str, Any]:
    from obstore.fsspec import FsspecStore

    prefix = f"tables/{name}"
    fs = FsspecStore(
        "azure",
        config={
            "account_name": EMULATOR_ACCOUNT,
            "account_key": EMULATOR_KEY,
            "endpoint": azure.endpoint,
        },
        client_options={"allow_http": True},
    )
    return {
        "url": f"{azure.abfs_url}{prefix}",
        "bucket": azure.container,
        "prefix": prefix,
        "hdfs": fs,
        "fs_root": f"{azure.container}/{prefix}",
        # Hadoop ABFS writes an empty blob per directory (a marker), not a file of the table.
        "folder_markers": True,
    }


def _creates(names: str) -> bytes:
    # Put Blob: the blob's path is the request line's.
    return rb"PUT /[^ \r\n?]*/" + names.encode() + rb"[ ?]"


def _contract(store: str, endpoint: str) -> Any:
    return open_store(
        f"az://{CONTAINER}/contract/{uuid.uuid4().hex}",
        {"az": store},
        endpoint=endpoint,
        emulator=True,
    )


KIT = StoreTestKit(
    fixture="azurite",
    table=_table,
    contract={"": lambda store, azure, _: _contract(store, azure.endpoint)},
    lossy_contract=lambda store, azure, _: behind_lossy_proxy(
        int(azure.port),
        _creates,
        lambda front: _contract(store, f"http://{front}/{EMULATOR_ACCOUNT}"),
    ),
    own_server=True,
    server_confs=lambda azure, front: abfs_confs(front or f"127.0.0.1:{azure.port}"),
    front_port=lambda azure: int(azure.port),
    creates=_creates,
)
