"""S3's bindings of txcommit's shared tests: the store contract
(``txcommit.testing.store_contract``) bound to both adapters' Python mirrors on moto (the
``local_s3`` fixture), and how the end-to-end tests lay out a table there (``TABLE_MAKERS``).
Collected by python/tests/unit/test_store_contract.py and ``support.tables.table_makers``,
beside the fixtures every store's tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from txcommit.testing.local_s3 import LocalS3
from txcommit.testing.store_contract import StoreContract
from txcommit_store_s3.store import S3MultipartStore, S3Store

from support.s3 import TEST_BUCKET, fresh_s3_url, s3_options
from support.tables import TableMaker, TableRef


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


def s3_table(store: str, name: str, workdir: Path, s3_client: Any) -> TableRef:
    prefix = f"tables/{store}/{name}"
    return TableRef(
        store, f"s3a://{TEST_BUCKET}/{prefix}", s3=s3_client, bucket=TEST_BUCKET, prefix=prefix
    )


TABLE_MAKERS = {
    "s3": TableMaker("s3_client", s3_table),
    "s3-multipart": TableMaker("s3_client", s3_table),
}
