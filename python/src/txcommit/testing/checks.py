"""The Level 1 checks: the store primitive an adapter declares, tested against the live store.

Each check is a :class:`Check`: a name, the capability it certifies (read from the adapter's
declaration: ``applies`` says whether the declaration promises it), and a function that
either returns (pass) or raises :class:`CheckFailed` with a plain-words explanation that
names the declared capability and what the store did instead. A store is never certified for
a capability its adapter does not declare: such a check is reported "not declared" and not run.

Every key a check writes is relative to the store's root, below the check's own directory
(``<check name>/...``), and is recorded in :attr:`CheckContext.written` for the cleanup.
"""

from __future__ import annotations

import functools
import os
import posixpath
import threading
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from txcommit.adapters.base import MultipartStore, MultipartUpload, Store, UploadedPart
from txcommit.adapters.declarations import AdapterDeclaration
from txcommit.errors import AlreadyExistsError, StoreError, TxCommitError
from txcommit.testing.vectors import unsafe_paths

MIB = 1024 * 1024
#: Every part of a multipart upload but the last must be at least this big (S3's minimum).
PART_SIZE = 5 * MIB


class CheckFailed(Exception):
    """A declared capability does not hold; the message says so in plain words."""


@dataclass
class CheckContext:
    """What a check works with: the store, the run's settings, and what it wrote."""

    store: Store
    writers: int = 16
    large_bytes: int = 12 * MIB
    written: set[str] = field(default_factory=set)
    uploads: list[MultipartUpload] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def declaration(self) -> AdapterDeclaration:
        return self.store.declaration

    @property
    def primitive(self) -> str:
        return self.declaration.primitive

    def key(self, check: str, name: str) -> str:
        """A fresh key below ``check``'s directory, recorded for the cleanup."""
        key = f"{check}/{uuid.uuid4().hex[:12]}-{name}"
        with self._lock:
            self.written.add(key)
        return key

    def directory(self, check: str, name: str) -> str:
        """A fresh directory below ``check``'s (not recorded: its files are, by :meth:`below`)."""
        return f"{check}/{uuid.uuid4().hex[:12]}-{name}"

    def below(self, directory: str, name: str) -> str:
        """A key ``name`` below ``directory`` (from :meth:`key`), recorded for the cleanup."""
        key = f"{directory}/{name}"
        with self._lock:
            self.written.add(key)
        return key

    @property
    def adapter(self) -> str:
        """``adapter '<name>'``, as explanations start."""
        return f"adapter '{self.declaration.name}'"

    def declares(self, what: str) -> str:
        """``declares conditional-put`` / ``declares rename`` ... for explanations."""
        return f"{self.adapter} declares {what}"


@dataclass(frozen=True)
class Check:
    """One Level 1 check."""

    name: str
    #: What the check certifies, as shown in the table (e.g. ``conditional-put``).
    capability: Callable[[AdapterDeclaration], str]
    #: Whether the declaration promises the capability (else: "not declared", not run).
    applies: Callable[[AdapterDeclaration], bool]
    run: Callable[[CheckContext], None]
    #: What a pass proves, in one sentence (docs and ``--help``).
    proves: str


def _exclusive_capability(d: AdapterDeclaration) -> str:
    return d.primitive


def _exclusive(d: AdapterDeclaration) -> bool:
    return d.exclusive_create


def _consistent(d: AdapterDeclaration) -> bool:
    return d.listing == "consistent"


def _multipart(d: AdapterDeclaration) -> bool:
    return d.primitive == "multipart-complete"


def _conditional_put(d: AdapterDeclaration) -> bool:
    # s3-multipart creates its commit records with If-None-Match: * too.
    return d.primitive in ("conditional-put", "multipart-complete")


def _data(size: int, tag: str) -> bytes:
    """Random bytes (a mix-up of parts or a lost part changes them) with a readable tag."""
    head = tag.encode()
    return head + os.urandom(max(0, size - len(head)))


def _show(data: bytes | None) -> str:
    if data is None:
        return "nothing"
    return f"{len(data)} bytes starting {data[:24]!r}"


# --- exclusive create -----------------------------------------------------------------------


def exclusive_create_race(ctx: CheckContext) -> None:
    store, n = ctx.store, ctx.writers
    key = ctx.key("exclusive-create-race", "record.json")
    start = threading.Barrier(n)
    outcomes: dict[int, BaseException | None] = {}

    def create(i: int) -> None:
        try:
            start.wait(60)
            store.create_exclusive(key, f"writer-{i}".encode())
            outcomes[i] = None
        except BaseException as e:
            outcomes[i] = e

    threads = [threading.Thread(target=create, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if len(outcomes) < n:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but {n - len(outcomes)} of {n} concurrent "
            f"exclusive creates of {store.url_for(key)} did not finish within 120 s"
        )
    winners = sorted(i for i, e in outcomes.items() if e is None)
    others = [
        e for e in outcomes.values() if e is not None and not isinstance(e, AlreadyExistsError)
    ]
    if len(winners) > 1:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but two exclusive creates of the same key both "
            f"succeeded: {len(winners)} of {n} concurrent writers of {store.url_for(key)} were "
            "told they won, so a commit record could be overwritten"
        )
    if others:
        first = str(others[0]).splitlines()[0] if str(others[0]) else type(others[0]).__name__
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but {len(others)} of {n} concurrent exclusive "
            f"creates of {store.url_for(key)} failed with an error other than 'already exists' "
            f"({type(others[0]).__name__}: {first})"
        )
    if not winners:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but none of {n} concurrent exclusive creates of "
            f"{store.url_for(key)} succeeded: every one was told the key already existed"
        )
    content = store.read(key)
    expected = f"writer-{winners[0]}".encode()
    if content != expected:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but after a race of {n} exclusive creates the key "
            f"holds {_show(content)}, not the winner's content {expected!r}"
        )
    name = posixpath.basename(key)
    left = [f.key for f in store.list("exclusive-create-race") if name in f.key and f.key != key]
    if left:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but a race of {n} exclusive creates of "
            f"{store.url_for(key)} left {len(left)} other file(s) behind, e.g. "
            f"{store.url_for(left[0])}"
        )


def no_overwrite(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("no-overwrite", "record.json")
    store.create_exclusive(key, b"first")
    try:
        store.create_exclusive(key, b"second")
    except AlreadyExistsError:
        pass
    else:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but two exclusive creates of the same key both "
            f"succeeded: a second create of {store.url_for(key)}, made after the first had "
            "completed, was not refused"
        )
    content = store.read(key)
    if content != b"first":
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but a refused exclusive create changed "
            f"{store.url_for(key)}: it holds {_show(content)} instead of b'first'"
        )


def atomic_visibility(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("atomic-visibility", "record.bin")
    data = _data(ctx.large_bytes, "atomic-visibility:")
    done = threading.Event()
    seen: list[bytes | None] = []
    errors: list[BaseException] = []
    bad: list[bytes] = []

    def reader() -> None:
        while True:
            finished = done.is_set()
            try:
                got = store.read(key)
            except BaseException as e:
                errors.append(e)
                return
            seen.append(None if got is None else b"")
            if got is not None and got != data:
                bad.append(got)
                return
            if finished:
                return

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        store.create_exclusive(key, data)
    finally:
        done.set()
        thread.join(120)
    if bad:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)} (atomic create), but a reader of "
            f"{store.url_for(key)} saw a partial object: {len(bad[0])} of {len(data)} bytes "
            "(or different bytes) while the create was running"
        )
    if errors:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)} (atomic create), but reading {store.url_for(key)} "
            f"while it was being created failed: {str(errors[0]).splitlines()[0]}"
        )
    if not seen or seen[-1] is None:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)} (atomic create), but after the create of "
            f"{store.url_for(key)} returned a reader still saw no object"
        )


# --- listing and reads ----------------------------------------------------------------------


def list_after_write(ctx: CheckContext) -> None:
    store = ctx.store
    expected: dict[str, int] = {}
    for i in range(5):
        key = ctx.key("list-after-write", f"f{i}")
        data = _data(100 + i, f"f{i}")
        if i % 2:
            store.write_replacing(key, data)
        else:
            store.create_exclusive(key, data)
        expected[key] = len(data)
        listed = {f.key: f.size for f in store.list("list-after-write")}
        missing = [k for k in expected if k not in listed]
        if missing:
            raise CheckFailed(
                f"{ctx.declares('consistent listing')}, but a listing right after writing "
                f"{store.url_for(missing[0])} did not show it ({len(missing)} of {len(expected)} "
                "completed writes missing)"
            )
        wrong = [k for k, size in expected.items() if listed[k] != size]
        if wrong:
            raise CheckFailed(
                f"{ctx.declares('consistent listing')}, but the listing gives "
                f"{store.url_for(wrong[0])} {listed[wrong[0]]} bytes; {expected[wrong[0]]} were "
                "written"
            )


def list_after_delete(ctx: CheckContext) -> None:
    store = ctx.store
    keys = [ctx.key("list-after-delete", f"f{i}") for i in range(4)]
    for k in keys:
        store.create_exclusive(k, b"x")
    for i, k in enumerate(keys):
        if not store.delete(k):
            raise CheckFailed(
                f"{ctx.declares('consistent listing')}, but deleting {store.url_for(k)} right "
                "after creating it reported that it did not exist"
            )
        listed = {f.key for f in store.list("list-after-delete")}
        if k in listed:
            raise CheckFailed(
                f"{ctx.declares('consistent listing')}, but a listing right after deleting "
                f"{store.url_for(k)} still showed it"
            )
        gone = [other for other in keys[: i + 1] if other in listed]
        kept = [other for other in keys[i + 1 :] if other not in listed]
        if gone or kept:
            raise CheckFailed(
                f"{ctx.declares('consistent listing')}, but after deleting {i + 1} of "
                f"{len(keys)} files the listing was wrong ({len(gone)} deleted files shown, "
                f"{len(kept)} remaining files missing)"
            )


def read_after_delete(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("read-after-delete", "f")
    store.create_exclusive(key, b"to be deleted")
    store.delete(key)
    content = store.read(key)
    if content is not None:
        raise CheckFailed(
            f"{ctx.declares('consistent reads')}, but reading {store.url_for(key)} right after "
            f"deleting it returned {_show(content)}"
        )
    if store.exists(key):
        raise CheckFailed(
            f"{ctx.declares('consistent reads')}, but {store.url_for(key)} still exists right "
            "after it was deleted"
        )
    if store.delete(key):
        raise CheckFailed(
            f"{ctx.declares('consistent reads')}, but deleting {store.url_for(key)} a second "
            "time reported that it still existed"
        )


def large_object(ctx: CheckContext) -> None:
    store = ctx.store
    size = max(ctx.large_bytes, PART_SIZE + 1)
    for how in ("write_replacing", "create_exclusive"):
        key = ctx.key("large-object", f"{how}.bin")
        data = _data(size, f"large-object:{how}:")
        getattr(store, how)(key, data)
        content = store.read(key)
        if content != data:
            raise CheckFailed(
                f"{ctx.adapter} must store whole objects, but a "
                f"{size // MIB} MiB object written with {how} to {store.url_for(key)} (across "
                f"{PART_SIZE // MIB} MiB part boundaries) read back as {_show(content)}"
            )
        sizes = {f.key: f.size for f in store.list("large-object")}
        if sizes.get(key) != size:
            raise CheckFailed(
                f"{ctx.adapter} must store whole objects, but the listing "
                f"gives {store.url_for(key)} {sizes.get(key)} bytes; {size} were written"
            )


def refused_create_error(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("refused-create-error", "record.json")
    store.create_exclusive(key, b"1")
    try:
        store.create_exclusive(key, b"2")
    except AlreadyExistsError as e:
        error: AlreadyExistsError = e
    else:
        raise CheckFailed(
            f"{ctx.declares(ctx.primitive)}, but a second exclusive create of "
            f"{store.url_for(key)} was not refused with 'already exists'"
        )
    url = store.url_for(key)
    text = "".join(traceback.format_exception(error))
    if error.url != url or url not in str(error) or "not overwritten" not in str(error):
        raise CheckFailed(
            f"{ctx.adapter} must name the key an 'already exists' error is "
            f"about and say it was not overwritten, but refusing {url} gave url={error.url!r} "
            f"and the message {str(error)!r}"
        )
    if "During handling" in text or "direct cause" in text:
        raise CheckFailed(
            f"{ctx.adapter} must raise errors without the chained "
            f"tracebacks of the SDK, but the 'already exists' error for {url} carries one"
        )


def write_replacing(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("write-replacing", "_SUCCESS")
    for data in (b"one", b"second version"):
        store.write_replacing(key, data)
        content = store.read(key)
        sizes = [f.size for f in store.list("write-replacing") if f.key == key]
        if content != data or sizes != [len(data)]:
            raise CheckFailed(
                f"{ctx.adapter} must create or replace a file with "
                f"write_replacing, but after writing {data!r} to {store.url_for(key)} it reads "
                f"back as {_show(content)} and lists with sizes {sizes}"
            )


def missing_key(ctx: CheckContext) -> None:
    store = ctx.store
    directory = ctx.directory("missing-key", "never-written")
    key = f"{directory}/record.json"
    answers = {
        "read": store.read(key),
        "exists": store.exists(key),
        "list of its directory": store.list(directory),
        "delete": store.delete(key),
    }
    expected: dict[str, object] = {
        "read": None,
        "exists": False,
        "list of its directory": [],
        "delete": False,
    }
    wrong = {k: v for k, v in answers.items() if v != expected[k]}
    if wrong:
        what = ", ".join(f"{k} gave {v!r} (not {expected[k]!r})" for k, v in wrong.items())
        raise CheckFailed(
            f"{ctx.adapter} must treat a missing key as absent without "
            f"an error, but for {store.url_for(key)}: {what}"
        )


def list_one_level(ctx: CheckContext) -> None:
    store = ctx.store
    d = ctx.directory("list-one-level", "d")
    store.write_replacing(ctx.below(d, "a"), b"one")
    store.create_exclusive(ctx.below(d, "b"), b"bb")
    store.create_exclusive(ctx.below(d, "sub/c"), b"ccc")
    got = {
        d: [(f.key, f.size) for f in store.list(d)],
        f"{d}/": [(f.key, f.size) for f in store.list(f"{d}/")],
        f"{d}/sub": [(f.key, f.size) for f in store.list(f"{d}/sub")],
    }
    direct = [(f"{d}/a", 3), (f"{d}/b", 2)]
    expected = {d: direct, f"{d}/": direct, f"{d}/sub": [(f"{d}/sub/c", 3)]}
    for where, listed in got.items():
        if listed != expected[where]:
            raise CheckFailed(
                f"{ctx.adapter} must list the files directly under a "
                f"directory, sorted, with their sizes, but listing {store.url_for(where)} gave "
                f"{listed} instead of {expected[where]}"
            )


def unsafe_keys(ctx: CheckContext) -> None:
    """Keys a store must refuse, because they would leave its root or are not canonical."""
    store = ctx.store
    for bad in unsafe_paths():  # the golden vectors: the cases the JVM refuses too
        for op, call in (
            ("create_exclusive", functools.partial(store.create_exclusive, bad, b"x")),
            ("read", functools.partial(store.read, bad)),
        ):
            try:
                call()
            except StoreError as e:
                if op == "create_exclusive" and (
                    repr(bad) not in str(e) or store.root_url not in str(e)
                ):
                    raise CheckFailed(
                        f"{ctx.adapter} must name a refused key and the "
                        f"store's root, but refusing {bad!r} said {str(e)!r}"
                    ) from None
            else:
                raise CheckFailed(
                    f"{ctx.adapter} must refuse keys outside its root, but "
                    f"{op}({bad!r}) on {store.root_url} was accepted"
                )


def requests_counted(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("requests-counted", "c.json")
    before = store.requests.total
    store.create_exclusive(key, b"c")
    store.list("requests-counted")
    store.read(key)
    counted = store.requests.total - before
    ops = set(store.requests.snapshot())
    if counted < 3 or not {"LIST", "GET"} <= ops:
        raise CheckFailed(
            f"{ctx.adapter} must count every request it sends, but a "
            f"create, a list and a read of {store.url_for(key)} counted {counted} request(s) "
            f"(operations seen so far: {sorted(ops)})"
        )


def fsspec_reader(ctx: CheckContext) -> None:
    store = ctx.store
    key = ctx.key("fsspec-reader", "part-00000.csv")
    store.write_replacing(key, b"a,b\n1,2\n")
    fs, root = store.fsspec()
    try:
        with fs.open(f"{root}/{key}", "rb") as f:
            content = f.read()
    except Exception as e:
        content = None
        why = f"opening it failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    else:
        why = f"it read {_show(content)}"
    if content != b"a,b\n1,2\n":
        raise CheckFailed(
            f"{ctx.adapter} must give readers an fsspec file system on its "
            f"store, but reading {store.url_for(key)} through it after the store wrote it: {why}"
        )


def declared_primitive(ctx: CheckContext) -> None:
    store, d = ctx.store, ctx.declaration
    multipart = isinstance(store, MultipartStore)
    if store.primitive != d.primitive or multipart != (d.primitive == "multipart-complete"):
        raise CheckFailed(
            f"adapter '{d.name}' declares primitive {d.primitive}, but its store "
            f"({type(store).__name__}) uses {store.primitive!r}"
            f"{' with' if multipart else ' without'} multipart operations"
        )


# --- multipart ------------------------------------------------------------------------------


def _multipart_store(ctx: CheckContext) -> MultipartStore:
    if not isinstance(ctx.store, MultipartStore):
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but its store "
            f"({type(ctx.store).__name__}) has no multipart operations "
            "(start/upload/complete/abort)"
        )
    return ctx.store


def _upload(
    ctx: CheckContext, check: str, sizes: list[int]
) -> tuple[MultipartUpload, bytes, list[UploadedPart]]:
    """An upload with one part per size, uploaded last part first (any order is allowed)."""
    store = _multipart_store(ctx)
    key = ctx.key(check, "data.parquet")
    upload = store.start_multipart(key)
    ctx.uploads.append(upload)
    chunks = [_data(size, f"{check}:part{i + 1}:") for i, size in enumerate(sizes)]
    parts = [store.upload_part(upload, i + 1, chunks[i]) for i in reversed(range(len(chunks)))]
    return upload, b"".join(chunks), parts


def _visible(store: Store, key: str, directory: str) -> list[str]:
    how: list[str] = []
    if store.read(key) is not None:
        how.append("read")
    if store.exists(key):
        how.append("exists")
    if any(f.key == key for f in store.list(directory)):
        how.append("list")
    return how


def multipart_invisible_until_complete(ctx: CheckContext) -> None:
    name = "multipart-invisible-until-complete"
    upload, _, _ = _upload(ctx, name, [PART_SIZE, 1024])
    seen = _visible(ctx.store, upload.key, name)
    if seen:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but an upload to "
            f"{ctx.store.url_for(upload.key)} with all its parts uploaded and not completed is "
            f"already visible ({', '.join(seen)}), so readers could see in-flight data"
        )
    store = _multipart_store(ctx)
    pending = {
        where: [u.upload_id for u in store.list_multipart_uploads(where)]
        for where in (name, f"{name}-elsewhere")
    }
    if upload.upload_id not in pending[name] or pending[f"{name}-elsewhere"]:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but listing the pending uploads below "
            f"{store.url_for(name)} and {store.url_for(name + '-elsewhere')} gave {pending}; "
            f"only the first should hold the upload to {store.url_for(upload.key)}"
        )
    store.abort_multipart(upload)


def multipart_complete_visible(ctx: CheckContext) -> None:
    name = "multipart-complete-visible"
    store = _multipart_store(ctx)
    upload, data, parts = _upload(ctx, name, [PART_SIZE, PART_SIZE // 2])
    store.complete_multipart(upload, parts)
    content = store.read(upload.key)
    if content != data:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but a completed 2-part upload to "
            f"{store.url_for(upload.key)} reads back as {_show(content)}, not the "
            f"{len(data)} bytes uploaded"
        )
    sizes = {f.key: f.size for f in store.list(name)}
    if sizes.get(upload.key) != len(data):
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but right after completing the upload the "
            f"listing gives {store.url_for(upload.key)} {sizes.get(upload.key)} bytes, not "
            f"{len(data)}"
        )
    if any(u.upload_id == upload.upload_id for u in store.list_multipart_uploads(name)):
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but the completed upload to "
            f"{store.url_for(upload.key)} is still listed as pending"
        )


def multipart_gone_after_abort(ctx: CheckContext) -> None:
    name = "multipart-gone-after-abort"
    store = _multipart_store(ctx)
    upload, _, parts = _upload(ctx, name, [1024])
    store.abort_multipart(upload)
    pending = [u for u in store.list_multipart_uploads(name) if u.upload_id == upload.upload_id]
    if pending:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but an aborted upload to "
            f"{store.url_for(upload.key)} is still listed as pending, so its parts are kept"
        )
    try:
        store.abort_multipart(upload)
    except TxCommitError as e:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but aborting the upload to "
            f"{store.url_for(upload.key)} a second time failed: {str(e).splitlines()[0]}"
        ) from None
    try:
        store.complete_multipart(upload, parts)
    except TxCommitError as e:
        if store.url_for(upload.key) not in str(e):
            raise CheckFailed(
                f"{ctx.declares('multipart-complete')}, but the error completing an aborted "
                f"upload does not name its key {store.url_for(upload.key)}: {str(e)!r}"
            ) from None
    else:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but an upload to "
            f"{store.url_for(upload.key)} could still be completed after it was aborted"
        )
    seen = _visible(store, upload.key, name)
    if seen:
        raise CheckFailed(
            f"{ctx.declares('multipart-complete')}, but the key of an aborted upload, "
            f"{store.url_for(upload.key)}, is visible ({', '.join(seen)})"
        )


# --- proof before trust ---------------------------------------------------------------------


def conditional_put_probe(ctx: CheckContext) -> None:
    try:
        ctx.store.check_ready()
    except TxCommitError as e:
        raise CheckFailed(
            f"{ctx.declares('conditional-put')}, but the store's own readiness probe "
            f"(check_ready) refused it: {e}"
        ) from None


CHECKS: tuple[Check, ...] = (
    Check(
        "exclusive-create-race",
        _exclusive_capability,
        _exclusive,
        exclusive_create_race,
        "of N concurrent exclusive creates of one key exactly one succeeds, every other gets "
        "'already exists', and the key holds the winner's content",
    ),
    Check(
        "no-overwrite",
        _exclusive_capability,
        _exclusive,
        no_overwrite,
        "an exclusive create of an existing key is refused and leaves its content unchanged",
    ),
    Check(
        "atomic-visibility",
        _exclusive_capability,
        _exclusive,
        atomic_visibility,
        "a reader polling a key while a large object is created there sees nothing or the "
        "whole object, never a part",
    ),
    Check(
        "refused-create-error",
        _exclusive_capability,
        _exclusive,
        refused_create_error,
        "a refused exclusive create raises 'already exists' naming the key's URL, says it was "
        "not overwritten, and carries no chained traceback",
    ),
    Check(
        "list-after-write",
        lambda d: f"listing: {d.listing}",
        _consistent,
        list_after_write,
        "a listing right after a create or replace shows the file, with its size",
    ),
    Check(
        "list-after-delete",
        lambda d: f"listing: {d.listing}",
        _consistent,
        list_after_delete,
        "a listing right after a delete no longer shows the file, and still shows the others",
    ),
    Check(
        "read-after-delete",
        lambda d: f"listing: {d.listing}",
        _consistent,
        read_after_delete,
        "a read or existence check right after a delete finds nothing",
    ),
    Check(
        "large-object",
        lambda d: "whole objects",
        lambda d: True,
        large_object,
        "an object larger than a part (written replacing and exclusively) reads back "
        "byte for byte and lists with its size",
    ),
    Check(
        "write-replacing",
        lambda d: "replacing writes",
        lambda d: True,
        write_replacing,
        "write_replacing creates a file, then replaces it whole; reads and listings show the "
        "latest content and size",
    ),
    Check(
        "missing-key",
        lambda d: "absent keys",
        lambda d: True,
        missing_key,
        "a missing key reads as nothing, does not exist, lists as an empty directory, and "
        "deleting it is no error",
    ),
    Check(
        "list-one-level",
        lambda d: "listing one level",
        lambda d: True,
        list_one_level,
        "a listing shows the files directly under a directory (with or without a trailing /), "
        "sorted, with their sizes, and nothing from below",
    ),
    Check(
        "unsafe-keys",
        lambda d: "keys inside the root",
        lambda d: True,
        unsafe_keys,
        "keys that would leave the root or are not canonical are refused, naming the key and "
        "the root",
    ),
    Check(
        "requests-counted",
        lambda d: "request counts",
        lambda d: True,
        requests_counted,
        "every request the adapter sends is counted, by operation",
    ),
    Check(
        "fsspec-reader",
        lambda d: "fsspec readers",
        lambda d: True,
        fsspec_reader,
        "a reader through the adapter's fsspec file system reads what the store wrote",
    ),
    Check(
        "declared-primitive",
        lambda d: d.primitive,
        lambda d: True,
        declared_primitive,
        "the store uses the primitive its declaration names, with multipart operations exactly "
        "when it declares multipart-complete",
    ),
    Check(
        "multipart-invisible-until-complete",
        lambda d: "multipart-complete",
        _multipart,
        multipart_invisible_until_complete,
        "an upload whose parts are all uploaded is invisible to read, exists and list until "
        "completed",
    ),
    Check(
        "multipart-complete-visible",
        lambda d: "multipart-complete",
        _multipart,
        multipart_complete_visible,
        "a completed multi-part upload is visible whole, at once, with its size",
    ),
    Check(
        "multipart-gone-after-abort",
        lambda d: "multipart-complete",
        _multipart,
        multipart_gone_after_abort,
        "an aborted upload is no longer pending, cannot be completed, and its key stays absent",
    ),
    Check(
        "conditional-put-probe",
        lambda d: "conditional-put",
        _conditional_put,
        conditional_put_probe,
        "the adapter's own readiness probe (check_ready, as run before a job's first write) "
        "accepts the store",
    ),
)


__all__ = ["CHECKS", "MIB", "PART_SIZE", "Check", "CheckContext", "CheckFailed"]
