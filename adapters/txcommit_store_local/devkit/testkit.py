"""The local file system's bindings of txcommit's shared tests: the store contract
(``txcommit.testing.store_contract``) bound to its Python mirror, and how the end-to-end tests
lay out a table in a local directory (``TABLE_MAKERS``). Collected by
python/tests/unit/test_store_contract.py and ``support.tables.table_makers``, beside the
fixtures every store's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from txcommit.adapters import LocalStore
from txcommit.testing.store_contract import StoreContract

from support.tables import TableMaker, TableRef


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


def local_table(store: str, name: str, workdir: Path, _: None) -> TableRef:
    path = workdir / "tables" / name
    return TableRef(store, str(path), local=path)


TABLE_MAKERS = {"local": TableMaker(None, local_table)}
