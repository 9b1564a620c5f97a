"""The Python side of a store: the base class every adapter's Python store implements. The
store contract is written once, in the doc comment of ``CommitStore.scala`` of the JVM plugin;
the shared contract tests (``txcommit.testing.store_contract``: the conformance kit's checks)
check it on the real store.
"""

from __future__ import annotations

import abc
import builtins
import importlib
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import obstore

from txcommit.adapters.declarations import AdapterDeclaration, declaration_named
from txcommit.errors import AccessDeniedError, AlreadyExistsError, StoreError, UnsupportedStoreError
from txcommit.paths import LOG_DIR_NAME, ascii_control, join, printable, unsafe_relative_path

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

_T = TypeVar("_T")

# How obstore reports a listed key it cannot parse (an ASCII control character in a segment).
_REFUSED_KEY = re.compile(r'Error parsing Path "(.*)": Encountered illegal character', re.DOTALL)


#: The object metadata an exclusive create tags its object with, a random id per create (the
#: JVM's stores use the same name): a resend of a create whose answer was lost is refused by
#: the object its first attempt made, which carries the id (docs/protocol.md, I17).
CREATE_ID_KEY = "txcommit-create-id"


@dataclass(frozen=True)
class StoreFile:
    """A file a listing returned: its key (relative to the store's root), size in bytes, and
    what tells a file written again under the same key from its predecessor, where the store
    gives it: modification time (ns since the epoch) and ETag (or generation)."""

    key: str
    size: int
    mtime_ns: int | None = None
    etag: str | None = None

    @staticmethod
    def of_meta(meta: Any) -> StoreFile:
        """The file an obstore listing entry (``ObjectMeta``) describes."""
        modified = meta.get("last_modified")
        mtime_ns = None
        if modified is not None:
            mtime_ns = int(modified.timestamp()) * 1_000_000_000 + modified.microsecond * 1000
        tag = meta.get("e_tag") or meta.get("version")
        return StoreFile(str(meta["path"]), int(meta["size"]), mtime_ns, tag)

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


class Secret:
    """A credential: shown as *** by repr and str, so that no log line, error or ``repr``
    of a store shows it; ``reveal()`` gives it to the client that needs it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "***"

    __str__ = __repr__

    @staticmethod
    def scrub(text: str, *secrets: Secret | None) -> str:
        """``text`` (an error from a client) with each of ``secrets`` replaced by ***."""
        return mask(text, [s.reveal() for s in secrets if s is not None])


#: A secret at least this long is masked wherever it occurs: it cannot be part of a word by
#: chance. A shorter one only where it stands alone, else every "x" of a message would go
#: for the key "x".
WHOLE_SECRET_LENGTH = 8


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` replaced by ***: everywhere for a secret of
    :data:`WHOLE_SECRET_LENGTH` characters or more, else where it is not part of a longer
    run of letters and digits."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= WHOLE_SECRET_LENGTH:
            text = text.replace(secret, "***")
        else:
            text = re.sub(rf"(?<![^\W_]){re.escape(secret)}(?![^\W_])", "***", text)
    return text


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
    implementation keeps the store contract, written once in the doc comment of the JVM's
    ``CommitStore`` (docs/adapters.md, "The contract"), under Python names: ``create_exclusive``
    raises :class:`~txcommit.errors.AlreadyExistsError` to every loser, ``write_replacing``,
    ``check_ready()``, ``requests``. Here ``list(prefix)`` returns the files directly under the
    directory ``prefix``, ``delete`` of a missing key returns False, a store's ``repr`` holds no
    credentials either, and every error names the key's URL and says what to do.
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

    def settle_refused_create(
        self, key: str, create_id: str, how: str, found_id: Callable[[], str | None]
    ) -> None:
        """After the store refused an exclusive create of ``key`` tagged ``create_id``: returns
        when the object in place carries that id (``found_id()`` reads it; None when the
        object has none or is gone), which means the client resent the create after losing
        the answer to its first attempt, which landed. Otherwise the conflict (``how`` the
        store refused it). When the read-back fails, the create's outcome is unknown: a
        StoreError saying so, never a conflict."""
        try:
            found = found_id()
        except StoreError as e:
            raise self.failure(
                "create",
                key,
                f"the store refused it, and reading the object back to learn whether it is "
                f"this create's own (a resend after a lost answer) failed: {e}",
                "the create may have landed; read the key before creating it again",
            ) from None
        if found != create_id:
            raise self.conflict(key, how)

    def failure(
        self,
        action: str,
        key: str,
        detail: str,
        advice: str,
        blank: str = "",
        *,
        denied: bool = False,
    ) -> StoreError:
        """The error of a failed request to ``key``: the first line of ``detail`` (``blank``
        when it has none), then ``advice`` on what to do; an :class:`AccessDeniedError` when
        the store ``denied`` it for lack of permission."""
        url = self.url_for(key)
        first = (detail.splitlines() or [blank])[0][:300]
        kind = AccessDeniedError if denied else StoreError
        return kind(f"txcommit: could not {action} {url}: {first}. Hint: {advice}.", url=url)

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

    def _import_extra(self, module: str, needs: str, extra: str) -> Any:
        """``module``, imported; if it is not installed, an error naming what this adapter
        needs and the package extra that installs it."""
        try:
            return importlib.import_module(module)
        except ImportError:
            raise UnsupportedStoreError(
                f"txcommit: the {self.declaration.name} adapter ({self.root_url}) needs "
                f"{needs}; install it: pip install 'txcommit[{extra}]'"
            ) from None

    def _walk_obstore(
        self,
        store: Any,
        prefix: str,
        page_size: int,
        progress: Callable[[int], None] | None,
        failure: Callable[[str, str, BaseException], StoreError],
    ) -> builtins.list[StoreFile]:
        """:meth:`walk` for an obstore-backed store: one flat listing (``page_size`` keys a
        request, each counted as a LIST), not one request per directory; a failure is raised
        as ``failure("list", prefix, error)`` makes it."""
        found: builtins.list[StoreFile] = []
        try:
            for page in obstore.list(store, prefix or None, chunk_size=page_size):
                self.requests.add("LIST")
                found += [StoreFile.of_meta(m) for m in page]
                if progress is not None:
                    progress(len(found))
        except (OSError, obstore.exceptions.BaseError) as e:
            self.requests.add("LIST")
            raise failure("list", prefix, e) from None
        return found

    def check_ready(self) -> None:  # noqa: B027 - a no-op unless the store must prove itself
        """Point 5: proves the declared primitive works here (a no-op where it cannot lie)."""

    def probe_exclusive_create(self, endpoint: str, ignored: str, advice: str = "") -> None:
        """Point 5 for a ``conditional-put`` store, as the JVM's ``ConditionalPutProbe``: a
        small object under ``_txcommit/probe/`` is created twice (the second create must be
        refused), then deleted (3 to 4 requests). Otherwise the error says that ``endpoint``
        (the store, for the message) ignored ``ignored`` (the precondition), then ``advice``."""
        probe = f"{LOG_DIR_NAME}/probe/{uuid.uuid4()}.json"
        self.create_exclusive(probe, b'{"probe":1}')
        try:
            try:
                self.create_exclusive(probe, b'{"probe":2}')
            except AlreadyExistsError:
                return
            raise UnsupportedStoreError(
                f"txcommit: the {endpoint} does not provide the conditional-put capability the "
                f"'{self.declaration.name}' adapter relies on: it ignored {ignored} (two "
                f"exclusive creates of {self.url_for(probe)} both succeeded), so a commit record "
                f"could be overwritten.{advice}"
            )
        finally:
            self.delete(probe)

    @abc.abstractmethod
    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        """An fsspec file system on this store and the root's path in it, for readers that
        hand data files to pyarrow, pandas or polars: ``fs.open(join(root, key))``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._root_url!r}, adapter={self.declaration.name!r})"


def declared(declaration: AdapterDeclaration | None, adapter: str) -> AdapterDeclaration:
    """``declaration``, else the shipped declaration of ``adapter`` (a store's default)."""
    if declaration is not None:
        return declaration
    return declaration_named(adapter)


class ObstoreStore(Store):
    """A store whose requests go through an obstore client (adapters s3, azure and local):
    the exclusive create, read, existence check and delete of a key, with obstore's errors
    turned into StoreErrors that name the key's URL."""

    #: How often a create answered 409 Conflict is retried (S3: another conditional write of
    #: the key is in flight); the retry then finds the key if the other write won.
    conflict_retries: ClassVar[int] = 0
    #: How the store refused a second exclusive create, for the conflict's message.
    refusal: ClassVar[str] = ""
    #: The metadata name of an exclusive create's id on this store.
    create_id_key: ClassVar[str] = CREATE_ID_KEY
    #: Whether the store reaches a key with an ASCII control character in it (a table named
    #: with a TAB, which Spark reads): obstore's clients refuse one, plain file calls do not.
    addresses_control_characters: ClassVar[bool] = False

    def __init__(self, root_url: str, declaration: AdapterDeclaration) -> None:
        super().__init__(root_url, declaration)
        control = None if self.addresses_control_characters else ascii_control(self.root_url)
        if control is not None:
            raise self._unaddressable(self.root_url, control)

    def check_key(self, key: str) -> str:
        super().check_key(key)
        control = None if self.addresses_control_characters else ascii_control(key)
        if control is not None:
            raise self._unaddressable(self.url_for(key), control)
        return key

    def _unaddressable(self, what: str, control: str) -> StoreError:
        """The error of a path ``what`` with the control character ``control`` in it, which
        this store's client cannot address (rather than a wrong "no such file")."""
        return StoreError(
            f"txcommit: {printable(what)} has a control character ({control}) in its name, "
            f"which txcommit's Python client for the {self.declaration.name} adapter (obstore) "
            "cannot address. Spark with the txcommit plugin reads it: read the table through "
            "Spark, or copy it to a path without control characters",
            url=printable(what),
        )

    def _obstore_failure(self, action: str, key: str, cause: BaseException) -> StoreError:
        """:meth:`_failure`, unless a listing met a key obstore refused for a control character
        in its name (then that key is named, not the endpoint)."""
        refused = _REFUSED_KEY.search(str(cause))
        if refused is not None:
            control = ascii_control(refused.group(1)) or "?"
            return self._unaddressable(
                f"the key {refused.group(1)} listed below {self.url_for(key)}", control
            )
        return self._failure(action, key, cause)

    @abc.abstractmethod
    def _obstore_client(self, create: bool = False) -> Any:
        """The obstore client on the root; None when the root does not exist and ``create``
        is false (nothing is there to read)."""

    @abc.abstractmethod
    def _failure(self, action: str, key: str, cause: BaseException) -> StoreError:
        """The error of a failed request (``action`` of ``key``), saying what to do."""

    def _root_missing(self, action: str, error: FileNotFoundError) -> bool:
        """Whether a not-found ``error`` of ``action`` is about the bucket or container rather
        than the key (then it is raised, not taken as a missing key)."""
        return False

    def _conflict(self, key: str) -> AlreadyExistsError:
        return self.conflict(key, self.refusal)

    def create_exclusive(self, key: str, data: bytes) -> None:
        self.check_key(key)
        # obstore resends a request whose answer it lost; the resend is then refused by the
        # object the first attempt made, which the id tells from another writer's.
        create_id = str(uuid.uuid4())
        tagged = {self.create_id_key: create_id}
        for attempt in range(self.conflict_retries + 1):
            self.requests.add("PUT")
            try:
                # mode="create": a single PUT with If-None-Match: * whatever the size.
                obstore.put(
                    self._obstore_client(create=True), key, data, mode="create", attributes=tagged
                )
                return
            except obstore.exceptions.AlreadyExistsError:
                break
            except (OSError, obstore.exceptions.BaseError) as e:
                if "409 Conflict" in str(e) and attempt < self.conflict_retries:
                    time.sleep(0.05 * 2**attempt)
                    continue
                raise self._failure("create", key, e) from None
        self.settle_refused_create(key, create_id, self.refusal, lambda: self._create_id_of(key))

    def _create_id_of(self, key: str) -> str | None:
        """The create id the object at ``key`` carries (one HEAD); None without one or it."""

        def head(store: Any) -> str | None:
            found = obstore.get(store, key, options={"head": True}).attributes
            return found.get(self.create_id_key)

        return self._keyed("HEAD", "read back", key, head, None)

    def _missing(self, action: str, key: str, error: FileNotFoundError) -> None:
        if self._root_missing(action, error):
            raise self._failure(action, key, error) from None

    def _keyed(
        self, verb: str, action: str, key: str, call: Callable[[Any], _T], missing: _T
    ) -> _T:
        """One request (``verb``, counted) on ``key``: ``call`` on the obstore client, or
        ``missing`` when the root or the key is not there; any other error is a StoreError
        naming ``action``."""
        self.check_key(key)
        store = self._obstore_client()
        self.requests.add(verb)
        if store is None:
            return missing
        try:
            return call(store)
        except FileNotFoundError as e:
            self._missing(action, key, e)
            return missing
        except (OSError, obstore.exceptions.BaseError) as e:
            raise self._failure(action, key, e) from None

    def read(self, key: str) -> bytes | None:
        def get(store: Any) -> bytes | None:
            return bytes(obstore.get(store, key).bytes())

        return self._keyed("GET", "read", key, get, None)

    def exists(self, key: str) -> bool:
        def head(store: Any) -> bool:
            obstore.head(store, key)
            return True

        return self._keyed("HEAD", "check", key, head, False)

    def delete(self, key: str) -> bool:
        def delete(store: Any) -> bool:
            obstore.delete(store, key)
            return True

        return self._keyed("DELETE", "delete", key, delete, False)


class MultipartStore(Store):
    """A store of a ``multipart-complete`` adapter: data files are uploaded as multipart
    uploads that become visible only when completed (at job commit), so no listing or read
    ever shows in-flight data, and an aborted job aborts its uploads.

    Until ``complete_multipart``, an upload's key is invisible to ``list``, ``read`` and
    ``exists``; after it, the whole object is visible at once (contract points 4 and 7).
    ``abort_multipart`` removes the upload and its parts, and it no longer appears in
    ``list_multipart_uploads``.
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
    "ObstoreStore",
    "MultipartUpload",
    "RequestCounter",
    "Secret",
    "Store",
    "StoreFile",
    "UploadedPart",
    "declared",
]
