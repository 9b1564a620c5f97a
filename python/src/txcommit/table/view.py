"""The committed view of a txcommit table, outside Spark: which files a reader may see, and the
table's transaction history. The readers (:mod:`txcommit.readers`), the fsspec file system
(:mod:`txcommit.readers.fsspec`) and the ``txcommit ls``/``txcommit log`` commands all build on it.

The reader rule (docs/protocol.md, "Reading"; the JVM's read filter applies the same): let R
be the committed records of the table (``_txcommit/commits/*.json`` and
``_txcommit/replace/*.json``). A data file F (relative to the table) is visible iff

* (a) its name carries a transaction id T and T is committed and F is in T's ``added``, or
  its name carries no transaction id (data written without txcommit, I7); and
* (b) F is not net-removed: the ``removed`` of the ``replace/`` records folded in sequence
  order, each record's ``restored`` cancelling the removals before it of the files it names
  (:func:`~txcommit.table.records.fold_removals`, the JVM's NetRemovals; a txn's own record is
  its highest-sequence ``replace/`` record, else its ``commits/`` one). A file of T that a
  restore re-added is visible by (a) too, whatever T's file list says (I31).

A checkpoint (``_txcommit/checkpoints/<n>.json``, I20) changes what this costs, never what it
shows. The view uses C, the newest checkpoint that decodes and whose ``through`` is within the
``replace/`` records listed (one that does not decode is skipped with a warning); then F of T is
hidden if it is net-removed, folding C's ``removed`` then the ``replace/`` records after
``through``; else visible without a txn id or when a restore after ``through`` re-added it;
else judged by T's newest ``replace/`` record after ``through``; else, T covered by C, by C's
list for T alone; else by T's ``commits/`` record (an append). So a view reads no record C
covers, unless the history is asked for (``with_markers``, :meth:`TableView.history`).

Data files are the paths Spark 4.3 reads (:func:`is_data_path`, the cases of
conformance/vectors/hidden-names.json): no segment starting with ``_`` or ``.`` except
``_col=value`` partition directories, no ``*._COPYING_``, no Parquet summary file; so the log,
``_SUCCESS`` and hidden temporary files are never data.

A view may be opened at any directory, and judges each file as the JVM's filter does,
whatever the root: by the nearest log at or above the file's directory (a table, a partition
directory of one, a directory holding tables, a table inside a table); a file whose txn that
log has no record of is judged by the next log above (a tree nested by a version without the
one-log-per-path check), a file without a txn id by the nearest log alone; a file below no log
is not in a txcommit table and is shown (I7). The cases, with their roots, are
conformance/vectors/tables.json.

On the local file system the tree is listed through symbolic links, as Spark lists it, and a
read is refused (:class:`~txcommit.errors.UnsupportedReadError`, as the JVM's read) where a
link leads its root, or a directory of its tree, inside a table at another place than the path
as written names (docs/protocol.md, I18; the cases are conformance/vectors/links.json).

A view is one snapshot: every log it uses is listed before the data it judges (I16), so a
transaction of a log listing has all its files in the data listing, and one that commits
meanwhile is left out whole: first the logs above the root and the root's own, then the root's
tree (one flat listing on S3, 1000 keys a request); where that listing finds logs inside the
tree, they are listed and the directories holding them listed again (a log that appears only
then committed nothing this view shows). Every record it needs is read once and, because
records and checkpoints are immutable, kept in a process-wide cache keyed by store, key, size,
modification time and ETag (a table deleted and written anew may hold a record of the same key
and size), so a second view of the same table reads only the records committed since. A
log-only table's views that read the same checkpoint and records share its file list (the last
few tables' are kept, :class:`_Plan`).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from txcommit.adapters import LocalStore, Store, open_store
from txcommit.adapters.base import StoreFile
from txcommit.adapters.local import local_path
from txcommit.errors import (
    AccessDeniedError,
    CorruptCheckpointError,
    CorruptCommitRecordError,
    ListingChangedError,
    StoreError,
    TimeTravelError,
    UnsupportedReadError,
)
from txcommit.paths import LOG_DIR_NAME, hidden_name, is_data_path
from txcommit.table.checkpoints import Checkpoint, decode_checkpoint
from txcommit.table.groups import Decisions, Participant
from txcommit.table.layout import checkpoint_of_name, sequence_of_record_name, txn_of_record_name
from txcommit.table.names import txn_of, txn_started_at
from txcommit.table.properties import TableProperties, decode_properties
from txcommit.table.records import (
    CommitRecord,
    GroupRef,
    RemovedFile,
    decode_record,
    fold_removals,
    quoted_paths,
)
from txcommit.table.versions import AsOf, AsOfTxn, at_time, of_txn, order, parse_as_of, whole

#: Parallel reads of records and markers (S3 answers each GET in a round trip).
READ_THREADS = 16
#: Records kept in the process-wide cache before it is emptied and refilled.
RECORD_CACHE_LIMIT = 200_000
#: File entries of decoded checkpoints kept in the process-wide cache (as the JVM's).
CHECKPOINT_CACHE_FILES = 2_000_000
#: Checkpoints tried, newest first, before a view reads records only (as the JVM's).
CHECKPOINT_TRIES = 8
#: Log-only file lists kept in the process-wide plan cache: at most this many (table, root)
#: pairs, and at most this many files in all (the JVM bounds its by the checkpoint cache's).
PLAN_CACHE_TABLES = 4
PLAN_CACHE_FILES = 2_000_000

_LOG_PREFIX = LOG_DIR_NAME + "/"
# The logger keeps the name docs/readers.md documents.
_log = logging.getLogger("txcommit.view")
# (store root, key, size, mtime, ETag): a table deleted and written anew under the same path
# may hold a record of the same key and size, which must not be taken for its predecessor's.
_CacheKey = tuple[str, str, int, int | None, str | None]
# A record to read: (file, txn, None) in commits/, (file, None, sequence) in replace/.
_Item = tuple[StoreFile, str | None, int | None]
# A log's unread markers by kind (pending, aborted, rows): (key, txn) each.
_Markers = dict[str, list[tuple[str, str]]]
_records: dict[_CacheKey, CommitRecord] = {}
_records_lock = threading.Lock()
_checkpoints: dict[_CacheKey, Checkpoint] = {}
_checkpoint_files = 0
# A corrupt checkpoint is skipped on every view but reported once per file.
_warned_checkpoints: set[_CacheKey] = set()


@dataclass
class _Plan:
    """The files of a log-only table (I32) a view planned, and what they are a function of.

    ``sources``: the log's checkpoint, each append's record (by txn) and each ``replace/`` record
    (by sequence), the very objects the view read. They come from the process-wide caches,
    one object per (store, key, size, mtime, ETag), so the same objects are the same records:
    the same checkpoint number, the same committed txns (a multi-table transaction's prepared
    record counts only once its decision committed it, so a decision appearing makes another
    tuple), the same ``replace/`` sequences, and no log deleted and written again under the same
    names. Records read anew (their cache emptied, or the object changed) are other objects: a
    miss, never a stale hit. ``files``/``visible``: the view's data files and what it shows;
    ``datasets``: the reader's last ``pyarrow.dataset`` of them, with the arguments it was built
    from (:func:`txcommit.dataset`; a Dataset is immutable, and the data files of a committed
    transaction are never rewritten)."""

    sources: tuple[object, ...]
    files: tuple[TableFile, ...]
    visible: tuple[TableFile, ...]
    datasets: list[tuple[tuple[Any, ...], Any]] = field(default_factory=list)

    def holds(self, sources: tuple[object, ...]) -> bool:
        return len(sources) == len(self.sources) and all(
            a is b for a, b in zip(sources, self.sources, strict=True)
        )


# The last plan of each (table, root, lead, as_of, ignore_corrupt), least recently used first.
# Bounded by PLAN_CACHE_TABLES and PLAN_CACHE_FILES, so a process reading many tables keeps a
# few lists, not one per table; the entry holds its sources, so their identities stay theirs.
_plans: dict[tuple[str, str, str, str | None, bool], _Plan] = {}
_plans_lock = threading.Lock()
#: How many log-only file lists were built (not served from :data:`_plans`): for tests.
plans_built = 0


def clear_caches() -> None:
    """Forgets every record, checkpoint and plan read so far, as a new process would."""
    global _checkpoint_files
    with _records_lock:
        _records.clear()
        _checkpoints.clear()
        _checkpoint_files = 0
    with _plans_lock:
        _plans.clear()


def _planned(
    key: tuple[str, str, str, str | None, bool],
    log: _Log,
    build: Callable[[], tuple[list[TableFile], list[TableFile]]],
) -> _Plan:
    """The plan of ``log`` under ``key``: the cached one if it came from the same sources,
    else ``build()``'s (the view's files and the visible ones), cached."""
    global plans_built
    sources: tuple[object, ...] = (
        log.checkpoint,
        *(log.appends[t] for t in sorted(log.appends)),
        *log.replacements,
    )
    with _plans_lock:
        found = _plans.pop(key, None)
        if found is not None and found.holds(sources):
            _plans[key] = found  # most recently used last
            return found
    files, visible = build()
    plan = _Plan(sources, tuple(files), tuple(visible))
    with _plans_lock:
        plans_built += 1
        _plans[key] = plan
        while len(_plans) > PLAN_CACHE_TABLES or (
            len(_plans) > 1 and sum(len(p.files) for p in _plans.values()) > PLAN_CACHE_FILES
        ):
            del _plans[next(iter(_plans))]
    return plan


@dataclass(frozen=True)
class TableFile:
    """A data file of a table: path relative to the table, size in bytes, the transaction id
    its name carries (None for a file written without txcommit) and the store's modification
    time in epoch ms (None where the store gives none)."""

    path: str
    size: int
    txn: str | None
    modified_at: int | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One transaction of a table. ``state`` is committed, pending (started, neither
    committed nor aborted: running, or its driver died) or aborted. ``rows`` is the number of
    rows Spark counted for a committed write (``_txcommit/rows/<txn>.json``, recorded just after
    the commit), None where it counted none (a streaming batch, or a driver that died right
    after the commit point). ``files``/``bytes`` and the removed counts are known for committed
    transactions only."""

    txn: str
    state: str
    started_at: int | None
    committed_at: int | None
    operation: str | None
    write_id: str | None
    files: int | None
    bytes: int | None
    rows: int | None
    removed_files: int | None
    removed_bytes: int | None
    sequence: int | None
    schema: str | None = None
    #: The commit's place in the table's versions (docs/protocol.md, I30) and the time the store
    #: gave its commit point (epoch ms): what ``as_of`` names.
    version: int | None = None
    store_time: int | None = None
    #: The files a restore re-added (docs/protocol.md, I31).
    restored_files: int | None = None
    #: The multi-table transaction of a write of one (docs/protocol.md, I33).
    transaction: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The row with the history's column names (shared with the JVM's history)."""
        return {
            "txn": self.txn,
            "state": self.state,
            "startedAt": self.started_at,
            "committedAt": self.committed_at,
            "operation": self.operation,
            "writeId": self.write_id,
            "files": self.files,
            "bytes": self.bytes,
            "rows": self.rows,
            "removedFiles": self.removed_files,
            "removedBytes": self.removed_bytes,
            "sequence": self.sequence,
            "schema": self.schema,
            "version": self.version,
            "storeTime": self.store_time,
            "restoredFiles": self.restored_files,
            "transaction": self.transaction,
        }


def schema_changes(records: Iterable[CommitRecord]) -> dict[str, str]:
    """The commits that changed the table's schema, with the schema each set: in commit order
    (``committed_at``, then txn), a record's schema when it differs from the one in force before
    it; records without one change nothing (``History.schemaChanges`` on the JVM)."""
    out: dict[str, str] = {}
    current: str | None = None
    for r in sorted(records, key=lambda r: (r.committed_at, r.txn)):
        if r.schema is not None and r.schema != current:
            current = out[r.txn] = r.schema
    return out


class ProgressReport(Protocol):
    """Where a view reports its listing and reads as they go (``txcommit ls --progress`` draws
    them on stderr); ``force`` for a line that must not be skipped as too soon."""

    def __call__(self, message: str, force: bool = False) -> None: ...


def _silent(message: str, force: bool = False) -> None:
    """No report: what a library caller gets."""


@dataclass(frozen=True)
class AsOfListing:
    """What a view of a past snapshot must find in its data listing (docs/protocol.md, I30;
    the JVM's ``AsOfListing``): the files of the snapshot that a later replacing commit removed
    (and no restore re-added), each by path, size and, without a txn id, its modification
    second (I21's identity). They are the only files of the snapshot VACUUM may delete, so a
    listing holding every one of them (below the view's root) shows the snapshot whole, whatever
    VACUUM did before or while the view listed, and whether or not it recorded a horizon.
    ``snapshot`` names the view and the snapshot in errors."""

    snapshot: str
    files: tuple[RemovedFile, ...]

    def verify(self, below: str, listed: Iterable[TableFile]) -> None:
        """Fails naming the files of the snapshot under ``below`` (the view's root relative to
        the table, "" for the table) that ``listed`` (paths relative to the root) lacks."""
        lead = below + "/" if below else ""
        wanted = [f for f in self.files if f.path.startswith(lead)]
        if not wanted:
            return
        by_path: dict[str, list[TableFile]] = {}
        for t in listed:
            by_path.setdefault(lead + t.path, []).append(t)
        gone = [
            w
            for w in wanted
            if not any(w.is_file(t.size, t.modified_at) for t in by_path.get(w.path, ()))
        ]
        if gone:
            raise TimeTravelError(
                f"{self.snapshot} held files that a later replacing commit removed and that are "
                f"no longer on the store as it had them: {quoted_paths(gone)}; it cannot be read "
                "whole (VACUUM deletes such files, one that recorded no horizon too, and a writer "
                "without txcommit may have written another file under one's name)"
            )


@dataclass
class _Log:
    """What a view read of its table's log, shared by the views of the table's directories.

    ``appends``: the ``commits/`` records read that commit by themselves (appends and fences;
    a replacing commit's copy commits nothing). ``replacements``: the ``replace/`` records
    read, in sequence order. ``unread``: the records ``checkpoint`` made unnecessary for the
    files shown, read only when the history is asked for. ``properties``: the newest
    ``properties/`` object listed (file, number), read only when asked for."""

    store: Store
    ignore_corrupt: bool
    checkpoint: Checkpoint | None
    appends: dict[str, CommitRecord]
    replacements: list[CommitRecord]
    unread: list[_Item]
    properties: tuple[StoreFile, int] | None = None
    #: The store's time (epoch ms) of each record listed, by ``commits/<txn>`` and
    #: ``replace/<sequence>``: the order of the table's versions.
    store_times: dict[str, int | None] = field(default_factory=dict)
    #: A past snapshot's: what the data listing must hold (checked once the data is listed).
    as_of_listing: AsOfListing | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The groups (multi-table transactions, I33) whose prepared records the listing found, and
    #: what the listing held: the txns of ``commits/`` and the highest ``replace/`` sequence.
    groups_met: list[GroupRef] = field(default_factory=list)
    txns_listed: frozenset[str] = frozenset()
    highest: int = 0
    #: The prepared records of multi-table transactions this log's view found not committed,
    #: and how the view judged them.
    prepared: list[CommitRecord] = field(default_factory=list)
    decisions: Decisions | None = None

    def holds(self, p: Participant) -> bool:
        """Whether this log's listing holds the record of participant ``p`` of a group."""
        if p.sequence is not None:
            return self.highest >= p.sequence
        return p.txn in self.txns_listed or (
            self.checkpoint is not None and self.checkpoint.covers(p.txn)
        )

    def rule(self) -> Callable[[TableFile], bool | None]:
        """The reader rule of this log for a file (its path relative to the log's table): True
        or False, or None when the file has a txn this log has no record of (a log above, in a
        tree nested by a version without the one-log-per-path check, may have one)."""
        through = self.checkpoint.through if self.checkpoint is not None else 0
        after = [r for r in self.replacements if (r.sequence or 0) > through]
        net = fold_removals(self.checkpoint.removed if self.checkpoint is not None else (), after)
        removed = net.removals
        # A txn's newest replace/ record after the checkpoint judges it (last wins).
        replaced = {r.txn: {f.path for f in r.added} for r in after}
        covered = self.checkpoint.live_paths if self.checkpoint is not None else {}
        appended = {t: {f.path for f in r.added} for t, r in self.appends.items()}

        # A log-only table (I32) shows a file without a txn id only where its log names it.
        log_only = self.checkpoint is not None and self.checkpoint.log_only
        named = self.checkpoint.named_plain if self.checkpoint is not None else frozenset()

        def shown(f: TableFile) -> bool | None:
            if removed.hides(f.path, f.size, f.modified_at):
                return False
            if f.txn is None:
                return not log_only or f.path in named or f.path in net.restored
            if f.path in net.restored:
                return True
            for judge in (replaced, covered, appended):
                if f.txn in judge:
                    return f.path in judge[f.txn]
            return None

        return shown

    def committed_files(self) -> list[TableFile]:
        """Every file this log shows, from its checkpoint and records alone (nothing listed):
        a log-only table's files (docs/protocol.md, I32; ``LogFirstReader.committedFiles`` on
        the JVM): each transaction's files (its newest ``replace/`` record after the checkpoint,
        else the checkpoint's list, else its ``commits/`` record) and the files a restore
        re-added, less every path a net removal names. A file's modification time is the start
        time its transaction's id carries (the transaction whose record names it)."""
        c = self.checkpoint
        through = c.through if c is not None else 0
        after = [r for r in self.replacements if (r.sequence or 0) > through]
        net = fold_removals(c.removed if c is not None else (), after)
        out: dict[str, TableFile] = {}
        started: dict[str, int | None] = {}  # per transaction, not per file

        def add(txn: str, path: str, size: int) -> None:
            if path not in out:
                named = txn_of(path.rpartition("/")[2])
                at = started.get(txn, -1)
                if at == -1:
                    at = started[txn] = txn_started_at(txn)
                out[path] = TableFile(path, size, named, at)

        replaced = {r.txn: r for r in after}  # a txn's newest replace/ record wins
        for txn, r in replaced.items():
            for f in r.added:
                add(txn, f.path, f.size)
        if c is not None:
            for txn, files in sorted(c.committed.items()):
                if txn not in replaced:
                    for f in files:
                        add(txn, f.path, f.size)
        for txn, r in sorted(self.appends.items()):
            if txn not in replaced and (c is None or not c.covers(txn)):
                for f in r.added:
                    add(txn, f.path, f.size)
        for r in after:
            for back in r.restored:
                if back.path in net.restored:
                    add(txn_of(back.path.rpartition("/")[2]) or r.txn, back.path, back.size)
        removals = net.removals
        return [f for f in out.values() if not removals.names(f.path)]

    def complete(self) -> None:
        """Reads every record the view skipped, so the log is the whole history."""
        with self.lock:
            if not self.unread:
                return
            appends, replacements, _ = _read_records(
                self.store, self.unread, self.ignore_corrupt, _silent, None
            )
            self.appends.update(appends)
            self.replacements = sorted(
                self.replacements + replacements, key=lambda r: r.sequence or 0
            )
            self.unread = []


@dataclass(frozen=True)
class _Judge:
    """A log and the files of a view it judges: those whose path (relative to the view's root)
    starts with ``prefix``, each as ``lead`` + the rest (its path relative to the log's table).
    A log inside the root has ``prefix`` ``<dir>/``; the root's own and those above it judge
    every file (``prefix`` ""), a log above with ``lead`` ``<the root below it>/``."""

    prefix: str
    lead: str
    log: _Log


class TableView:
    """One snapshot of a table: its data files, its committed records and its markers.

    Build it with :func:`open_table`. ``visible_files()`` applies the reader rule;
    ``history()`` gives one :class:`HistoryRow` per transaction, newest first.
    """

    def __init__(
        self,
        store: Store,
        is_table: bool,
        data_files: list[TableFile],
        log: _Log,
        pending: Mapping[str, Mapping[str, Any]],
        aborted: Mapping[str, Mapping[str, Any]],
        judges: list[_Judge] | None = None,
        row_counts: Mapping[str, Mapping[str, Any]] | None = None,
        table_url: str | None = None,
        found: bool = True,
    ) -> None:
        self.store = store
        #: Whether the root exists: a local directory, or a prefix holding any file (a store
        #: has no empty directories). A path inside a table may not, and is no partition then.
        self.found = found
        #: Whether the root is in a table: it or a directory above it holds ``_txcommit/``.
        self.is_table = is_table
        self.data_files = data_files
        #: The log of the table the root is in (the history's), else an empty one.
        self._log = log
        #: Every log that judges files of the view, nearest first (deepest inside the root,
        #: the root's own, then those above it, nearest first).
        if judges is None:
            judges = [_Judge("", "", log)] if is_table else []
        self._judges = sorted(judges, key=lambda j: -len(j.prefix))
        self.pending = dict(pending)
        self.aborted = dict(aborted)
        #: ``rows/<txn>.json`` by txn (read with the markers): the rows Spark counted.
        self.row_counts = dict(row_counts or {})
        self._visible: list[TableFile] | None = None
        #: The plan a log-only view shares with the reads of the unchanged table (None: listed).
        self.plan: _Plan | None = None
        #: The URL (without credentials) of the table the root is in; ``url`` differs for a
        #: view of a directory inside a table.
        self.table_url = table_url if table_url is not None else store.root_url

    @property
    def has_logs(self) -> bool:
        """Whether any txcommit log judges files of the view: the root is in a table, or it
        holds tables below it."""
        return bool(self._judges)

    @property
    def tables_below(self) -> list[str]:
        """The directories below the root that hold a table's log (relative to the root,
        sorted): the tables of a directory holding tables, or a table inside a table."""
        return sorted(j.prefix.rstrip("/") for j in self._judges if j.prefix)

    @property
    def url(self) -> str:
        """The URL of what was opened (the table or a directory in it), without credentials."""
        return self.store.root_url

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint the view applies (None: it judges by the records alone)."""
        return self._log.checkpoint

    @property
    def properties(self) -> TableProperties | None:
        """The table's properties in force as the log was listed (the highest
        ``properties/<n>.json``; None: never set). Read when asked (one GET); a corrupt one
        raises :class:`~txcommit.errors.CorruptTablePropertiesError`."""
        newest = self._log.properties
        if newest is None:
            return None
        f, number = newest
        store = self._log.store
        data = store.read(f.key)
        return None if data is None else decode_properties(data, store.url_for(f.key), number)

    @property
    def records(self) -> dict[str, CommitRecord]:
        """Every committed transaction's record (its highest-sequence ``replace/`` record,
        else its ``commits/`` one). Reads the records a checkpoint made unnecessary, once."""
        self._log.complete()
        records = dict(self._log.appends)
        for r in self._log.replacements:  # the replace/ record IS the commit; the last wins
            records[r.txn] = r
        return records

    @property
    def replacements(self) -> list[CommitRecord]:
        """Every ``replace/`` record, in sequence order (several may name one txn). Reads the
        records a checkpoint made unnecessary, once."""
        self._log.complete()
        return list(self._log.replacements)

    def visible_files(self) -> list[TableFile]:
        """The data files a reader sees, sorted by path."""
        if self._visible is None:
            chain = [(j.prefix, j.lead, j.log.rule()) for j in self._judges]

            def shown(f: TableFile) -> bool:
                judged = False
                for prefix, lead, rule in chain:
                    if f.path.startswith(prefix):
                        same = not prefix and not lead  # the file as its log names it
                        verdict = rule(f if same else replace(f, path=lead + f.path[len(prefix) :]))
                        if verdict is not None:
                            return verdict
                        judged = True
                # A txn no log above the file has a record of is not committed; a file below no
                # log is not in a txcommit table (I7).
                return not judged

            self._visible = [f for f in self.data_files if shown(f)]
        return self._visible

    def history(self) -> list[HistoryRow]:
        """Every transaction the log knows, newest first (txn ids are time-ordered); committed
        ones with their ``version`` (docs/protocol.md, I30)."""
        rows: list[HistoryRow] = []
        records = self.records
        changed = schema_changes(records.values())
        times = self._log.store_times
        versions = {
            v.txn: v
            for v in order(
                [(t, times.get(f"commits/{t}")) for t in self._log.appends],
                [
                    (r.sequence or 0, r.txn, times.get(f"replace/{r.sequence}"))
                    for r in self._log.replacements
                ],
            )
        }
        for txn, r in records.items():
            replacing = r.is_replacing
            rows.append(
                HistoryRow(
                    txn=txn,
                    state="fenced" if r.operation == "fence" else "committed",
                    started_at=r.started_at,
                    committed_at=r.committed_at,
                    operation=r.operation,
                    write_id=r.write_id,
                    files=r.files,
                    bytes=r.bytes,
                    rows=_row_count(self.row_counts.get(txn), txn),
                    removed_files=r.removed_files if replacing else 0,
                    removed_bytes=r.removed_bytes if replacing else 0,
                    sequence=r.sequence,
                    schema=changed.get(txn),
                    version=versions[txn].number if txn in versions else None,
                    store_time=versions[txn].store_time if txn in versions else None,
                    restored_files=len(r.restored) if replacing else 0,
                    transaction=r.group.id if r.group is not None else None,
                )
            )
        # A prepared write not committed: ``prepared`` while its transaction is undecided, else
        # ``aborted`` (decided aborted, or a write its decision does not name).
        decisions = self._log.decisions or Decisions()
        for r in self._log.prepared:
            if r.txn in records:
                continue
            undecided = r.group is not None and decisions.decision(r.group) is None
            rows.append(
                HistoryRow(
                    txn=r.txn,
                    state="prepared" if undecided else "aborted",
                    started_at=r.started_at,
                    committed_at=None,
                    operation=r.operation,
                    write_id=r.write_id,
                    files=r.files,
                    bytes=r.bytes,
                    rows=None,
                    removed_files=r.removed_files if r.is_replacing else None,
                    removed_bytes=r.removed_bytes if r.is_replacing else None,
                    sequence=r.sequence,
                    transaction=r.group.id if r.group is not None else None,
                )
            )
        shown = {row.txn for row in rows}
        for state, markers in (("aborted", self.aborted), ("pending", self.pending)):
            for txn, marker in markers.items():
                if txn in shown or (state == "pending" and txn in self.aborted):
                    continue
                started = marker.get("startedAt")
                rows.append(
                    HistoryRow(
                        txn=txn,
                        state=state,
                        started_at=started if isinstance(started, int) else None,
                        committed_at=None,
                        operation=None,
                        write_id=None,
                        files=None,
                        bytes=None,
                        rows=None,
                        removed_files=None,
                        removed_bytes=None,
                        sequence=None,
                    )
                )
        return sorted(rows, key=lambda row: row.txn, reverse=True)


def open_table(
    url: str | os.PathLike[str],
    storage_options: Mapping[str, Any] | None = None,
    *,
    ignore_corrupt_records: bool = False,
    with_markers: bool = False,
    progress: ProgressReport | None = None,
    as_of: str | None = None,
) -> TableView:
    """The committed view of the table at ``url``: a local path, ``file://``, ``s3://`` or
    ``s3a://`` URL. ``storage_options`` go to the store (for S3: ``endpoint``, ``region``,
    ``access_key_id``, ``secret_access_key``, ``session_token``, ``path_style``,
    ``allow_http``, ``max_retries``; unset ones come from the AWS environment variables).

    ``ignore_corrupt_records``: hide the files of a transaction whose record is corrupt (and
    apply none of its removals) instead of failing, like the JVM's
    ``spark.txcommit.read.ignoreCorruptRecords``. ``with_markers``: also read the
    ``pending/`` and ``aborted/`` markers (for :meth:`TableView.history`). ``progress``:
    told how the listing and the reads go. ``as_of``: a past snapshot of the table the root is
    in (docs/readers.md, "Reading a past snapshot"): a transaction id (the snapshot right after
    it committed) or an ISO-8601 time (every commit the store dated at or before it); a value
    that names none raises :class:`~txcommit.errors.TimeTravelError`.
    """
    report = progress or _silent
    options = dict(storage_options or {})
    store = open_store(os.fspath(url), **options)
    if isinstance(store, LocalStore) and store.root.is_file():
        raise StoreError(
            f"txcommit: {store.root_url} is a file; pass the table's directory (a reader "
            "needs the table's log to know whether a file is committed)",
            url=store.root_url,
        )
    written = None
    if isinstance(store, LocalStore):
        written = local_path(os.fspath(url), resolve=False)
        _refuse_link_into_table(written, store.root)
    wanted = None
    if as_of is not None:
        wanted = parse_as_of(as_of)
        if wanted is None:
            raise TimeTravelError(
                f"txcommit: as_of '{as_of}' of {store.root_url} is neither a transaction id (16 "
                "characters of 0-9 and a-z, as TXCOMMIT HISTORY shows) nor an ISO-8601 time "
                "(such as 2026-11-27T20:00:00Z)"
            )
    return _build(store, options, ignore_corrupt_records, with_markers, report, wanted, written)


def _table_at(directory: Path) -> tuple[Path, str] | None:
    """The nearest directory at or above ``directory`` holding ``_txcommit``, with ``directory``
    relative to it ("" for itself)."""
    for d in (directory, *directory.parents):
        if (d / LOG_DIR_NAME).exists():
            return d, "" if d == directory else directory.relative_to(d).as_posix()
    return None


def _refuse_link_into_table(asked: Path, real: Path) -> None:
    """Refuses a read at ``asked`` (a root or a directory of the tree, as written) that its links
    lead to ``real``, inside a table at another place than the path as written names (a link to
    a partition directory, a link in a table into another table or elsewhere in itself), as the
    JVM's read does (docs/protocol.md, I18): files are judged by the log on the path as listed,
    which there is the wrong one, or none. A link to a table's own directory, or above it, is
    read as that table; one to a directory of no table is listed as part of the path."""
    if asked == real:
        return
    found = _table_at(real)
    if found is None:
        return
    root, rel = found
    written = _table_at(asked)
    if written is not None and written[1] == rel and written[0].resolve() == root:
        return
    how = "is a link" if asked.is_symlink() else "leads through a link"
    raise UnsupportedReadError(
        f"txcommit: read of {asked}: {asked} {how} to {real}, inside the txcommit table {root}, "
        f"whose log ({root / LOG_DIR_NAME}) is not at that place on the path as written, so the "
        "read could not tell the table's committed files there from the rest. Nothing was read. "
        f"Read {real} or the table {root} itself, or replace the link with the directory it "
        "leads to."
    )


def _ancestors(store: Store, options: Mapping[str, Any]) -> Iterator[tuple[Store, str]]:
    """The directories above ``store``'s root, nearest first, each as a store with the root's
    path below it: up to ``/`` locally, up to the bucket, container or file system root
    elsewhere (a store's root URL is ``scheme://authority/path`` on every adapter)."""
    if isinstance(store, LocalStore):
        for parent in store.root.parents:
            yield LocalStore(parent), store.root.relative_to(parent).as_posix()
        return
    parts = urlsplit(store.root_url)
    segments = [s for s in parts.path.split("/") if s]
    for cut in range(len(segments) - 1, -1, -1):
        above = f"{parts.scheme}://{parts.netloc}/" + "/".join(segments[:cut])
        yield open_store(above.rstrip("/"), **options), "/".join(segments[cut:])


def _has_log(store: Store, listed: list[StoreFile]) -> bool:
    """Whether ``store``'s root holds ``_txcommit/``, given the files listed below it (a local
    empty ``_txcommit/`` still makes a table, as on the JVM; stores have no empty directories)."""
    return bool(listed) or (isinstance(store, LocalStore) and (store.root / LOG_DIR_NAME).is_dir())


def _logs_above(
    store: Store, options: Mapping[str, Any]
) -> list[tuple[Store, str, list[StoreFile]]]:
    """Every directory above the root holding ``_txcommit/``, nearest first: its store, the
    root's path below it and its log's files. A directory the credentials may not list ends
    the search (as the JVM's filter: a table above it could not be read anyway)."""
    found = []
    for above, below in _ancestors(store, options):
        if isinstance(above, LocalStore) and not (above.root / LOG_DIR_NAME).is_dir():
            continue  # a cheap check first: most local ancestors hold no log
        try:
            listed = above.walk(LOG_DIR_NAME)
        except AccessDeniedError:
            break
        if _has_log(above, listed):
            found.append((above, below, listed))
    return found


def _log_dir_of(key: str) -> str | None:
    """The directory holding the log ``key`` is in (its first ``_txcommit`` segment; "" for the
    root's own), or None for a key in no log."""
    segments = key.split("/")
    if LOG_DIR_NAME not in segments[:-1]:
        return None
    return "/".join(segments[: segments.index(LOG_DIR_NAME)])


def _below_any(key: str, dirs: set[str]) -> bool:
    """Whether ``key`` is below one of ``dirs`` (directories relative to the same root)."""
    at = key.find("/")
    while at > 0:
        if key[:at] in dirs:
            return True
        at = key.find("/", at + 1)
    return False


def _build(
    store: Store,
    options: Mapping[str, Any],
    ignore_corrupt: bool,
    with_markers: bool,
    report: ProgressReport,
    as_of: AsOf | None = None,
    written: Path | None = None,
) -> TableView:
    # Every log before the data it judges (I16): each transaction of a log listing wrote its
    # files before it committed, so the data listing has all of them, and one that commits
    # after the log listing is left out whole. First the logs above the root and its own...
    above = _logs_above(store, options)
    own_listed = store.walk(LOG_DIR_NAME)
    own_exists = _has_log(store, own_listed)
    # Each multi-table transaction a log names is asked once for the whole view (I35).
    decisions = Decisions(options)

    def listing(prefix: str) -> list[StoreFile]:
        return store.walk(prefix, progress=lambda n: report(f"listing {store.root_url}: {n} files"))

    def load(
        on: Store, listed: list[StoreFile], prefix: str, whole: bool, wanted: AsOf | None = None
    ) -> tuple[_Log, _Markers]:
        entries = [(f, f.key[len(prefix) :]) for f in listed if f.key.startswith(prefix)]
        return _load_log(on, entries, ignore_corrupt, whole, report, decisions, wanted)

    # The table the root is in (its own log, else the nearest above) gives the history.
    table: tuple[Store, list[StoreFile]] | None = None
    if own_exists:
        table = (store, own_listed)
    elif above:
        table = (above[0][0], above[0][2])
    table_store, table_listed = table if table is not None else (store, [])
    committed_listed = any(f.key.startswith(_LOG_PREFIX + "commits/") for f in table_listed)
    if as_of is not None and not committed_listed:
        raise TimeTravelError(
            f"txcommit: as_of '{as_of.text}' of {store.root_url} asks for a past snapshot, but no "
            "txcommit table (a directory holding _txcommit/ with a committed transaction) is at "
            "or above this path"
        )
    # ... read, with the decisions of the groups they name, before the data is listed: a group
    # decided after that is not in the view (its files may be missing from the listing) ...
    outer = [_Outer(table_store, table_listed, _LOG_PREFIX)] + [
        _Outer(on, listed, _LOG_PREFIX)
        for i, (on, _, listed) in enumerate(above)
        if i > 0 or own_exists
    ]

    def read(o: _Outer) -> tuple[_Log, _Markers]:
        first = o is outer[0]
        return load(o.store, o.listed, o.prefix, first and with_markers, as_of if first else None)

    _settle(outer, decisions, read)
    primary, markers = outer[0].loaded

    def with_markers_read() -> tuple[dict[str, Mapping[str, Any]], ...]:
        if not (with_markers and table is not None):
            return {}, {}, {}
        return (
            _read_markers(table_store, markers["pending"], report),
            _read_markers(table_store, markers["aborted"], report),
            _read_markers(table_store, markers["rows"], report),
        )

    log_only = primary.checkpoint is not None and primary.checkpoint.log_only
    if table is not None and log_only and primary.as_of_listing is None:
        # A log-only table (I32): its files come from its log alone, as a planned Spark read
        # takes them; nothing below the root is listed. A past snapshot is listed below (its
        # files must still be there: VACUUM may have deleted some).
        lead = "" if own_exists else above[0][1] + "/"
        pending, aborted, row_counts = with_markers_read()

        def view(files: list[TableFile]) -> TableView:
            return TableView(
                store,
                True,
                files,
                primary,
                pending,
                aborted,
                [_Judge("", lead, primary)],
                row_counts,
                table_url=table_store.root_url,
            )

        def build() -> tuple[list[TableFile], list[TableFile]]:
            named = [
                replace(f, path=f.path[len(lead) :]) if lead else f
                for f in primary.committed_files()
                if f.path.startswith(lead) and is_data_path(f.path[len(lead) :])
            ]
            files = sorted(named, key=lambda f: f.path)
            return files, view(files).visible_files()

        # An unchanged table's reads share one plan (the JVM's LogFirstReader.committedStatuses).
        cached = (
            table_store.root_url,
            store.root_url,
            lead,
            as_of.text if as_of is not None else None,
            ignore_corrupt,
        )
        plan = _planned(cached, primary, build)
        report(f"read {store.root_url} from its log: {len(plan.files)} files", force=True)
        # Copies of the lists (a caller may change what it is given), of the shared files.
        out = view(list(plan.files))
        out._visible = list(plan.visible)
        out.plan = plan
        return out

    # ... then the tree, which shows where the logs inside it are (tables in a directory of
    # tables, or nested by a version without the one-log-per-path check) ...
    tree = listing("")
    inner = {d for f in tree if (d := _log_dir_of(f.key))}
    inner_logs = [
        _Outer(store, store.walk(f"{d}/{LOG_DIR_NAME}"), f"{d}/{_LOG_PREFIX}", d)
        for d in sorted(inner)
    ]
    if inner_logs:
        # ... those logs read (and their groups decided, all the view's logs together) ...
        _settle(outer + inner_logs, decisions, read)
        primary, markers = outer[0].loaded
        # ... and, those logs listed now, the directories holding them again: a commit there
        # during the first listing may be in it in part.
        tops = {d for d in inner if not _below_any(d, inner)}
        tree = [f for f in tree if not _below_any(f.key, tops)]
        for d in sorted(tops):
            tree += listing(d)
    report(f"listed {store.root_url}: {len(tree)} files", force=True)
    data: list[TableFile] = []
    # A log that appears only in the data listing was created after its listing: none of its
    # commits is in this view, but it is the nearest log of its files (an empty one).
    appeared: set[str] = set()
    for f in tree:
        d = _log_dir_of(f.key)
        if d is not None:
            if d not in inner and (d or not own_exists):
                appeared.add(d)
        elif is_data_path(f.key):
            modified_at = None if f.mtime_ns is None else f.mtime_ns // 1_000_000
            data.append(TableFile(f.key, f.size, txn_of(f.key.rpartition("/")[2]), modified_at))
    if isinstance(store, LocalStore):
        # A directory of the tree that a link leads inside a table at another place: refused,
        # as the JVM's read refuses it (the listing went through the link, as Spark's does).
        for d in sorted({f.path.rpartition("/")[0] for f in data} - {""}):
            real = Path(os.path.realpath(store.root / d))
            if real != store.root / d:
                _refuse_link_into_table((written or store.root) / d, real)

    judges: list[_Judge] = [_Judge(o.directory + "/", "", o.loaded[0]) for o in inner_logs]
    for d in appeared:
        empty = _Log(store, ignore_corrupt, None, {}, [], [])
        judges.append(_Judge(d + "/" if d else "", "", empty))
    if primary.as_of_listing is not None:
        # The data was listed after the log: it holds every file of the snapshot VACUUM may
        # have deleted, or the snapshot is not read (a VACUUM meanwhile included).
        primary.as_of_listing.verify("" if own_exists else above[0][1], data)
    if own_exists:
        judges.append(_Judge("", "", primary))
    for i, (_, below, _) in enumerate(above):
        log = (
            primary if i == 0 and not own_exists else outer[i + (1 if own_exists else 0)].loaded[0]
        )
        judges.append(_Judge("", below + "/", log))
    pending, aborted, row_counts = with_markers_read()
    found = store.root.is_dir() if isinstance(store, LocalStore) else bool(tree) or own_exists
    return TableView(
        store,
        table is not None,
        data,
        primary,
        pending,
        aborted,
        judges,
        row_counts,
        table_url=table_store.root_url,
        found=found,
    )


#: At most this many rounds of listing a log again (a group committed during the view, I35).
SETTLE_ROUNDS = 8


@dataclass
class _Outer:
    """A log of a view being settled: its store, listing, the prefix of its files in the
    listing (``_txcommit/`` below the table) and, inside the view's root, its directory;
    ``loaded`` once read."""

    store: Store
    listed: list[StoreFile]
    prefix: str
    directory: str = ""

    def relist(self) -> list[StoreFile]:
        """The log's files, listed again."""
        return self.store.walk(self.prefix.rstrip("/"))

    _loaded: tuple[_Log, _Markers] | None = None

    @property
    def loaded(self) -> tuple[_Log, _Markers]:
        assert self._loaded is not None, "read by _settle first"
        return self._loaded

    @property
    def url(self) -> str:
        return self.store.url_for(self.directory) if self.directory else self.store.root_url


def _settle(
    logs: list[_Outer], decisions: Decisions, load: Callable[[_Outer], tuple[_Log, _Markers]]
) -> None:
    """Reads ``logs`` so that each group their records name is in all of them or in none
    (I35, as the JVM's ``Joint``): a group found committed whose decision names a record that a
    log of the view lacks (prepared after that log was listed) makes the view list that log
    again, and every log is judged again with the groups not decided then asked anew. Fails
    after :data:`SETTLE_ROUNDS` rounds rather than show part of a group."""
    for o in logs:
        o._loaded = load(o)
    for _ in range(SETTLE_ROUNDS):
        committed = {
            ref.id: d
            for o in logs
            for ref in o.loaded[0].groups_met
            if (d := decisions.decision(ref)) is not None and d.committed
        }
        missing = [
            o
            for o in logs
            if any(
                _same_table(p.table, o.url) and not o.loaded[0].holds(p)
                for d in committed.values()
                for p in d.participants
            )
        ]
        if not missing:
            return
        for o in missing:
            o.listed = o.relist()
        decisions.forget_undecided()
        for o in logs:
            o._loaded = load(o)
    raise ListingChangedError(
        f"txcommit: the logs of {', '.join(o.url for o in logs)} kept changing while this view "
        f"listed them ({SETTLE_ROUNDS} rounds: transactions across them committed meanwhile); "
        "nothing was read. Open the view again."
    )


def _same_table(a: str, b: str) -> bool:
    """Whether URLs ``a`` and ``b`` name one directory (``s3``/``s3a``, ``abfs``/``abfss`` and
    ``file:/``/``file:///`` alike; a trailing slash ignored)."""

    def key(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url)
        scheme = {"s3a": "s3", "abfss": "abfs", "": "file"}.get(parts.scheme, parts.scheme)
        return scheme, parts.netloc, parts.path.rstrip("/")

    return key(a) == key(b)


def _load_log(
    store: Store,
    entries: list[tuple[StoreFile, str]],
    ignore_corrupt: bool,
    whole: bool,
    report: ProgressReport,
    decisions: Decisions,
    as_of: AsOf | None = None,
) -> tuple[_Log, _Markers]:
    """One log from its listed files (each with its name below ``_txcommit/``): the records it
    needs (every one when ``whole``), and its ``pending/`` and ``aborted/`` markers (unread)."""
    commits: list[tuple[StoreFile, str]] = []  # (file, txn)
    replaces: list[tuple[StoreFile, int]] = []  # (file, sequence)
    checkpoints: list[tuple[StoreFile, int]] = []  # (file, number)
    properties: tuple[StoreFile, int] | None = None  # the highest number listed
    markers: _Markers = {"pending": [], "aborted": [], "rows": []}
    horizons: list[int] = []
    for f, rel in entries:
        kind, _, name = rel.partition("/")
        if "/" in name:
            continue
        if kind == "commits" and (txn := txn_of_record_name(name)) is not None:
            commits.append((f, txn))
        elif kind == "replace" and (seq := sequence_of_record_name(name)) is not None:
            replaces.append((f, seq))
        elif kind == "checkpoints" and (number := checkpoint_of_name(name)) is not None:
            checkpoints.append((f, number))
        elif kind == "properties" and (number := checkpoint_of_name(name)) is not None:
            if properties is None or number > properties[1]:
                properties = (f, number)
        elif kind in markers and (txn := txn_of_record_name(name)) is not None:
            markers[kind].append((f.key, txn))
        elif kind == "vacuum" and (horizon := sequence_of_record_name(name)) is not None:
            horizons.append(horizon)
    times = {f"commits/{t}": _ms(f) for f, t in commits}
    times.update({f"replace/{seq}": _ms(f) for f, seq in replaces})
    if as_of is not None:
        past = _LogListing(commits, replaces, checkpoints, properties, max(horizons, default=0))
        log = _log_as_of(store, past, ignore_corrupt, as_of, report, decisions)
        log.store_times = times
        return log, markers
    highest = max((seq for _, seq in replaces), default=0)
    checkpoint = _newest_checkpoint(store, checkpoints, highest, report)
    # With a checkpoint, the records it covers decide nothing it does not already say: they
    # are read only for the history. A replacing commit's commits/ copy is still read (cheap,
    # and the listing does not tell it from an append).
    through = checkpoint.through if checkpoint is not None else 0
    items: list[_Item] = [(f, None, seq) for f, seq in replaces]
    items += [(f, txn, None) for f, txn in commits]
    needed, unread = items, list[_Item]()
    if checkpoint is not None and not whole:
        needed = []
        for item in items:
            f, txn, seq = item
            skip = checkpoint.covers(txn) if txn is not None else (seq or 0) <= through
            (unread if skip else needed).append(item)
    prepared: list[CommitRecord] = []
    appends, replacements, met = _read_records(
        store, needed, ignore_corrupt, report, decisions, prepared
    )
    log = _Log(store, ignore_corrupt, checkpoint, appends, replacements, unread, properties, times)
    log.groups_met = met
    log.prepared = prepared
    log.decisions = decisions
    log.txns_listed = frozenset(t for _, t in commits)
    log.highest = highest
    return log, markers


@dataclass(frozen=True)
class _LogListing:
    """What one listing of a log found, as a past snapshot needs it."""

    commits: list[tuple[StoreFile, str]]
    replaces: list[tuple[StoreFile, int]]
    checkpoints: list[tuple[StoreFile, int]]
    properties: tuple[StoreFile, int] | None
    vacuum_horizon: int


def _ms(f: StoreFile) -> int | None:
    return None if f.mtime_ns is None else f.mtime_ns // 1_000_000


def _log_as_of(
    store: Store,
    listed: _LogListing,
    ignore_corrupt: bool,
    as_of: AsOf,
    report: ProgressReport,
    decisions: Decisions,
) -> _Log:
    """The log of a past snapshot (docs/protocol.md, I30), as the JVM's ``SnapshotAsOf``: the
    version ``as_of`` names, then exactly the versions up to it: the ``replace/`` records up to its
    sequence, the appends up to it, and a checkpoint only when every version it folds in is one
    of them. Fails (naming the table, the value, VACUUM's horizon and the files) when a later
    replacing commit removed a file of the snapshot before a VACUUM's horizon: the file may be
    gone. The log's :class:`AsOfListing` names the snapshot's files a later replacing commit
    removed, which the data listing must hold."""
    _, listed_replacements, _ = _read_records(
        store, [(f, None, seq) for f, seq in listed.replaces], ignore_corrupt, report, None
    )
    times = {seq: _ms(f) for f, seq in listed.replaces}
    replacing = {r.txn for r in listed_replacements}
    replacements = [r for r in listed_replacements if decisions.committed(r)]
    # A multi-table transaction's write is a version only once committed, dated by its decision
    # (I33): the appends' records are read to tell them.
    all_appends, _, _ = _read_records(
        store, [(f, t, None) for f, t in listed.commits if t not in replacing], ignore_corrupt,
        report, None,
    )  # fmt: skip
    prepared = {t for t, r in all_appends.items() if r.group is not None}
    decided = [r for r in all_appends.values() if r.group is not None and decisions.committed(r)]
    decided += [r for r in replacements if r.group is not None]
    decided_at = decisions.decision_times([r.group for r in decided if r.group is not None])
    versions = order(
        [(t, _ms(f)) for f, t in listed.commits if t not in replacing and t not in prepared],
        [(r.sequence or 0, r.txn, times.get(r.sequence or 0)) for r in replacements if not r.group],
        [(r.txn, decided_at.get(r.group.decision), r.sequence) for r in decided if r.group],
    )

    def fail(why: str) -> TimeTravelError:
        return TimeTravelError(f"txcommit: as_of '{as_of.text}' of table {store.root_url}: {why}")

    if isinstance(as_of, AsOfTxn):
        version = of_txn(versions, as_of.text)
        if version is None:
            raise fail(
                f"transaction {as_of.text} is not committed in this table (TXCOMMIT HISTORY "
                "lists its transactions; a pending or aborted one has no snapshot)"
            )
    else:
        version = at_time(versions, as_of.epoch_ms)
        if version is None:
            first = versions[0].store_time if versions else None
            raise fail(
                f"no commit of this table is dated at or before {_iso(as_of.epoch_ms)} by the "
                f"store; its first is dated {_iso(first) if first is not None else 'never'}"
            )
    # A transaction's writes to this table, all or none (I37).
    group_of = {r.txn: r.group.id for r in [*all_appends.values(), *replacements] if r.group}
    version = whole(versions, version, group_of)
    held_versions = versions[: version.number]
    held = {v.txn for v in held_versions}
    later = {v.txn for v in versions[version.number :]}
    through = max((v.sequence or 0 for v in held_versions), default=0)
    checkpoint = None
    newest_first = sorted(listed.checkpoints, key=lambda c: c[1], reverse=True)
    for f, number in newest_first[:CHECKPOINT_TRIES]:
        found = _cached_checkpoint(store, f, number)
        if found is not None and found.through <= through and not later & set(found.committed):
            checkpoint = found
            break
    needed: list[_Item] = [
        (f, t, None)
        for f, t in listed.commits
        if t in held and t not in replacing and not (checkpoint and checkpoint.covers(t))
    ]
    if isinstance(as_of, AsOfTxn) and not any(item[1] == as_of.text for item in needed):
        # Read by name all the same: a fence holds a place but names no snapshot.
        named = as_of.text
        needed += [(f, t, None) for f, t in listed.commits if t == named and t not in replacing]
    appends, _, _ = _read_records(store, needed, ignore_corrupt, report, decisions)
    if isinstance(as_of, AsOfTxn) and any(
        r.txn == as_of.text and r.operation == "fence" for r in [*appends.values(), *replacements]
    ):
        raise fail(
            f"transaction {as_of.text} never committed: VACUUM fenced it, so it has no snapshot"
        )

    def in_it(r: CommitRecord) -> bool:
        # Up to the version's place, and a multi-table transaction's write once it committed.
        return (r.sequence or 0) <= through and (r.group is None or r.txn in held)

    kept = [r for r in replacements if in_it(r)]
    before = fold_removals((), kept).removals

    def in_snapshot(f: RemovedFile) -> bool:
        # By identity, as a removal names a file (I21), never by the name alone: a file without
        # a txn id is in it when the store dated it no later than the version (a file written
        # after it was not) and no removal up to the version hides it by size and second.
        txn = txn_of(f.path.rpartition("/")[2])
        if txn is not None:
            return txn in held and not before.names(f.path)
        if f.modified_at is not None:
            return f.modified_at // 1000 <= version.store_time // 1000 and not before.hides(
                f.path, f.size, f.modified_at
            )
        return not before.names(f.path)  # an older writer's removal names the path

    # Removals still in force after every record (a restore may have re-added the file, I31),
    # as VACUUM judges them: each entry is its record's own object.
    still_removed = {id(f) for f in fold_removals((), replacements).removed}
    removed_later = [
        (f, r)
        for r in replacements
        if not in_it(r)
        for f in r.removed
        if id(f) in still_removed and in_snapshot(f)
    ]
    snapshot = f"the snapshot (version {version.number}, transaction {version.txn})"
    deleted = [f for f, r in removed_later if r.committed_at < listed.vacuum_horizon]
    if deleted:
        raise fail(
            f"{snapshot} held files that a later replacing commit removed and VACUUM has deleted "
            f"(its horizon: {_iso(listed.vacuum_horizon)}): {quoted_paths(deleted)}; it cannot "
            "be read whole. Snapshots newer than the horizon can be read"
        )
    log = _Log(store, ignore_corrupt, checkpoint, appends, kept, [], listed.properties)
    if removed_later:
        log.as_of_listing = AsOfListing(
            f"txcommit: as_of '{as_of.text}' of table {store.root_url}: {snapshot}",
            tuple(f for f, _ in removed_later),
        )
    return log


def _iso(epoch_ms: int) -> str:
    """``epoch_ms`` as the JVM's ``Instant.toString`` writes it (UTC, ``Z``)."""
    t = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{epoch_ms % 1000:03d}Z" if epoch_ms % 1000 else "Z")


def _newest_checkpoint(
    store: Store, listed: list[tuple[StoreFile, int]], highest_sequence: int, report: ProgressReport
) -> Checkpoint | None:
    """The newest checkpoint that decodes and folds in only ``replace/`` records this listing
    holds (``through`` <= ``highest_sequence``), of the newest :data:`CHECKPOINT_TRIES`
    listed; None: the view judges by the records alone. A corrupt one is skipped: it only
    summarises records that stay in the log."""
    for f, number in sorted(listed, key=lambda item: item[1], reverse=True)[:CHECKPOINT_TRIES]:
        report(f"reading checkpoint {number}", force=True)
        checkpoint = _cached_checkpoint(store, f, number)
        if checkpoint is not None and checkpoint.through <= highest_sequence:
            return checkpoint
    return None


def _cached_checkpoint(store: Store, f: StoreFile, number: int) -> Checkpoint | None:
    global _checkpoint_files
    cache_key = (store.root_url, f.key, f.size, f.mtime_ns, f.etag)
    with _records_lock:
        found = _checkpoints.get(cache_key)
    if found is not None:
        return found
    data = store.read(f.key)
    if data is None:  # deleted since the listing (VACUUM of a superseded checkpoint)
        return None
    try:
        checkpoint = decode_checkpoint(data, store.url_for(f.key), number)
    except CorruptCheckpointError as e:
        with _records_lock:
            first = cache_key not in _warned_checkpoints
            _warned_checkpoints.add(cache_key)
        if first:
            _log.warning("%s", e)
        return None
    weight = 1 + checkpoint.files + len(checkpoint.committed) + len(checkpoint.removed)
    with _records_lock:
        if _checkpoint_files + weight > CHECKPOINT_CACHE_FILES:
            _checkpoints.clear()
            _checkpoint_files = 0
        _checkpoints[cache_key] = checkpoint
        _checkpoint_files += weight
    return checkpoint


def _parallel(
    fn: Callable[[Any], Any], items: Iterable[Any], report: ProgressReport, what: str
) -> list[Any]:
    items = list(items)
    if not items:
        return []
    done = 0
    out = []
    with ThreadPoolExecutor(min(READ_THREADS, len(items))) as pool:
        for result in pool.map(fn, items):
            out.append(result)
            done += 1
            report(f"reading {what}: {done}/{len(items)}", force=done == len(items))
    return out


def _cached_record(
    store: Store, f: StoreFile, txn: str | None, sequence: int | None
) -> CommitRecord | None:
    key = f.key
    cache_key = (store.root_url, key, f.size, f.mtime_ns, f.etag)
    with _records_lock:
        found = _records.get(cache_key)
    if found is not None:
        return found
    data = store.read(key)
    if data is None:  # deleted since the listing (VACUUM of an old record)
        return None
    record = decode_record(data, store.url_for(key), txn, sequence)
    with _records_lock:
        if len(_records) >= RECORD_CACHE_LIMIT:
            _records.clear()
        _records[cache_key] = record
    return record


def _read_records(
    store: Store,
    items: list[_Item],
    ignore_corrupt: bool,
    report: ProgressReport,
    decisions: Decisions | None,
    uncommitted: list[CommitRecord] | None = None,
) -> tuple[dict[str, CommitRecord], list[CommitRecord], list[GroupRef]]:
    """The records ``items`` name (``(file, txn, None)`` of ``commits/``, ``(file, None,
    sequence)`` of ``replace/``): the ``commits/`` ones that commit by themselves, by txn, and
    the ``replace/`` ones in sequence order. As the JVM does, a replacing commit's
    ``commits/`` copy commits nothing: only its ``replace/`` record does (else its new files
    would show without its removals). A group's prepared record is left out unless its group's
    decision (asked through ``decisions``) committed it (added to ``uncommitted`` instead); the
    groups met come third. Without ``decisions`` (records a checkpoint covers: decided) every
    record counts."""
    if uncommitted is None:
        uncommitted = []

    def load(item: _Item) -> CommitRecord | None:
        f, txn, sequence = item
        try:
            return _cached_record(store, f, txn, sequence)
        except CorruptCommitRecordError as e:
            if not ignore_corrupt:
                raise
            _log.warning("%s (hiding its files: ignore_corrupt_records=True)", e)
            return None

    loaded = _parallel(load, items, report, "commit records")
    appends: dict[str, CommitRecord] = {}
    replacements: list[CommitRecord] = []
    met: dict[str, GroupRef] = {}
    for (_, txn, _), record in zip(items, loaded, strict=True):
        if record is None:
            continue
        if record.group is not None and (txn is None or not record.is_replacing):
            met.setdefault(record.group.id, record.group)
            if decisions is not None and not decisions.committed(record):
                uncommitted.append(record)
                continue
        if txn is None:
            replacements.append(record)
        elif not record.is_replacing:
            appends[record.txn] = record
    replacements.sort(key=lambda r: r.sequence or 0)
    return appends, replacements, list(met.values())


def _row_count(counted: Mapping[str, Any] | None, txn: str) -> int | None:
    """The rows of ``rows/<txn>.json`` (``RowCount.scala``), None if it is missing or odd."""
    if counted is None or counted.get("format") != "txcommit-rows" or counted.get("txn") != txn:
        return None
    rows = counted.get("rows")
    return rows if isinstance(rows, int) and not isinstance(rows, bool) and rows >= 0 else None


def _read_markers(
    store: Store, markers: list[tuple[str, str]], report: ProgressReport
) -> dict[str, Mapping[str, Any]]:
    """``pending/`` or ``aborted/`` markers, or ``rows/`` counts: small JSON objects for the
    history only (never trusted for visibility), so an unreadable one is shown without them."""

    def load(item: tuple[str, str]) -> tuple[str, Mapping[str, Any]]:
        key, txn = item
        data = store.read(key)
        try:
            parsed = json.loads(data) if data is not None else {}
        except ValueError:
            parsed = {}
        return txn, parsed if isinstance(parsed, dict) else {}

    return dict(_parallel(load, markers, report, "markers"))


__all__ = [
    "HistoryRow",
    "ProgressReport",
    "TableFile",
    "TableView",
    "hidden_name",
    "is_data_path",
    "open_table",
]
