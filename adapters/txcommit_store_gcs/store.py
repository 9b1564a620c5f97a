"""The ``gcs`` adapter (primitive ``conditional-put``): Google Cloud Storage, the Python store.

GCS objects are immutable and a write makes the new generation visible whole, at once. An
exclusive create is an upload with the precondition ``ifGenerationMatch=0`` ("only if no live
generation exists"), which GCS refuses with 412 Precondition Failed when the object exists.

Every request goes to the JSON API (``/storage/v1``, ``/upload/storage/v1``) over
``requests``; on Google Cloud the session is google-auth's ``AuthorizedSession`` with the
default credentials (``gcloud auth application-default login``, a service account,
``GOOGLE_APPLICATION_CREDENTIALS``). Against an emulator (``endpoint`` or
``STORAGE_EMULATOR_HOST``) requests are unauthenticated.

Every create and write is ONE ``uploadType=multipart`` upload (metadata and bytes in one
request), whatever its size, because that is the path on which the precondition was verified
everywhere we test: fake-gcs-server (our CI emulator, v1.x in the PyPI wrapper 0.1.1) honours
``ifGenerationMatch=0`` on multipart uploads only; on ``uploadType=media`` and on resumable
uploads it ignores it (a second create succeeds and overwrites), and it answers the XML API's
``PUT`` with 400. That is why obstore's GCS client (XML API) is not used here.
"""

from __future__ import annotations

import builtins
import datetime as dt
import json
import os
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from txcommit.adapters.base import CREATE_ID_KEY, Store, StoreFile, declared
from txcommit.errors import StoreError, UnsupportedStoreError
from txcommit.paths import display_url, join

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from txcommit.adapters.declarations import AdapterDeclaration

GOOGLE_ENDPOINT = "https://storage.googleapis.com"
EMULATOR_ENV = "STORAGE_EMULATOR_HOST"
SCOPE = "https://www.googleapis.com/auth/devstorage.read_write"
#: 429 and 5xx answers are retried (a precondition makes a retried create safe: the retry
#: either creates the object or gets 412, read back when it meets the create's own object).
RETRIES = 5
TIMEOUT = (10.0, 300.0)


def parse_gs_url(url: str) -> tuple[str, str]:
    """``gs://bucket/prefix`` -> (bucket, prefix without slashes); credentials refused."""
    parts = urlsplit(url)
    shown = display_url(url)
    if parts.scheme.lower() != "gs":
        raise StoreError(f"txcommit: {shown} is not a gs:// URL", url=shown)
    if "@" in parts.netloc:
        raise StoreError(
            f"txcommit: {shown} carries credentials in the URL, which txcommit does not accept; "
            "use application default credentials or GOOGLE_APPLICATION_CREDENTIALS",
            url=shown,
        )
    if not parts.netloc:
        raise StoreError(f"txcommit: {shown} names no bucket; use gs://<bucket>/<path>", url=shown)
    return parts.netloc, parts.path.strip("/")


class GcsStore(Store):
    """A bucket prefix on Google Cloud Storage (or an emulator), as a :class:`Store`.

    ``endpoint``: an emulator's URL (``http://127.0.0.1:4443``; default
    ``$STORAGE_EMULATOR_HOST``, else Google); ``session``: a ready ``requests.Session`` (tests).
    """

    def __init__(
        self,
        url: str,
        *,
        endpoint: str | None = None,
        session: Any = None,
        declaration: AdapterDeclaration | None = None,
    ) -> None:
        self.bucket, self.prefix = parse_gs_url(url)
        root = f"gs://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")
        super().__init__(root, declared(declaration, "gcs"))
        chosen = endpoint or os.environ.get(EMULATOR_ENV)
        if chosen and "://" not in chosen:  # STORAGE_EMULATOR_HOST may be host:port
            chosen = f"http://{chosen}"
        self.endpoint: str | None = chosen.rstrip("/") if chosen else None
        self._base = self.endpoint or GOOGLE_ENDPOINT
        self._session = session if session is not None else self._new_session()

    def _new_session(self) -> Any:
        requests = self._import_extra("requests", "requests", "gcs")
        if self.endpoint is not None:  # an emulator: no credentials
            return requests.Session()
        needs = "google-auth for Google Cloud credentials"
        auth = self._import_extra("google.auth", needs, "gcs")
        transport = self._import_extra("google.auth.transport.requests", needs, "gcs")
        try:
            credentials, _ = auth.default(scopes=[SCOPE])
        except Exception as e:  # google.auth.exceptions.DefaultCredentialsError
            raise StoreError(
                f"txcommit: no Google Cloud credentials for {self.root_url} "
                f"({type(e).__name__}); run `gcloud auth application-default login` or set "
                "GOOGLE_APPLICATION_CREDENTIALS, or set STORAGE_EMULATOR_HOST for an emulator",
                url=self.root_url,
            ) from None
        return transport.AuthorizedSession(credentials)

    # -- requests ------------------------------------------------------------------------

    def _name(self, key: str) -> str:
        return join(self.prefix, key)

    def _object_url(self, key: str) -> str:
        return f"{self._base}/storage/v1/b/{self.bucket}/o/{quote(self._name(key), safe='')}"

    def _request(
        self, kind: str, action: str, key: str, method: str, url: str, **kwargs: Any
    ) -> Any:
        """One request, retried on 429/5xx and connection errors; the final response."""
        for attempt in range(RETRIES + 1):
            self.requests.add(kind)
            try:
                response = self._session.request(method, url, timeout=TIMEOUT, **kwargs)
            except Exception as e:  # requests' ConnectionError, Timeout, ...
                if attempt < RETRIES:
                    time.sleep(0.1 * 2**attempt)
                    continue
                raise self._failure(action, key, f"{type(e).__name__}: {e}") from None
            if (response.status_code == 429 or response.status_code >= 500) and attempt < RETRIES:
                time.sleep(0.1 * 2**attempt)
                continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _failure(self, action: str, key: str, what: str) -> StoreError:
        where = f" (endpoint {self.endpoint})" if self.endpoint else ""
        if what.startswith("404") and (
            "bucket does not exist" in what.lower() or "bucket not found" in what.lower()
        ):
            advice = f"bucket '{self.bucket}' does not exist{where}; create it or fix the URL"
        elif what.startswith(("401", "403")):
            advice = "access was denied; check the credentials and the bucket's IAM policy"
        else:
            advice = f"check that the endpoint{where} is reachable, then retry"
        return self.failure(action, key, what, advice, denied=what.startswith(("401", "403")))

    def _error(self, action: str, key: str, response: Any) -> StoreError:
        try:
            message = response.json()["error"]["message"]
        except Exception:
            message = response.text[:200]
        return self._failure(action, key, f"{response.status_code} {message}")

    def _upload(self, key: str, data: bytes, *, exclusive: bool) -> None:
        """One ``uploadType=multipart`` upload; with ``exclusive``, ``ifGenerationMatch=0`` and
        a create id in the object's metadata: a create whose answer was lost is sent again,
        and the resend is refused by the object the first attempt made, which the id tells
        from another writer's (docs/protocol.md, I17)."""
        self.check_key(key)
        boundary = f"txcommit-{uuid.uuid4().hex}"
        create_id = str(uuid.uuid4())
        resource: dict[str, Any] = {"name": self._name(key)}
        if exclusive:
            resource["metadata"] = {CREATE_ID_KEY: create_id}
        metadata = json.dumps(resource).encode()
        body = b"".join(
            [
                f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n".encode(),
                metadata,
                f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n\r\n".encode(),
                data,
                f"\r\n--{boundary}--\r\n".encode(),
            ]
        )
        params = {"uploadType": "multipart", "fields": "generation"}
        if exclusive:
            params["ifGenerationMatch"] = "0"
        response = self._request(
            "PUT",
            "create" if exclusive else "write",
            key,
            "POST",
            f"{self._base}/upload/storage/v1/b/{self.bucket}/o",
            params=params,
            data=body,
            headers={"Content-Type": f"multipart/related; boundary={boundary}"},
        )
        if exclusive and response.status_code == 412:
            self.settle_refused_create(
                key,
                create_id,
                "GCS refused the upload with ifGenerationMatch=0; ",
                lambda: self._create_id_of(key),
            )
            return
        if response.status_code != 200:
            raise self._error("create" if exclusive else "write", key, response)

    def _create_id_of(self, key: str) -> str | None:
        """The create id the object at ``key`` carries (one metadata GET); None without one
        or it."""
        url = self._object_url(key)
        response = self._request(
            "HEAD", "read back", key, "GET", url, params={"fields": "metadata"}
        )
        if response.status_code == 404 and not self._bucket_missing(response):
            return None
        if response.status_code != 200:
            raise self._error("read back", key, response)
        found = (response.json().get("metadata") or {}).get(CREATE_ID_KEY)
        return found if isinstance(found, str) else None

    # -- the contract --------------------------------------------------------------------

    def create_exclusive(self, key: str, data: bytes) -> None:
        self._upload(key, data, exclusive=True)

    def write_replacing(self, key: str, data: bytes) -> None:
        self._upload(key, data, exclusive=False)

    def read(self, key: str) -> bytes | None:
        self.check_key(key)
        url = self._object_url(key)
        response = self._request("GET", "read", key, "GET", url, params={"alt": "media"})
        if response.status_code == 404 and not self._bucket_missing(response):
            return None
        if response.status_code != 200:
            raise self._error("read", key, response)
        return bytes(response.content)

    def _bucket_missing(self, response: Any) -> bool:
        """A 404 about the bucket, not the object (GCS: "The specified bucket does not
        exist."; fake-gcs-server: "bucket not found")."""
        text = response.text.lower()
        return "bucket does not exist" in text or "bucket not found" in text

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        return self._objects(prefix, delimited=True)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        # One flat listing (1000 names a page), not one request per directory.
        return self._objects(prefix, delimited=False, progress=progress)

    def _objects(
        self, prefix: str, *, delimited: bool, progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        """The objects under the directory ``prefix``: directly under it if ``delimited``,
        else at any depth. Names ending in ``/`` are directory placeholders (Hadoop's GCS
        connector creates them for ``mkdirs``), not files."""
        below = join(self.prefix, prefix)
        params: dict[str, str] = {
            "prefix": below + "/" if below else "",
            "fields": "items(name,size,generation,updated),nextPageToken",
        }
        if delimited:
            params["delimiter"] = "/"
        strip = self.prefix + "/" if self.prefix else ""
        files: builtins.list[StoreFile] = []
        while True:
            url = f"{self._base}/storage/v1/b/{self.bucket}/o"
            response = self._request("LIST", "list", prefix, "GET", url, params=params)
            if response.status_code != 200:
                raise self._error("list", prefix, response)
            page = response.json()
            for item in page.get("items", []):
                name = str(item["name"])
                if name.endswith("/"):
                    continue
                # generation: new for every write of the name; updated: the store's time of it
                files.append(
                    StoreFile(
                        name[len(strip) :],
                        int(item["size"]),
                        _mtime_ns(item.get("updated")),
                        item.get("generation"),
                    )
                )
            if progress is not None:
                progress(len(files))
            token = page.get("nextPageToken")
            if not token:
                break
            params["pageToken"] = token
        return sorted(files, key=lambda f: f.key)

    def exists(self, key: str) -> bool:
        self.check_key(key)
        url = self._object_url(key)
        response = self._request("HEAD", "check", key, "GET", url, params={"fields": "name"})
        if response.status_code == 404 and not self._bucket_missing(response):
            return False
        if response.status_code != 200:
            raise self._error("check", key, response)
        return True

    def delete(self, key: str) -> bool:
        self.check_key(key)
        response = self._request("DELETE", "delete", key, "DELETE", self._object_url(key))
        if response.status_code == 404 and not self._bucket_missing(response):
            return False
        if response.status_code not in (200, 204):
            raise self._error("delete", key, response)
        return True

    def check_ready(self) -> None:
        """Proves the endpoint refuses a second ``ifGenerationMatch=0`` create of one key."""
        self.probe_exclusive_create(
            f"GCS endpoint {self.endpoint or GOOGLE_ENDPOINT} (bucket {self.bucket})",
            "ifGenerationMatch=0",
        )

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        try:
            import gcsfs
        except ImportError:
            raise UnsupportedStoreError(
                f"txcommit: reading {self.root_url} with fsspec needs gcsfs; install it: "
                "pip install 'txcommit[gcs]'"
            ) from None
        path = join(self.bucket, self.prefix)
        if self.endpoint is None:
            return gcsfs.GCSFileSystem(), path
        # gcsfs' default class (ExtendedGcsFileSystem in recent versions) first asks the
        # storage-control gRPC API for the bucket type, which emulators do not serve (a minute
        # of timeouts per bucket); the core class speaks the JSON API only.
        from gcsfs.core import GCSFileSystem

        return GCSFileSystem(endpoint_url=self.endpoint, token="anon"), path

    def __repr__(self) -> str:
        return (
            f"GcsStore({self.root_url!r}, adapter={self.declaration.name!r}, "
            f"endpoint={self.endpoint!r})"
        )


__all__ = ["GOOGLE_ENDPOINT", "GcsStore", "parse_gs_url"]


def _mtime_ns(updated: object) -> int | None:
    """GCS's ``updated`` (RFC 3339, UTC) in ns since the epoch; None when absent or odd."""
    if not isinstance(updated, str):
        return None
    try:
        t = dt.datetime.fromisoformat(updated.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        return None
    return int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000
