"""The Python stores (txcommit's stores in Python), for the readers, the CLI and the
conformance kit: the same declarations (``<name>.json`` in each store's folder) and file rules
as the JVM plugin, over obstore (and fsspec for readers).

    from txcommit.adapters import open_store
    store = open_store("s3://bucket/table", endpoint="http://127.0.0.1:9000")
    store.create_exclusive("_txcommit/commits/<txn>.json", record_bytes)

boto3 is imported only by the ``s3-multipart`` adapter, when it first needs a multipart upload
completed later (obstore cannot defer completion).
"""

from __future__ import annotations

from txcommit.adapters.base import (
    MultipartStore,
    MultipartUpload,
    RequestCounter,
    Store,
    StoreFile,
    UploadedPart,
)
from txcommit.adapters.declarations import (
    AdapterDeclaration,
    declaration_named,
    known_adapters,
    load_declaration,
    parse_declaration,
)
from txcommit.adapters.local import LocalStore
from txcommit.adapters.registry import (
    adapter_for,
    open_store,
    overrides_from_conf,
    scheme_of,
)

__all__ = [
    "AdapterDeclaration",
    "LocalStore",
    "MultipartStore",
    "MultipartUpload",
    "RequestCounter",
    "Store",
    "StoreFile",
    "UploadedPart",
    "adapter_for",
    "declaration_named",
    "known_adapters",
    "load_declaration",
    "open_store",
    "overrides_from_conf",
    "parse_declaration",
    "scheme_of",
]
