"""The store contract, in Python: what txcommit needs from a store, and what every adapter's
Python mirror must guarantee. It mirrors ``CommitStore.scala`` of the JVM plugin; the shared
contract tests (``python/tests/contract.py``) check it on the real store.
"""

from __future__ import annotations

import abc
import builtins
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from txcommit.errors import AlreadyExistsError, StoreError, UnsupportedStoreError
from txcommit.log import join, unsafe_relative_path

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from txcommit.adapters.declarations import AdapterDeclaration


@dataclass(frozen=True)
class StoreFile:
    """A file a listing returned: its key (relative to the store's root) and size in bytes."""

    key: str
    size: int

    @property
    def name(self) -> str:
        return self.key.rpartition("/")[2]


@dataclass(frozen=True)
class MultipartUpload:
    """A multipart upload started and not yet completed or aborted."""

    key: str
    upload_id: str


@dataclass(frozen=True)
class UploadedPart:
    """One uploaded part of a multipart upload (1-based ``part_number``)."""

    part_number: int
    etag: str


class RequestCounter:
    """Store requests made, by kind (PUT, GET, HEAD, LIST, DELETE, RENAME, MULTIPART_INITIATE,
    MULTIPART_PART, MULTIPART_COMPLETE, MULTIPART_ABORT, MULTIPART_LIST), so that what an
    operation cost is measured, not assumed (``RequestCounter.scala``)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, kind: str, n: int = 1) -> None:
        if n > 0:
            with self._lock:
                self._counts[kind] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    def __repr__(self) -> str:
        return f"RequestCounter({self.snapshot()})"


class Store(abc.ABC):
    """One store, rooted at a URL (a table, or any directory or bucket prefix above it).

    Keys are ``/``-separated paths relative to the root (``"_txcommit/commits/<txn>.json"``);
    a key that is absolute, empty, or has ``.``, ``..`` or empty segments is refused. Every
    implementation guarantees, as ``CommitStore`` does on the JVM:

    1. ``create_exclusive(key, data)`` is atomic and exclusive: a reader sees either no file
       or all of ``data``, never a part; of any number of concurrent callers for one key,
       exactly one succeeds and every other gets
       :class:`~txcommit.errors.AlreadyExistsError`; an existing key is never overwritten.
       The commit record is published only this way.
    2. ``write_replacing(key, data)`` makes ``data`` visible in full (readers see the old or
       the new content, never a part) and may overwrite: it is used only for derived files
       (``_SUCCESS``, markers) that can be rewritten from the log.
    3. ``list(prefix)`` returns every file directly under the directory ``prefix`` whose
       create or publish completed before the call (list-after-write consistency), and none
       deleted before it; a missing directory lists as empty. ``read`` of a missing key is
       None; ``delete`` of a missing key returns False and is no error.
    4. Data files are written by Spark's writers straight to their final place (or, on
       ``multipart-complete`` stores, as multipart uploads completed at job commit: see
       :class:`MultipartStore`); a store never moves or copies them.
    5. ``check_ready()`` proves, before anything is written, that the store really has the
       primitive its adapter declares, or fails naming the endpoint and what is missing.
    6. Every request is counted in ``requests``; nothing a store logs, raises or shows in its
       ``repr`` contains credentials. Every error names the key's URL and says what to do.
    """

    #: The declaration of the adapter this store implements.
    declaration: AdapterDeclaration

    def __init__(self, root_url: str, declaration: AdapterDeclaration) -> None:
        self._root_url = root_url.rstrip("/")
        self.declaration = declaration
        self.requests = RequestCounter()

    @property
    def root_url(self) -> str:
        """The root as a URL, without credentials."""
        return self._root_url

    @property
    def primitive(self) -> str:
        return self.declaration.primitive

    def conflict(self, key: str, how: str) -> AlreadyExistsError:
        """The error of an exclusive create that found ``key`` existing (``how`` it knew)."""
        url = self.url_for(key)
        return AlreadyExistsError(
            f"txcommit: {url} already exists, so it was not overwritten; another writer "
            f"published it first ({how}for a commit record: that transaction is committed, "
            "do not commit it again)",
            url=url,
        )

    def url_for(self, key: str) -> str:
        """The URL of ``key`` (for messages), without credentials."""
        return join(self._root_url, key)

    def check_key(self, key: str) -> str:
        """``key`` if it is a safe relative key, else a :class:`StoreError` saying why."""
        why = unsafe_relative_path(key) if isinstance(key, str) else "it is not a string"
        if why is not None:
            raise StoreError(
                f"txcommit: key {key!r} is not a path below {self._root_url} ({why}); pass a "
                "relative key such as '_txcommit/commits/<txn>.json'",
                url=self._root_url,
            )
        return key

    def check_prefix(self, prefix: str) -> str:
        """A directory prefix: "" (the root) or a safe relative key (a trailing / is dropped)."""
        stripped = prefix.rstrip("/") if isinstance(prefix, str) else prefix
        return "" if stripped == "" else self.check_key(stripped)

    @abc.abstractmethod
    def create_exclusive(self, key: str, data: bytes) -> None:
        """Creates ``key`` holding ``data``; AlreadyExistsError if it exists (point 1)."""

    @abc.abstractmethod
    def write_replacing(self, key: str, data: bytes) -> None:
        """Writes ``data`` to ``key``, replacing any old content atomically (point 2)."""

    @abc.abstractmethod
    def read(self, key: str) -> bytes | None:
        """The whole content of ``key``, or None when it does not exist."""

    @abc.abstractmethod
    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        """Files directly under the directory ``prefix`` ("" = the root), sorted by key."""

    @abc.abstractmethod
    def exists(self, key: str) -> bool:
        """Whether ``key`` exists."""

    @abc.abstractmethod
    def delete(self, key: str) -> bool:
        """Deletes ``key``; True if it existed, False (no error) if it did not."""

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        """Every file at any depth under the directory ``prefix`` ("" = the root), sorted by
        key, with the list-after-write consistency of :meth:`list`. ``progress`` is called with
        the number of files found so far after each directory or listing page (readers show
        it for tables of many directories). A store without a recursive listing says so."""
        raise UnsupportedStoreError(
            f"txcommit: {type(self).__name__} ({self._root_url}) cannot list recursively yet"
        )

    def check_ready(self) -> None:  # noqa: B027 - a no-op unless the store must prove itself
        """Point 5: proves the declared primitive works here (a no-op where it cannot lie)."""

    @abc.abstractmethod
    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        """An fsspec file system on this store and the root's path in it, for readers that
        hand data files to pyarrow, pandas or polars: ``fs.open(join(root, key))``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._root_url!r}, adapter={self.declaration.name!r})"


class MultipartStore(Store):
    """A store of a ``multipart-complete`` adapter: data files are uploaded as multipart
    uploads that become visible only when completed (at job commit), so no listing or read
    ever shows in-flight data, and an aborted job aborts its uploads.

    7. Until ``complete_multipart``, an upload's key is invisible to ``list``, ``read`` and
       ``exists``; after it, the whole object is visible at once. ``abort_multipart`` removes
       the upload and its parts, and it no longer appears in ``list_multipart_uploads``.
    """

    @abc.abstractmethod
    def start_multipart(self, key: str) -> MultipartUpload:
        """Starts a multipart upload to ``key``."""

    @abc.abstractmethod
    def upload_part(self, upload: MultipartUpload, part_number: int, data: bytes) -> UploadedPart:
        """Uploads part ``part_number`` (1-based; every part but the last at least 5 MiB)."""

    @abc.abstractmethod
    def complete_multipart(self, upload: MultipartUpload, parts: Sequence[UploadedPart]) -> None:
        """Makes the upload's object visible, whole, at its key."""

    @abc.abstractmethod
    def abort_multipart(self, upload: MultipartUpload) -> None:
        """Aborts the upload and deletes its parts (an unknown upload is no error)."""

    @abc.abstractmethod
    def list_multipart_uploads(self, prefix: str = "") -> builtins.list[MultipartUpload]:
        """Uploads neither completed nor aborted whose key lies under the directory
        ``prefix`` (at any depth), sorted by key."""


__all__ = [
    "MultipartStore",
    "MultipartUpload",
    "RequestCounter",
    "Store",
    "StoreFile",
    "UploadedPart",
]
