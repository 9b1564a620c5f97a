"""The ``s3`` (primitive ``conditional-put``) and ``s3-multipart`` (``multipart-complete``)
adapters: Amazon S3 and S3-compatible stores.

* ``s3``: data files are written straight to their final key; a commit record is created with
  ``PUT`` and ``If-None-Match: *``, which S3 refuses with 412 when the key exists. That is
  obstore's ``put(..., mode="create")`` (object_store sends ``If-None-Match: *`` and maps 412
  to ``AlreadyExistsError``). An endpoint that ignores the header would let a second create
  overwrite the first: :meth:`S3Store.check_ready` probes for that and refuses such a store.
* ``s3-multipart``: the same, plus data files uploaded as multipart uploads that are
  completed only at job commit, so no listing shows in-flight data. obstore (0.12) can upload
  in parts but always completes the upload itself when the write ends: it exposes no
  deferred-completion API (no upload id, no separate complete/abort, no listing of pending
  uploads). Those operations therefore use boto3, imported only when first needed; every
  other operation, including the commit record, goes through obstore.

Connection settings come from the arguments, else from the usual environment variables
(``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``, ``AWS_REGION``/``AWS_DEFAULT_REGION``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``); without keys, obstore
and boto3 use their default credential chains. Credentials never appear in a ``repr``, a log
line or an error message: errors are raised without their low-level cause attached (its text,
scrubbed of any credential, is in the message).
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import obstore
from obstore.store import S3Store as _ObstoreS3

from txcommit.adapters.base import (
    MultipartStore,
    MultipartUpload,
    ObstoreStore,
    Secret,
    StoreFile,
    UploadedPart,
    declared,
)
from txcommit.errors import StoreError, UnsupportedStoreError
from txcommit.paths import display_url, join

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem
    from obstore.store import RetryConfig, S3Config

    from txcommit.adapters.declarations import AdapterDeclaration

#: obstore switches to a multipart upload above this size in write_replacing (its default).
CHUNK_SIZE = 5 * 1024 * 1024
#: How often a create answered 409 Conflict (S3: another conditional write of the key is in
#: flight) is retried; the retry then gets 412 if the other write won.
CONFLICT_RETRIES = 5
_SCHEMES = ("s3", "s3a")
_DENIED = (obstore.exceptions.PermissionDeniedError, obstore.exceptions.UnauthenticatedError)
_DENIED_CODES = ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403 Forbidden")


@dataclass(frozen=True)
class S3Location:
    """``s3://bucket/prefix`` taken apart (``s3a://`` is the same store)."""

    scheme: str
    bucket: str
    prefix: str

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")


def parse_s3_url(url: str) -> S3Location:
    """Splits an ``s3://`` or ``s3a://`` URL; credentials in it are refused (not shown)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    shown = display_url(url)
    if scheme not in _SCHEMES:
        raise StoreError(f"txcommit: {shown} is not an s3:// or s3a:// URL", url=shown)
    if "@" in parts.netloc:
        raise StoreError(
            f"txcommit: {shown} carries credentials in the URL, which txcommit does not accept "
            "(they would end up in logs); pass access_key_id/secret_access_key or set "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
            url=shown,
        )
    if not parts.netloc:
        raise StoreError(f"txcommit: {shown} names no bucket; use s3://<bucket>/<path>", url=shown)
    return S3Location(scheme, parts.netloc, parts.path.strip("/"))


def _setting(value: Any, *env_names: str) -> Any:
    if value is not None:
        return value
    for name in env_names:
        found = os.environ.get(name)
        if found:
            return found
    return None


class S3Store(ObstoreStore):
    """A bucket prefix on S3 or an S3-compatible store, as a :class:`Store` (adapter ``s3``).

    ``endpoint``: for S3-compatible stores (``http://127.0.0.1:9000``); ``path_style``: put the
    bucket in the path, not the host name (default: True when an endpoint is given);
    ``allow_http``: permit a plain-HTTP endpoint (default: True for an ``http://`` endpoint).
    """

    #: The adapter whose declaration the store gets when it is given none.
    default_adapter = "s3"
    conflict_retries = CONFLICT_RETRIES
    refusal = "S3 refused PUT with If-None-Match: *; "

    def __init__(
        self,
        url: str,
        *,
        endpoint: str | None = None,
        region: str | None = None,
        path_style: bool | None = None,
        allow_http: bool | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        session_token: str | None = None,
        max_retries: int | None = None,
        retry_timeout: float | None = None,
        declaration: AdapterDeclaration | None = None,
    ) -> None:
        self.location = parse_s3_url(url)
        super().__init__(self.location.url, declared(declaration, self.default_adapter))
        self.endpoint: str | None = _setting(endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
        self.region: str = _setting(region, "AWS_REGION", "AWS_DEFAULT_REGION") or "us-east-1"
        self.path_style = self.endpoint is not None if path_style is None else path_style
        self.allow_http = (
            bool(self.endpoint and self.endpoint.startswith("http://"))
            if allow_http is None
            else allow_http
        )
        key = _setting(access_key_id, "AWS_ACCESS_KEY_ID")
        secret = _setting(secret_access_key, "AWS_SECRET_ACCESS_KEY")
        token = _setting(session_token, "AWS_SESSION_TOKEN")
        if (key is None) != (secret is None):
            raise StoreError(
                f"txcommit: for {self.root_url} only one of the access key id and the secret "
                "access key is set; set both (arguments or AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY) or neither",
                url=self.root_url,
            )
        self._key = Secret(key) if key else None
        self._secret = Secret(secret) if secret else None
        self._token = Secret(token) if token else None
        self._retry: RetryConfig = {}
        if max_retries is not None:
            self._retry["max_retries"] = max_retries
        if retry_timeout is not None:
            self._retry["retry_timeout"] = timedelta(seconds=retry_timeout)
        self._obstore = _ObstoreS3(
            self.location.bucket,
            prefix=self.location.prefix or None,
            config=self._obstore_config(),
            client_options={"allow_http": self.allow_http},
            retry_config=self._retry or None,
        )

    def _obstore_config(self) -> S3Config:
        config: S3Config = {
            "region": self.region,
            "virtual_hosted_style_request": not self.path_style,
            # One DELETE per key: bulk delete (POST ?delete) is missing on some S3-compatibles.
            "disable_bulk_delete": True,
        }
        if self.endpoint:
            config["endpoint"] = self.endpoint
        if self._key is not None and self._secret is not None:
            config["access_key_id"] = self._key.reveal()
            config["secret_access_key"] = self._secret.reveal()
        if self._token is not None:
            config["session_token"] = self._token.reveal()
        return config

    # -- errors --------------------------------------------------------------------------

    def _where(self) -> str:
        return f" (endpoint {self.endpoint})" if self.endpoint else ""

    def _failure(self, action: str, key: str, cause: BaseException) -> StoreError:
        """A StoreError for a failed request, naming the key's URL and what to do."""
        full = Secret.scrub(str(cause), self._key, self._secret, self._token)
        if "NoSuchBucket" in full:
            advice = (
                f"bucket '{self.location.bucket}' does not exist{self._where()}; create it or "
                "fix the URL"
            )
        elif isinstance(cause, _DENIED) or any(code in full for code in _DENIED_CODES):
            advice = (
                "access was denied; check the credentials (AWS_ACCESS_KEY_ID, "
                "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or your profile) and the bucket policy"
            )
        else:
            advice = f"check that the endpoint{self._where()} is reachable, then retry"
        denied = isinstance(cause, _DENIED) or any(code in full for code in _DENIED_CODES)
        return self.failure(action, key, full, advice, blank=type(cause).__name__, denied=denied)

    def _root_missing(self, action: str, error: FileNotFoundError) -> bool:
        # Only a GET's answer names the missing bucket: a HEAD's has no body, and a DELETE
        # follows a HEAD that found the key.
        return action == "read" and "NoSuchBucket" in str(error)

    # -- the contract --------------------------------------------------------------------

    def _obstore_client(self, create: bool = False) -> _ObstoreS3:
        return self._obstore

    def write_replacing(self, key: str, data: bytes) -> None:
        self.check_key(key)
        if len(data) > CHUNK_SIZE:  # obstore uploads it in parts, completed at once
            self.requests.add("MULTIPART_INITIATE")
            self.requests.add("MULTIPART_PART", -(-len(data) // CHUNK_SIZE))
            self.requests.add("MULTIPART_COMPLETE")
        else:
            self.requests.add("PUT")
        try:
            obstore.put(self._obstore, key, data, chunk_size=CHUNK_SIZE)
        except (OSError, obstore.exceptions.BaseError) as e:
            raise self._failure("write", key, e) from None

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        try:
            result = self._obstore.list_with_delimiter(prefix or None)
        except (OSError, obstore.exceptions.BaseError) as e:
            self.requests.add("LIST")
            raise self._obstore_failure("list", prefix, e) from None
        # obstore pages through the listing: S3 answers at most 1000 keys and prefixes a page.
        entries = len(result["objects"]) + len(result["common_prefixes"])
        self.requests.add("LIST", max(1, -(-entries // 1000)))
        files = [StoreFile.of_meta(m) for m in result["objects"]]
        return sorted(files, key=lambda f: f.key)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        # S3 lists at most 1000 keys a page.
        found = self._walk_obstore(self._obstore, prefix, 1000, progress, self._obstore_failure)
        return sorted(found, key=lambda f: f.key)

    def delete(self, key: str) -> bool:
        # S3 answers DELETE of a missing key with success, so a HEAD tells the two apart.
        return self.exists(key) and super().delete(key)

    def check_ready(self) -> None:
        """Proves the endpoint refuses a second ``If-None-Match: *`` create of one key."""
        self.probe_exclusive_create(
            f"S3 endpoint {self.endpoint or 'of AWS'} (bucket {self.location.bucket})",
            "If-None-Match: *",
            " Use an endpoint that supports conditional writes, or certify it with the "
            "conformance kit.",
        )

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        from obstore.fsspec import FsspecStore

        fs = FsspecStore(
            "s3",
            config=self._obstore_config(),
            client_options={"allow_http": self.allow_http},
            retry_config=self._retry or None,
        )
        return fs, join(self.location.bucket, self.location.prefix)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.root_url!r}, adapter={self.declaration.name!r}, "
            f"endpoint={self.endpoint!r}, region={self.region!r}, path_style={self.path_style})"
        )


class S3MultipartStore(S3Store, MultipartStore):
    """Adapter ``s3-multipart``: :class:`S3Store` plus multipart uploads completed later.

    The multipart operations use boto3 (obstore has no deferred-completion API); install it
    with ``pip install boto3`` (it is in txcommit's ``dev`` extra).
    """

    default_adapter = "s3-multipart"
    _client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise UnsupportedStoreError(
                    f"txcommit: the s3-multipart adapter ({self.root_url}) needs boto3 for "
                    "multipart uploads completed at commit (obstore cannot defer completion); "
                    "install it: pip install boto3"
                ) from None
            retries: dict[str, Any] = {"mode": "standard"}
            if "max_retries" in self._retry:
                retries["total_max_attempts"] = int(self._retry["max_retries"]) + 1
            kwargs: dict[str, Any] = {
                "region_name": self.region,
                "config": Config(
                    s3={"addressing_style": "path" if self.path_style else "virtual"},
                    retries=retries,
                ),
            }
            if self.endpoint:
                kwargs["endpoint_url"] = self.endpoint
            if self._key is not None and self._secret is not None:
                kwargs["aws_access_key_id"] = self._key.reveal()
                kwargs["aws_secret_access_key"] = self._secret.reveal()
            if self._token is not None:
                kwargs["aws_session_token"] = self._token.reveal()
            self._client = boto3.session.Session().client("s3", **kwargs)
        return self._client

    def _full_key(self, key: str) -> str:
        return join(self.location.prefix, key)

    def _call(self, kind: str, action: str, key: str, fn: str, **kwargs: Any) -> Any:
        client = self._s3()
        self.requests.add(kind)
        try:
            return getattr(client, fn)(Bucket=self.location.bucket, **kwargs)
        except Exception as e:  # botocore's ClientError, EndpointConnectionError, ...
            raise self._failure(action, key, e) from None

    def start_multipart(self, key: str) -> MultipartUpload:
        self.check_key(key)
        answer = self._call(
            "MULTIPART_INITIATE",
            "start a multipart upload to",
            key,
            "create_multipart_upload",
            Key=self._full_key(key),
        )
        return MultipartUpload(key, str(answer["UploadId"]))

    def upload_part(self, upload: MultipartUpload, part_number: int, data: bytes) -> UploadedPart:
        self.check_key(upload.key)
        if not 1 <= part_number <= 10000:
            raise StoreError(
                f"txcommit: part number {part_number} of the upload to "
                f"{self.url_for(upload.key)} is out of range; S3 numbers parts 1 to 10000",
                url=self.url_for(upload.key),
            )
        answer = self._call(
            "MULTIPART_PART",
            f"upload part {part_number} of",
            upload.key,
            "upload_part",
            Key=self._full_key(upload.key),
            UploadId=upload.upload_id,
            PartNumber=part_number,
            Body=data,
        )
        return UploadedPart(part_number, str(answer["ETag"]))

    def complete_multipart(self, upload: MultipartUpload, parts: Sequence[UploadedPart]) -> None:
        self.check_key(upload.key)
        ordered = sorted(parts, key=lambda p: p.part_number)
        if not ordered:
            raise StoreError(
                f"txcommit: cannot complete the upload to {self.url_for(upload.key)} without "
                "parts; upload at least one part first (or abort it)",
                url=self.url_for(upload.key),
            )
        self._call(
            "MULTIPART_COMPLETE",
            "complete the multipart upload to",
            upload.key,
            "complete_multipart_upload",
            Key=self._full_key(upload.key),
            UploadId=upload.upload_id,
            MultipartUpload={
                "Parts": [{"PartNumber": p.part_number, "ETag": p.etag} for p in ordered]
            },
        )

    def abort_multipart(self, upload: MultipartUpload) -> None:
        self.check_key(upload.key)
        try:
            self._call(
                "MULTIPART_ABORT",
                "abort the multipart upload to",
                upload.key,
                "abort_multipart_upload",
                Key=self._full_key(upload.key),
                UploadId=upload.upload_id,
            )
        except StoreError as e:
            if "NoSuchUpload" not in str(e):  # already aborted or completed: nothing to do
                raise

    def list_multipart_uploads(self, prefix: str = "") -> builtins.list[MultipartUpload]:
        prefix = self.check_prefix(prefix)
        below = join(self.location.prefix, prefix)
        full_prefix = below + "/" if below else ""
        strip = self.location.prefix + "/" if self.location.prefix else ""
        found: builtins.list[MultipartUpload] = []
        markers: Mapping[str, str] = {}
        while True:
            page = self._call(
                "MULTIPART_LIST",
                "list multipart uploads under",
                prefix,
                "list_multipart_uploads",
                Prefix=full_prefix,
                **markers,
            )
            for u in page.get("Uploads", []):
                found.append(MultipartUpload(str(u["Key"])[len(strip) :], str(u["UploadId"])))
            if not page.get("IsTruncated"):
                break
            markers = {
                "KeyMarker": page.get("NextKeyMarker", ""),
                "UploadIdMarker": page.get("NextUploadIdMarker", ""),
            }
        return sorted(found, key=lambda u: (u.key, u.upload_id))


__all__ = ["S3Location", "S3MultipartStore", "S3Store", "parse_s3_url"]
