"""Azure Blob's bindings of txcommit's shared tests: the store contract
(``txcommit.testing.store_contract``) bound to its Python mirror on Azurite (the ``azurite``
fixture), and how the end-to-end tests lay out a table there (``TABLE_MAKERS``). Collected by
python/tests/unit/test_store_contract.py and ``support.tables.table_makers``, beside the
fixtures every store's tests share."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from txcommit.adapters import Store, open_store
from txcommit.testing.store_contract import StoreContract
from txcommit_store_azure.emulator import Azurite

from support.tables import TableMaker, TableRef


class TestAzureStoreContract(StoreContract):
    adapter = "azure"

    @pytest.fixture
    def store(self, azurite: Azurite) -> Store:
        url = f"az://conformance/contract/{uuid.uuid4().hex}"
        return open_store(url, endpoint=azurite.endpoint, emulator=True)


def azure_table(store: str, name: str, workdir: Path, azure: Azurite) -> TableRef:
    # Read raw with obstore's fsspec file system (not through txcommit).
    from obstore.fsspec import FsspecStore

    from txcommit_store_azure.emulator import EMULATOR_ACCOUNT, EMULATOR_KEY

    prefix = f"tables/{name}"
    fs = FsspecStore(
        "azure",
        config={"account_name": EMULATOR_ACCOUNT, "account_key": EMULATOR_KEY,
                "endpoint": azure.endpoint},
        client_options={"allow_http": True},
    )  # fmt: skip
    return TableRef(
        store, f"{azure.abfs_url}{prefix}", bucket=azure.container, prefix=prefix, hdfs=fs,
        fs_root=f"{azure.container}/{prefix}", folder_markers=True,
    )  # fmt: skip


TABLE_MAKERS = {"azure": TableMaker("azurite", azure_table)}
