"""Commit records (``RecordCodec.scala``, ``CommitRecord.scala``): JSON written with Jackson's
default pretty printer, decoded strictly: a record that is truncated, not JSON, of an unknown
format or version, about another transaction, inconsistent, or naming a path outside its table
is refused with :class:`~txcommit.errors.CorruptCommitRecordError` naming the file."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from txcommit._names import IGNORE_CORRUPT_RECORDS_CONF
from txcommit.errors import CorruptCommitRecordError
from txcommit.paths import unsafe_relative_path
from txcommit.table.jackson import long_field, pretty, strict_object, text_field
from txcommit.table.names import is_valid_txn, is_valid_write_id, txn_of

RECORD_FORMAT = "txcommit-commit-record"
RECORD_FORMAT_VERSION = 2
#: The version of a record that re-adds files (``restored``, docs/protocol.md I31): written only
#: then, so a table without a restore stays readable by a txcommit that reads 1 and 2.
RESTORE_FORMAT_VERSION = 3
#: Versions a decoder accepts: 1 (appends only, before replacing commits), 2 and 3.
READABLE_FORMAT_VERSIONS = (1, 2, 3)
#: ``operation`` of a record: ``append`` is the only one of version 1 records.
OPERATIONS = ("append", "overwrite", "overwrite-partitions", "write-id", "fence")
#: Operations that need a sequence: replacing commits. A ``fence`` (VACUUM's claim on a
#: transaction it cleaned up as never committed) commits nothing, in ``commits/`` and in
#: ``replace/`` alike.
REPLACING_OPERATIONS = ("overwrite", "overwrite-partitions", "write-id")


@dataclass(frozen=True)
class AddedFile:
    """One data file a transaction adds, relative to the table directory."""

    path: str
    size: int


@dataclass(frozen=True)
class RemovedFile:
    """One file a replacing transaction logically deletes (``removed``) or re-adds
    (``restored``, I31), relative to the table directory.

    A file named with a transaction id is removed by its path (no two transactions share a
    name). A file written without txcommit can be written again under the same name after
    VACUUM deleted it, so its removal also records ``modified_at``, the store's modification
    time (epoch ms) of the file it saw, and applies only to a file of that size modified in that
    same second (some stores keep whole seconds). Without it (an older writer's entry) the
    removal hides the path (``RemovedFile.scala``)."""

    path: str
    size: int
    modified_at: int | None = None

    def applies_to(self, size: int, modified_at_ms: int | None) -> bool:
        """Whether this removal hides the file now at its path, of ``size`` and modified at
        ``modified_at_ms`` (None, a store that gives no time: hidden, as by path)."""
        if self.modified_at is None or modified_at_ms is None:
            return True
        return size == self.size and self.modified_at // 1000 == modified_at_ms // 1000

    def is_file(self, size: int, modified_at_ms: int | None) -> bool:
        """Whether the file at its path, of ``size`` bytes modified at ``modified_at_ms``, is the
        file this entry names: of its size and, without a txn id, modified in the same second
        (I21's identity; ``RemovedFile.isFile``)."""
        return size == self.size and self.applies_to(size, modified_at_ms)

    @property
    def has_txn(self) -> bool:
        """Whether its name carries a txn id (then the path alone is the file)."""
        return txn_of(self.path.rpartition("/")[2]) is not None

    def cancelled_by(self, restored: RemovedFile) -> bool:
        """Whether a restore of ``restored`` cancels this removal: it hides the file
        ``restored`` names (``RemovedFile.cancelledBy``)."""
        if self.path != restored.path:
            return False
        return restored.modified_at is None or self.applies_to(restored.size, restored.modified_at)


class Removals:
    """The removals of a log (its checkpoint's and its replacing commits'), by path."""

    def __init__(self, removed: Iterable[RemovedFile]) -> None:
        self._by_path: dict[str, list[RemovedFile]] = {}
        for f in removed:
            self._by_path.setdefault(f.path, []).append(f)

    def hides(self, path: str, size: int, modified_at_ms: int | None) -> bool:
        return any(f.applies_to(size, modified_at_ms) for f in self._by_path.get(path, ()))

    def names(self, path: str) -> bool:
        """Whether some removal names ``path`` (of whichever file)."""
        return path in self._by_path


@dataclass(frozen=True)
class NetRemovals:
    """The reader rule's removals, folded once (``NetRemovals.scala``; docs/protocol.md, I11
    and I31): a checkpoint's ``removed`` (net as of its ``through``), then each replacing
    record in sequence order, adding its ``removed`` and then cancelling, for each of its
    ``restored``, every removal so far that hides the file it names. ``removed``: the net
    removals; ``restored``: the paths of files that a restore re-added (one named with a txn id
    is visible although a checkpoint's list of its transaction dropped it; one without a txn id
    is named by the log: a log-only table shows it, I32)."""

    removed: tuple[RemovedFile, ...]
    restored: frozenset[str]

    @property
    def removals(self) -> Removals:
        return Removals(self.removed)


def fold_removals(base: Iterable[RemovedFile], records: Iterable[CommitRecord]) -> NetRemovals:
    """``base`` (a checkpoint's net removals, or none), then ``records`` in the order given
    (sequence order)."""
    removed = list(base)
    restored: set[str] = set()
    for r in records:
        removed += r.removed
        if r.restored:
            cancels: dict[str, list[RemovedFile]] = {}
            for f in r.restored:
                cancels.setdefault(f.path, []).append(f)
            removed = [
                d for d in removed if not any(d.cancelled_by(f) for f in cancels.get(d.path, ()))
            ]
            restored.update(f.path for f in r.restored)
    return NetRemovals(tuple(removed), frozenset(restored))


def quoted_paths(files: Iterable[RemovedFile]) -> str:
    """Up to ten paths, quoted, for a message (``RemovedFile.names``)."""
    paths = [f"'{f.path}'" for f in files]
    more = f", and {len(paths) - 10} more" if len(paths) > 10 else ""
    return ", ".join(paths[:10]) + more


def removed_entry(f: RemovedFile) -> list[tuple[str, Any]]:
    entry: list[tuple[str, Any]] = [("path", f.path), ("size", f.size)]
    if f.modified_at is not None:
        entry.append(("modifiedAt", f.modified_at))
    return entry


def removed_of(
    entry: dict[str, Any],
    path: str,
    size: int,
    corrupt: Callable[[str], Exception],
    list_name: str = "removed",
) -> RemovedFile:
    """A ``removed`` (or ``restored``) entry with its optional ``modifiedAt``, as the JVM's
    codecs read it."""
    at = entry.get("modifiedAt")
    if at is not None and (not isinstance(at, int) or isinstance(at, bool) or at < 0):
        raise corrupt(
            f"an entry of '{list_name}' has a 'modifiedAt' that is not a time in milliseconds"
        )
    return RemovedFile(path, size, at)


@dataclass(frozen=True)
class CommitRecord:
    """The commit record: once ``_txcommit/commits/<txn>.json`` (or a ``replace/`` record
    naming ``txn``) exists, every file in ``added`` is visible and nothing else of that
    transaction ever is (``CommitRecord.scala``); every file in ``removed`` is hidden from then
    on, whoever added it.

    Version 2 fields: ``operation`` (one of :data:`OPERATIONS`), ``write_id``, and, for a
    *replacing* commit only (an overwrite, or any write with a write id), ``sequence`` (its
    number in ``replace/``), ``scope`` (the replaced directories relative to the table, ""
    for the whole table) and ``removed`` (the files it logically deletes). Version 3 adds
    ``restored``: the files a restore re-adds (I31), written only when there are some.
    ``schema``: the table's schema as of this commit (Spark DDL), absent in records written
    before the schema guard and for formats that give none (unknown: nothing is checked
    against it).
    """

    txn: str
    token: str
    job_id: str
    started_at: int
    committed_at: int
    added: tuple[AddedFile, ...] = field(default_factory=tuple)
    app_id: str | None = None
    writer: str = ""
    operation: str = "append"
    write_id: str | None = None
    sequence: int | None = None
    scope: tuple[str, ...] = field(default_factory=tuple)
    removed: tuple[RemovedFile, ...] = field(default_factory=tuple)
    schema: str | None = None
    restored: tuple[RemovedFile, ...] = field(default_factory=tuple)

    @property
    def files(self) -> int:
        return len(self.added)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.added)

    @property
    def is_replacing(self) -> bool:
        """Whether the commit is a replacing one (an overwrite, or a write with a write id),
        committed through ``replace/<sequence>.json``: it has a sequence, a scope and the
        files it logically deletes (``CommitRecord.isReplacing`` on the JVM)."""
        return self.sequence is not None

    @property
    def removed_files(self) -> int:
        return len(self.removed)

    @property
    def removed_bytes(self) -> int:
        return sum(f.size for f in self.removed)

    @property
    def restored_files(self) -> int:
        return len(self.restored)

    @property
    def format_version(self) -> int:
        """3 only for a record that restores files (I31), else 2."""
        return RESTORE_FORMAT_VERSION if self.restored else RECORD_FORMAT_VERSION

    @property
    def directories(self) -> tuple[str, ...]:
        """The distinct directories (relative to the table; "" is the table) holding files."""
        return tuple(sorted({f.path.rpartition("/")[0] for f in self.added}))


def encode_record(record: CommitRecord) -> bytes:
    """The record as the JVM's ``RecordCodec.encode`` writes it (format version 2, or 3 when
    it restores files), byte for byte: the version 1 fields in their order, then
    ``operation``, ``writeId`` (only with a write id) and, for a replacing commit only,
    ``sequence``, ``scope``, ``removedFiles``, ``removedBytes`` and ``removed``, then
    ``restoredFiles`` and ``restored`` when it restores files; last ``schema``, when the record
    carries one."""
    if record.operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}: {record.operation!r}")
    if record.operation in REPLACING_OPERATIONS and record.sequence is None:
        raise ValueError(f"the {record.operation} of {record.txn} has no sequence")
    if record.sequence is None and (record.removed or record.scope or record.restored):
        raise ValueError(f"{record.txn} has a scope, removed or restored files but no sequence")
    fields: list[tuple[str, Any]] = [
        ("format", RECORD_FORMAT),
        ("version", record.format_version),
        ("txn", record.txn),
        ("token", record.token),
        ("jobId", record.job_id),
        ("startedAt", record.started_at),
        ("committedAt", record.committed_at),
    ]
    if record.app_id is not None:
        fields.append(("appId", record.app_id))
    fields += [
        ("writer", record.writer),
        ("files", record.files),
        ("bytes", record.bytes),
        ("added", [[("path", f.path), ("size", f.size)] for f in record.added]),
        ("operation", record.operation),
    ]
    if record.write_id is not None:
        fields.append(("writeId", record.write_id))
    if record.is_replacing:
        fields += [
            ("sequence", record.sequence),
            ("scope", list(record.scope)),
            ("removedFiles", record.removed_files),
            ("removedBytes", record.removed_bytes),
            ("removed", [removed_entry(f) for f in record.removed]),
        ]
        if record.restored:
            fields += [
                ("restoredFiles", record.restored_files),
                ("restored", [removed_entry(f) for f in record.restored]),
            ]
    if record.schema is not None:
        fields.append(("schema", record.schema))
    return pretty(fields, 0).encode("utf-8")


def decode_record(
    data: bytes, where: str, expected_txn: str | None, expected_sequence: int | None = None
) -> CommitRecord:
    """Decodes the record stored at ``where`` (named in every error).

    A record of ``commits/<txn>.json`` is decoded with ``expected_txn`` (its ``txn`` must
    match); one of ``replace/<sequence>.json`` with ``expected_txn=None`` and
    ``expected_sequence`` (its ``sequence`` must match, and it must be a replacing commit).
    Strict, with the rules and messages of ``RecordCodec.decode``: versions 1 and 2 are read
    (a version 1 record is an ``append``); numbers must be JSON integers (the JVM never
    writes anything else); a path in ``added``, ``removed`` or ``scope`` outside the table is
    refused.
    """
    log_dir = "replace" if expected_sequence is not None else "commits"

    def corrupt(why: str) -> CorruptCommitRecordError:
        return CorruptCommitRecordError(
            f"txcommit: commit record {where} is corrupt: {why}. Its transaction's files stay "
            f"hidden from this read only if you set {IGNORE_CORRUPT_RECORDS_CONF}=true; "
            "otherwise restore the record from a backup, or move it out of "
            f"_txcommit/{log_dir}/ to treat the transaction as never committed."
        )

    root = strict_object(data, corrupt)

    def text(field_name: str) -> str:
        return text_field(root, field_name, corrupt)

    def long(node: dict[str, Any], field_name: str) -> int:
        return long_field(node, field_name, corrupt)

    def outside(list_name: str, path: str, why: str) -> CorruptCommitRecordError:
        return corrupt(
            f"it names a file outside its table directory ('{path}' in '{list_name}': {why}); "
            "nothing outside the table is read or deleted because of it"
        )

    def files(list_name: str) -> tuple[AddedFile, ...]:
        return tuple(AddedFile(p, n) for p, n, _ in entries(list_name))

    def removed_files(list_name: str = "removed") -> tuple[RemovedFile, ...]:
        return tuple(removed_of(e, p, n, corrupt, list_name) for p, n, e in entries(list_name))

    def entries(list_name: str) -> list[tuple[str, int, dict[str, Any]]]:
        node = root.get(list_name)
        if not isinstance(node, list):
            raise corrupt(f"field '{list_name}' is missing or not a list")
        out: list[tuple[str, int, dict[str, Any]]] = []
        for entry in node:
            if not isinstance(entry, dict):
                raise corrupt(f"an entry of '{list_name}' is not an object")
            path = entry.get("path")
            if not isinstance(path, str):
                raise corrupt(f"an entry of '{list_name}' has no path")
            why = unsafe_relative_path(path)
            if why is not None:
                raise outside(list_name, path, why)
            out.append((path, long(entry, "size"), entry))
        return out

    if text("format") != RECORD_FORMAT:
        raise corrupt(f"field 'format' is not {RECORD_FORMAT}")
    version = long(root, "version")
    if version not in READABLE_FORMAT_VERSIONS:
        raise corrupt(
            f"it has format version {version}, which this txcommit (reads versions "
            f"{', '.join(map(str, READABLE_FORMAT_VERSIONS))}) does not understand; upgrade "
            "the plugin"
        )
    txn = text("txn")
    if not is_valid_txn(txn):
        raise corrupt(f"field 'txn' is not a transaction id: '{txn}'")
    if expected_txn is not None and txn != expected_txn:
        raise corrupt(f"it names transaction '{txn}' but its file name says '{expected_txn}'")
    added = files("added")
    declared = long(root, "files")
    if declared != len(added):
        raise corrupt(f"it declares {declared} files but lists {len(added)}")
    app_id = root.get("appId")
    schema = root.get("schema")
    if schema is not None and not isinstance(schema, str):
        raise corrupt("field 'schema' is not a string")
    record = CommitRecord(
        txn=txn,
        token=text("token"),
        job_id=text("jobId"),
        started_at=long(root, "startedAt"),
        committed_at=long(root, "committedAt"),
        added=added,
        app_id=app_id if isinstance(app_id, str) else None,
        writer=text("writer"),
        schema=schema,
    )
    if version == 1:
        if expected_sequence is not None:
            raise corrupt("a version 1 record cannot be a replacing commit (it has no sequence)")
        return record
    return _decode_version_2(
        root, record, version, expected_sequence, corrupt, text, long, removed_files, outside
    )


def _decode_version_2(
    root: dict[str, Any],
    record: CommitRecord,
    version: int,
    expected_sequence: int | None,
    corrupt: Any,
    text: Any,
    long: Any,
    removed_files: Any,
    outside: Any,
) -> CommitRecord:
    """The version 2 (and 3) fields of ``root`` added to ``record`` (the helpers raise the
    errors of :func:`decode_record`)."""
    operation = text("operation")
    if operation not in OPERATIONS:
        raise corrupt(f"field 'operation' is '{operation}', not one of {', '.join(OPERATIONS)}")
    write_id: str | None = None
    if "writeId" in root:
        write_id = text("writeId")
        if not is_valid_write_id(write_id):
            raise corrupt(f"field 'writeId' is not a valid write id: '{write_id}'")
    if "sequence" not in root:  # not a replacing commit (JVM: no Replacement)
        if operation in REPLACING_OPERATIONS:
            raise corrupt(
                f"operation '{operation}' replaces data, but the record has no 'sequence'"
            )
        restored_extra = [k for k in _RESTORED_FIELDS if k in root]
        if restored_extra:
            raise corrupt(f"it has '{restored_extra[0]}' but no 'sequence'")
        extra = [k for k in _REPLACING_FIELDS if k in root]
        if extra:
            raise corrupt(f"it has {', '.join(extra)} but no 'sequence'")
        if expected_sequence is not None:
            raise corrupt("it is in replace/ but is not a replacing commit (it has no 'sequence')")
        return replace(record, operation=operation, write_id=write_id)
    sequence = long(root, "sequence")
    if sequence < 1:
        raise corrupt(f"field 'sequence' is {sequence}; sequences start at 1")
    if expected_sequence is not None and sequence != expected_sequence:
        raise corrupt(f"it has sequence {sequence} but its file name says {expected_sequence}")
    scope_node = root.get("scope")
    if not isinstance(scope_node, list) or not all(isinstance(d, str) for d in scope_node):
        raise corrupt("field 'scope' is missing or not a list of directories")
    for d in scope_node:
        why = unsafe_relative_path(d) if d != "" else None
        if why is not None:
            raise outside("scope", d, why)
    removed = removed_files()
    declared = long(root, "removedFiles")
    if declared != len(removed):
        raise corrupt(f"it declares {declared} removed files but lists {len(removed)}")
    long(root, "removedBytes")
    return replace(
        record,
        operation=operation,
        write_id=write_id,
        sequence=sequence,
        scope=tuple(scope_node),
        removed=removed,
        restored=_restored(root, version, removed, corrupt, long, removed_files),
    )


def _restored(
    root: dict[str, Any],
    version: int,
    removed: tuple[RemovedFile, ...],
    corrupt: Any,
    long: Any,
    removed_files: Any,
) -> tuple[RemovedFile, ...]:
    """Format 3 (I31): the files a restore re-adds, each named like a removal; a file without
    a txn id by its identity, and never one the same record removes."""
    if version < RESTORE_FORMAT_VERSION:
        for k in _RESTORED_FIELDS:
            if k in root:
                raise corrupt(
                    f"it has '{k}', which needs format version {RESTORE_FORMAT_VERSION}, but is "
                    f"version {version} (a reader of version {version} would not see the "
                    "restored files)"
                )
        return ()
    restored: tuple[RemovedFile, ...] = removed_files("restored")
    declared = long(root, "restoredFiles")
    if declared != len(restored):
        raise corrupt(f"it declares {declared} restored files but lists {len(restored)}")
    for f in restored:
        if f.modified_at is None and not f.has_txn:
            raise corrupt(
                f"it restores '{f.path}', a file without a txn id, without its 'modifiedAt'"
            )
    removed_paths = {f.path for f in removed}
    for f in restored:
        if f.path in removed_paths:
            raise corrupt(f"it both removes and restores '{f.path}'")
    return restored


_REPLACING_FIELDS = ("scope", "removedFiles", "removedBytes", "removed")
_RESTORED_FIELDS = ("restored", "restoredFiles")
