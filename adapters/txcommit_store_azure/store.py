"""The ``azure`` adapter (primitive ``conditional-put``): Azure Blob Storage, the Python store.

An exclusive create is one Put Blob with ``If-None-Match: *``, which Azure refuses with 409
``BlobAlreadyExists`` when the blob exists: obstore's ``put(..., mode="create")`` (object_store
sends the header on a single Put Blob whatever the size, and maps the refusal to
``AlreadyExistsError``). A blob becomes visible whole when Put Blob (or Put Block List)
completes. Everything goes through obstore.

URLs: ``az://<container>/<prefix>`` (account from ``account`` or
``AZURE_STORAGE_ACCOUNT_NAME``), or Hadoop's ``abfs[s]://<container>@<account>.dfs.core.windows.net/<prefix>``.
Credentials: ``account_key`` (or ``AZURE_STORAGE_ACCOUNT_KEY``), else obstore's chain (SAS
token, managed identity, Azure CLI). ``endpoint`` reaches an emulator or a custom domain; for
Azurite give ``endpoint="http://127.0.0.1:10000/devstoreaccount1"`` and ``emulator=True``,
which uses Azurite's documented well-known development account and key.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import obstore
from obstore.store import AzureStore as _ObstoreAzure

from txcommit.adapters.base import CREATE_ID_KEY, ObstoreStore, Secret, StoreFile, declared
from txcommit.errors import StoreError
from txcommit.paths import display_url, join
from txcommit_store_azure import EMULATOR_ACCOUNT, EMULATOR_KEY

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem
    from obstore.store import AzureConfig

    from txcommit.adapters.declarations import AdapterDeclaration

_SCHEMES = ("az", "abfs", "abfss")
_DENIED = (obstore.exceptions.PermissionDeniedError, obstore.exceptions.UnauthenticatedError)


def parse_azure_url(url: str) -> tuple[str, str | None, str]:
    """(container, account or None, prefix) of an ``az://`` or ``abfs[s]://`` URL."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    shown = display_url(url)
    if scheme not in _SCHEMES:
        raise StoreError(f"txcommit: {shown} is not an az://, abfs:// or abfss:// URL", url=shown)
    if parts.password is not None or ":" in (parts.username or ""):
        raise StoreError(
            f"txcommit: {shown} carries credentials in the URL, which txcommit does not accept; "
            "pass account_key or set AZURE_STORAGE_ACCOUNT_KEY",
            url=shown,
        )
    prefix = parts.path.strip("/")
    if scheme == "az":
        if not parts.netloc or "@" in parts.netloc:
            raise StoreError(
                f"txcommit: {shown} names no container; use az://<container>/<path>", url=shown
            )
        return parts.netloc, None, prefix
    container, at, host = parts.netloc.partition("@")
    if not at or not container or not host:
        raise StoreError(
            f"txcommit: {shown} is not container@account.dfs.core.windows.net; use "
            f"{scheme}://<container>@<account>.dfs.core.windows.net/<path>",
            url=shown,
        )
    return container, host.split(".", 1)[0], prefix


class AzureBlobStore(ObstoreStore):
    """A container prefix on Azure Blob Storage (or Azurite), as a :class:`Store`."""

    refusal = "Azure refused Put Blob with If-None-Match: *; "
    # Azure's metadata names are C# identifiers (no hyphen): x-ms-meta-txcommit_create_id.
    create_id_key = CREATE_ID_KEY.replace("-", "_")

    def __init__(
        self,
        url: str,
        *,
        account: str | None = None,
        account_key: str | None = None,
        endpoint: str | None = None,
        emulator: bool = False,
        declaration: AdapterDeclaration | None = None,
    ) -> None:
        self.container, url_account, self.prefix = parse_azure_url(url)
        if urlsplit(url).scheme.lower() == "az":
            root = f"az://{self.container}" + (f"/{self.prefix}" if self.prefix else "")
        else:
            root = display_url(url).split("?", 1)[0].rstrip("/")
        super().__init__(root, declared(declaration, "azure"))
        if emulator:
            account = account or EMULATOR_ACCOUNT
            account_key = account_key or EMULATOR_KEY
        named = account or url_account or os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
        if not named:
            raise StoreError(
                f"txcommit: {self.root_url} names no storage account; pass account=... or set "
                "AZURE_STORAGE_ACCOUNT_NAME (or use abfss://<container>@<account>.dfs.core."
                "windows.net/<path>)",
                url=self.root_url,
            )
        self.account: str = named
        key = account_key or os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
        self._key = Secret(key) if key else None
        self.endpoint: str | None = endpoint.rstrip("/") if endpoint else None
        self.emulator = emulator
        self._allow_http = bool(self.endpoint and self.endpoint.startswith("http:"))
        self._obstore = _ObstoreAzure(
            self.container,
            prefix=self.prefix or None,
            config=self._config(),
            client_options={"allow_http": self._allow_http},
        )

    def account_key(self) -> str | None:
        """The shared key this store signs with, if it has one (for the conformance kit's
        server settings; never printed)."""
        return self._key.reveal() if self._key is not None else None

    def _config(self) -> AzureConfig:
        config: AzureConfig = {"account_name": self.account}
        if self._key is not None:
            config["account_key"] = self._key.reveal()
        if self.endpoint:
            config["endpoint"] = self.endpoint
        return config

    # -- errors --------------------------------------------------------------------------

    def _failure(self, action: str, key: str, cause: BaseException) -> StoreError:
        full = Secret.scrub(str(cause), self._key)
        where = f" (endpoint {self.endpoint})" if self.endpoint else ""
        if "ContainerNotFound" in full:
            advice = f"container '{self.container}' does not exist{where}; create it"
        elif isinstance(cause, _DENIED) or "AuthorizationFailure" in full or "403" in full:
            advice = (
                "access was denied; check the account key (AZURE_STORAGE_ACCOUNT_KEY) or the "
                "identity's role on the container"
            )
        else:
            advice = f"check that the endpoint{where} is reachable, then retry"
        denied = isinstance(cause, _DENIED) or "AuthorizationFailure" in full or "403" in full
        return self.failure(action, key, full, advice, blank=type(cause).__name__, denied=denied)

    def _root_missing(self, action: str, error: FileNotFoundError) -> bool:
        # Azure's 404 says ContainerNotFound for a missing container, BlobNotFound for a key.
        return "ContainerNotFound" in str(error)

    # -- the contract --------------------------------------------------------------------

    def _obstore_client(self, create: bool = False) -> _ObstoreAzure:
        return self._obstore

    def write_replacing(self, key: str, data: bytes) -> None:
        self.check_key(key)
        self.requests.add("PUT")
        try:
            obstore.put(self._obstore, key, data)
        except (OSError, obstore.exceptions.BaseError) as e:
            raise self._failure("write", key, e) from None

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        self.requests.add("LIST")
        try:
            result = self._obstore.list_with_delimiter(prefix or None)
        except (OSError, obstore.exceptions.BaseError) as e:
            raise self._obstore_failure("list", prefix, e) from None
        files = [StoreFile.of_meta(m) for m in result["objects"]]
        dirs = {p.rstrip("/") for p in result["common_prefixes"]}
        return sorted(_without_folder_markers(files, dirs), key=lambda f: f.key)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        # Azure lists at most 5000 blobs a page.
        found = self._walk_obstore(self._obstore, prefix, 5000, progress, self._obstore_failure)
        dirs = {f.key.rsplit("/", 1)[0] for f in found if "/" in f.key}
        dirs |= {d.rsplit("/", i)[0] for d in list(dirs) for i in range(1, d.count("/") + 1)}
        return sorted(_without_folder_markers(found, dirs), key=lambda f: f.key)

    def check_ready(self) -> None:
        """Proves the endpoint refuses a second ``If-None-Match: *`` create of one key."""
        self.probe_exclusive_create(
            f"Azure endpoint {self.endpoint or self.account} (container {self.container})",
            "If-None-Match: *",
        )

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        from obstore.fsspec import FsspecStore

        fs = FsspecStore(
            "azure",
            config=self._config(),
            client_options={"allow_http": self._allow_http},
        )
        return fs, join(self.container, self.prefix)

    def __repr__(self) -> str:
        return (
            f"AzureBlobStore({self.root_url!r}, adapter={self.declaration.name!r}, "
            f"account={self.account!r}, endpoint={self.endpoint!r})"
        )


def _without_folder_markers(
    files: builtins.list[StoreFile], dirs: set[str]
) -> builtins.list[StoreFile]:
    """``files`` without the empty blobs Hadoop's ABFS writes as directory markers on the Blob
    endpoint (metadata ``hdi_isfolder=true``, which a listing here does not return): an empty
    blob named like a directory that holds other blobs."""
    return [f for f in files if not (f.size == 0 and f.key in dirs)]


__all__ = ["AzureBlobStore", "parse_azure_url"]
