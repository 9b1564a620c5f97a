"""The file rules of a txcommit table, mirrored from the JVM plugin (``io.txcommit.log``).

Everything here must agree with the Scala code byte for byte, because the JVM writes what the
Python readers, the CLI and the conformance kit read:

* ``LogLayout`` (``LogLayout.scala``): ``<table>/_txcommit/{commits,pending,aborted}/<txn>.json``,
  ``<table>/_txcommit/replace/<sequence, 20 digits>.json``,
  ``<table>/_txcommit/checkpoints/<number, 20 digits>.json`` and ``<table>/_SUCCESS``;
* transaction ids (``TxnId.scala``): 16 characters of ``[0-9a-z]``, 8 of base-36 epoch
  milliseconds then 8 random ones;
* data file names (``DataFileName.scala``):
  ``{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}``;
* commit records (``RecordCodec.scala``, ``CommitRecord.scala``): JSON written with Jackson's
  default pretty printer, decoded strictly: a record that is truncated, not JSON, of an unknown
  format or version, about another transaction, inconsistent, or naming a path outside its
  table is refused with :class:`~txcommit.errors.CorruptCommitRecordError` naming the file;
* checkpoints (``CheckpointCodec.scala``, ``Checkpoint.scala``): the committed state up to a
  point, in the same JSON layout and as strictly decoded
  (:class:`~txcommit.errors.CorruptCheckpointError`).

Paths and URLs, which the adapters need too, are :mod:`txcommit.paths`.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from txcommit._names import IGNORE_CORRUPT_RECORDS_CONF
from txcommit.errors import CorruptCheckpointError, CorruptCommitRecordError
from txcommit.paths import LOG_DIR_NAME, join, unsafe_relative_path

SUCCESS_NAME = "_SUCCESS"
RECORD_FORMAT = "txcommit-commit-record"
RECORD_FORMAT_VERSION = 2
#: Versions a decoder accepts: 1 (appends only, before replacing commits) and 2.
READABLE_FORMAT_VERSIONS = (1, 2)
#: ``operation`` of a record: ``append`` is the only one of version 1 records.
OPERATIONS = ("append", "overwrite", "overwrite-partitions", "write-id", "fence")
#: Operations that need a sequence: replacing commits. A ``fence`` (VACUUM's claim on a
#: transaction it cleaned up as never committed) commits nothing, in ``commits/`` and in
#: ``replace/`` alike.
REPLACING_OPERATIONS = ("overwrite", "overwrite-partitions", "write-id")
WRITE_ID_OPTION = "txcommit.writeId"
SEQUENCE_DIGITS = 20
CHECKPOINT_FORMAT = "txcommit-checkpoint"
CHECKPOINT_FORMAT_VERSION = 1

_TXN = re.compile(r"[0-9a-z]{16}")
# DOTALL: a name may hold line terminators, and the JVM's DataFileName matches them alike.
_DATA_FILE = re.compile(r".*-tid-([0-9a-z]{16})-([0-9]+)(?:[-.].*)?", re.DOTALL)
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_WRITE_ID = re.compile(r"[A-Za-z0-9._:@=+-]{1,200}")
_SEQUENCE_NAME = re.compile(r"[0-9]{20}\.json")


# --- transaction ids ------------------------------------------------------------------------


def is_valid_txn(txn: str) -> bool:
    """Whether ``txn`` is a transaction id: exactly 16 characters of ``[0-9a-z]``."""
    return isinstance(txn, str) and _TXN.fullmatch(txn) is not None


def generate_txn(now_millis: int | None = None) -> str:
    """A new transaction id, time-ordered like the JVM's ``TxnId.generate``."""
    millis = int(time.time() * 1000) if now_millis is None else now_millis
    if millis < 0:
        raise ValueError(f"now_millis must not be negative, got {millis}")
    digits = ""
    while True:
        millis, rest = divmod(millis, 36)
        digits = _BASE36[rest] + digits
        if millis == 0:
            break
    # Like the JVM: left-padded to 8, and (past the year 5188) longer rather than truncated.
    time_part = digits.rjust(8, "0")
    return time_part + "".join(secrets.choice(_BASE36) for _ in range(8))


def check_write_id(write_id: str, option: str = WRITE_ID_OPTION) -> str:
    """``write_id`` if it is a valid write id (1..200 characters of ``[A-Za-z0-9._:@=+-]``),
    else a ValueError naming ``option`` and the value."""
    if not isinstance(write_id, str) or _WRITE_ID.fullmatch(write_id) is None:
        raise ValueError(
            f"txcommit: {option}={write_id!r} is not a valid write id: use 1 to 200 characters "
            "of letters, digits and . _ : @ = + - (for example 'daily-2026-11-20')"
        )
    return write_id


# --- data file names ------------------------------------------------------------------------


def data_file_name(prefix: str, split: int, txn: str, attempt: int, suffix: str) -> str:
    """``{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}``, as the JVM names data files."""
    return f"{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}"


def txn_of(name: str) -> str | None:
    """The transaction id of a txcommit data file name, or None for any other file."""
    m = _DATA_FILE.fullmatch(name)
    return m.group(1) if m else None


# --- the log's layout -----------------------------------------------------------------------


@dataclass(frozen=True)
class LogLayout:
    """Where a table's transaction log lives (``LogLayout.scala``).

    ``table`` is a store key, a local path or a URL; every path below is ``table`` joined with
    ``/`` and the log's names.
    """

    table: str

    @property
    def log_dir(self) -> str:
        return join(self.table, LOG_DIR_NAME)

    @property
    def commits_dir(self) -> str:
        return join(self.log_dir, "commits")

    @property
    def pending_dir(self) -> str:
        return join(self.log_dir, "pending")

    @property
    def aborted_dir(self) -> str:
        return join(self.log_dir, "aborted")

    @property
    def replace_dir(self) -> str:
        return join(self.log_dir, "replace")

    @property
    def checkpoints_dir(self) -> str:
        return join(self.log_dir, "checkpoints")

    @property
    def success(self) -> str:
        return join(self.table, SUCCESS_NAME)

    def commit_record(self, txn: str) -> str:
        return join(self.commits_dir, f"{txn}.json")

    def pending_record(self, txn: str) -> str:
        return join(self.pending_dir, f"{txn}.json")

    def aborted_record(self, txn: str) -> str:
        return join(self.aborted_dir, f"{txn}.json")

    def replace_record(self, sequence: int) -> str:
        """``replace/<sequence>.json``, the sequence zero-padded to 20 digits."""
        return join(self.replace_dir, replace_record_name(sequence))

    def checkpoint(self, number: int) -> str:
        """``checkpoints/<number>.json``, the number zero-padded to 20 digits."""
        return join(self.checkpoints_dir, checkpoint_name(number))


def replace_record_name(sequence: int) -> str:
    """``00000000000000000001.json`` for sequence 1 (sequences start at 1)."""
    if not 1 <= sequence < 10**SEQUENCE_DIGITS:
        raise ValueError(f"a replace sequence is 1 to {10**SEQUENCE_DIGITS - 1}, got {sequence}")
    return f"{sequence:0{SEQUENCE_DIGITS}d}.json"


def sequence_of_record_name(name: str) -> int | None:
    """The sequence of a file in ``replace/`` named ``<20 digits>.json`` (not 0), else None."""
    if _SEQUENCE_NAME.fullmatch(name) is None:
        return None
    sequence = int(name[:SEQUENCE_DIGITS])
    return sequence if sequence >= 1 else None


def checkpoint_name(number: int) -> str:
    """``00000000000000000001.json`` for checkpoint 1 (numbers start at 1, like sequences)."""
    if not 1 <= number < 10**SEQUENCE_DIGITS:
        raise ValueError(f"a checkpoint number is 1 to {10**SEQUENCE_DIGITS - 1}, got {number}")
    return f"{number:0{SEQUENCE_DIGITS}d}.json"


def checkpoint_of_name(name: str) -> int | None:
    """The number of a file in ``checkpoints/`` named ``<20 digits>.json`` (not 0), else None."""
    return sequence_of_record_name(name)


def txn_of_record_name(name: str) -> str | None:
    """The txn of a file in ``commits/`` when its name is ``<valid txn>.json``, else None."""
    if not name.endswith(".json"):
        return None
    txn = name[: -len(".json")]
    return txn if is_valid_txn(txn) else None


# --- commit records -------------------------------------------------------------------------


@dataclass(frozen=True)
class AddedFile:
    """One data file a transaction adds, relative to the table directory."""

    path: str
    size: int


@dataclass(frozen=True)
class RemovedFile:
    """One file a replacing transaction logically deletes, relative to the table directory.

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


class Removals:
    """The removals of a log (its checkpoint's and its replacing commits'), by path."""

    def __init__(self, removed: Iterable[RemovedFile]) -> None:
        self._by_path: dict[str, list[RemovedFile]] = {}
        for f in removed:
            self._by_path.setdefault(f.path, []).append(f)

    def hides(self, path: str, size: int, modified_at_ms: int | None) -> bool:
        return any(f.applies_to(size, modified_at_ms) for f in self._by_path.get(path, ()))


def _removed_entry(f: RemovedFile) -> list[tuple[str, Any]]:
    entry: list[tuple[str, Any]] = [("path", f.path), ("size", f.size)]
    if f.modified_at is not None:
        entry.append(("modifiedAt", f.modified_at))
    return entry


def _removed_of(
    entry: dict[str, Any], path: str, size: int, corrupt: Callable[[str], Exception]
) -> RemovedFile:
    """A ``removed`` entry with its optional ``modifiedAt``, as the JVM's codecs read it."""
    at = entry.get("modifiedAt")
    if at is not None and (not isinstance(at, int) or isinstance(at, bool) or at < 0):
        raise corrupt("an entry of 'removed' has a 'modifiedAt' that is not a time in milliseconds")
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
    for the whole table) and ``removed`` (the files it logically deletes). ``schema``: the
    table's schema as of this commit (Spark DDL), absent in records written before the schema
    guard and for formats that give none (unknown: nothing is checked against it).
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
    def directories(self) -> tuple[str, ...]:
        """The distinct directories (relative to the table; "" is the table) holding files."""
        return tuple(sorted({f.path.rpartition("/")[0] for f in self.added}))


def encode_record(record: CommitRecord) -> bytes:
    """The record as the JVM's ``RecordCodec.encode`` writes it (format version 2), byte for
    byte: the version 1 fields in their order, then ``operation``, ``writeId`` (only with a
    write id) and, for a replacing commit only, ``sequence``, ``scope``, ``removedFiles``,
    ``removedBytes`` and ``removed``; last ``schema``, when the record carries one."""
    if record.operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}: {record.operation!r}")
    if record.operation in REPLACING_OPERATIONS and record.sequence is None:
        raise ValueError(f"the {record.operation} of {record.txn} has no sequence")
    if record.sequence is None and (record.removed or record.scope):
        raise ValueError(f"{record.txn} has a scope or removed files but no sequence")
    fields: list[tuple[str, Any]] = [
        ("format", RECORD_FORMAT),
        ("version", RECORD_FORMAT_VERSION),
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
            ("removed", [_removed_entry(f) for f in record.removed]),
        ]
    if record.schema is not None:
        fields.append(("schema", record.schema))
    return _jackson_pretty(fields, 0).encode("utf-8")


def _jackson_string(s: str) -> str:
    """A JSON string as Jackson writes it: UTF-8 as is, short escapes, else ``\\u00XX``."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20:
            short = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(code)
            out.append(short if short else f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


@dataclass(frozen=True)
class _Object:
    """A nested JSON object as a field's value (its key/value pairs, in order)."""

    fields: list[tuple[str, Any]]


def _jackson_pretty(fields: Sequence[tuple[str, Any]], depth: int) -> str:
    """An object in the layout of Jackson's ``DefaultPrettyPrinter`` (2-space indent,
    ``"key" : value``, arrays as ``[ {`` ... ``}, {`` ... ``} ]``, an empty array ``[ ]``)."""
    pad = "  " * (depth + 1)
    lines = []
    for key, value in fields:
        if isinstance(value, list):
            if not value:
                rendered = "[ ]"
            else:
                rendered = "[ " + ", ".join(_jackson_value(v, depth + 1) for v in value) + " ]"
        elif isinstance(value, str):
            rendered = _jackson_string(value)
        elif value is None:
            rendered = "null"
        elif isinstance(value, _Object):
            rendered = _jackson_pretty(value.fields, depth + 1)
        else:
            rendered = str(int(value))
        lines.append(f"{pad}{_jackson_string(key)} : {rendered}")
    return "{\n" + ",\n".join(lines) + "\n" + "  " * depth + "}"


def _jackson_value(value: Any, depth: int) -> str:
    """An array element: a string, or an object (a list of key/value pairs)."""
    return _jackson_string(value) if isinstance(value, str) else _jackson_pretty(value, depth)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_object(data: bytes, corrupt: Callable[[str], Exception]) -> dict[str, Any]:
    """``data`` as a JSON object, strictly (NaN and Infinity are not JSON), or ``corrupt``."""
    try:
        root = json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, TypeError) as e:
        raise corrupt(f"it is not complete JSON ({len(data)} bytes; truncated?)") from e
    if not isinstance(root, dict):
        raise corrupt("it is not a JSON object")
    return root


def _text(node: dict[str, Any], name: str, corrupt: Callable[[str], Exception]) -> str:
    v = node.get(name)
    if not isinstance(v, str):
        raise corrupt(f"field '{name}' is missing or not a string")
    return v


def _long(node: dict[str, Any], name: str, corrupt: Callable[[str], Exception]) -> int:
    """A JSON integer that fits a JVM long (booleans are not numbers here)."""
    v = node.get(name)
    if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
        raise corrupt(f"field '{name}' is missing or not a number")
    return v


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

    root = _json_object(data, corrupt)

    def text(field_name: str) -> str:
        return _text(root, field_name, corrupt)

    def long(node: dict[str, Any], field_name: str) -> int:
        return _long(node, field_name, corrupt)

    def outside(list_name: str, path: str, why: str) -> CorruptCommitRecordError:
        return corrupt(
            f"it names a file outside its table directory ('{path}' in '{list_name}': {why}); "
            "nothing outside the table is read or deleted because of it"
        )

    def files(list_name: str) -> tuple[AddedFile, ...]:
        return tuple(AddedFile(p, n) for p, n, _ in entries(list_name))

    def removed_files() -> tuple[RemovedFile, ...]:
        return tuple(_removed_of(e, p, n, corrupt) for p, n, e in entries("removed"))

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
        root, record, expected_sequence, corrupt, text, long, removed_files, outside
    )


def _decode_version_2(
    root: dict[str, Any],
    record: CommitRecord,
    expected_sequence: int | None,
    corrupt: Any,
    text: Any,
    long: Any,
    removed_files: Any,
    outside: Any,
) -> CommitRecord:
    """The version 2 fields of ``root`` added to ``record`` (the helpers raise the errors of
    :func:`decode_record`)."""
    operation = text("operation")
    if operation not in OPERATIONS:
        raise corrupt(f"field 'operation' is '{operation}', not one of {', '.join(OPERATIONS)}")
    write_id: str | None = None
    if "writeId" in root:
        write_id = text("writeId")
        if _WRITE_ID.fullmatch(write_id) is None:
            raise corrupt(f"field 'writeId' is not a valid write id: '{write_id}'")
    if "sequence" not in root:  # not a replacing commit (JVM: no Replacement)
        if operation in REPLACING_OPERATIONS:
            raise corrupt(
                f"operation '{operation}' replaces data, but the record has no 'sequence'"
            )
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
    )


_REPLACING_FIELDS = ("scope", "removedFiles", "removedBytes", "removed")


# --- checkpoints ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SchemaMark:
    """A schema a committed record carries, with the record's txn and ``committedAt``
    (``SchemaMark`` on the JVM): the table's schema is the one that committed last."""

    txn: str
    committed_at: int
    ddl: str


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint of a table's log (``_txcommit/checkpoints/<number>.json``,
    ``Checkpoint.scala``): the committed state up to a point, so a reader reads it and the
    records after it instead of one record per transaction. Derived from the records, which
    stay in the log; created exclusively, never rewritten.

    ``through`` is the highest ``replace/`` sequence folded in (0: none). ``committed`` holds
    every transaction it covers, each with exactly its files still live after the replacing
    commits up to ``through`` (possibly none: a fence, or every file replaced). ``removed``
    holds the paths those replacing commits hide that no covered transaction accounts for
    (files without a transaction id, files of transactions it does not cover). ``created_at``
    is when it was published (epoch milliseconds, its writer's clock). ``schema`` is the
    table's schema as of the transactions it covers (docs/protocol.md, I27): the mark of the
    covered record carrying a schema that committed last, or None when none carries one;
    ``schema_known`` is False for a checkpoint written before checkpoints carried it (then
    ``schema`` is None and says nothing).
    """

    number: int
    created_at: int
    app_id: str | None
    writer: str
    through: int
    committed: Mapping[str, tuple[AddedFile, ...]] = field(default_factory=dict)
    removed: tuple[RemovedFile, ...] = field(default_factory=tuple)
    schema: SchemaMark | None = None
    schema_known: bool = False

    @property
    def files(self) -> int:
        """The number of live files it lists, over every covered transaction."""
        return sum(len(fs) for fs in self.committed.values())

    def covers(self, txn: str) -> bool:
        return txn in self.committed

    @cached_property
    def live_paths(self) -> Mapping[str, frozenset[str]]:
        """Each covered transaction's live paths."""
        return {txn: frozenset(f.path for f in fs) for txn, fs in self.committed.items()}


def _java_order(path: str) -> bytes:
    # The JVM sorts by String.compareTo (UTF-16 code units), which differs from code point
    # order for characters beyond U+FFFF; big-endian UTF-16 bytes sort like code units.
    return path.encode("utf-16-be", "surrogatepass")


def _file_entries(files: Sequence[AddedFile]) -> list[list[tuple[str, Any]]]:
    ordered = sorted(files, key=lambda f: _java_order(f.path))
    return [[("path", f.path), ("size", f.size)] for f in ordered]


def _distinct_removals(removed: Sequence[RemovedFile]) -> list[RemovedFile]:
    """One entry per distinct file, by path then time (``Removals.distinct``)."""

    def key(f: RemovedFile) -> tuple[bytes, int, int]:
        at = -(2**63) if f.modified_at is None else f.modified_at
        return (_java_order(f.path), at, f.size)

    return sorted(set(removed), key=key)


def encode_checkpoint(checkpoint: Checkpoint) -> bytes:
    """The checkpoint as the JVM's ``CheckpointCodec.encode`` writes it, byte for byte:
    transactions sorted by id, each one's files and the removed files sorted by path."""
    c = checkpoint
    if c.number < 1:
        raise ValueError(f"a checkpoint number starts at 1, got {c.number}")
    if c.through < 0:
        raise ValueError(f"a checkpoint's through is 0 (none) or a sequence, got {c.through}")
    invalid = [t for t in c.committed if not is_valid_txn(t)]
    if invalid:
        raise ValueError(f"checkpoint {c.number} covers invalid transaction ids: {invalid}")
    fields: list[tuple[str, Any]] = [
        ("format", CHECKPOINT_FORMAT),
        ("version", CHECKPOINT_FORMAT_VERSION),
        ("checkpoint", c.number),
        ("createdAt", c.created_at),
    ]
    if c.app_id is not None:
        fields.append(("appId", c.app_id))
    fields += [
        ("writer", c.writer),
        ("through", c.through),
        ("transactions", len(c.committed)),
        ("files", c.files),
        (
            "committed",
            [
                [("txn", txn), ("files", _file_entries(c.committed[txn]))]
                for txn in sorted(c.committed)
            ],
        ),
        ("removedFiles", len(removals := _distinct_removals(c.removed))),
        ("removed", [_removed_entry(f) for f in removals]),
    ]
    if c.schema_known:
        m = c.schema
        fields.append(
            (
                "schema",
                None
                if m is None
                else _Object([("txn", m.txn), ("committedAt", m.committed_at), ("ddl", m.ddl)]),
            )
        )
    elif c.schema is not None:
        raise ValueError(f"checkpoint {c.number} has a schema but schema_known is False")
    return _jackson_pretty(fields, 0).encode("utf-8")


def decode_checkpoint(data: bytes, where: str, expected_number: int) -> Checkpoint:
    """Decodes checkpoint ``expected_number`` (the number of its file name), stored at
    ``where`` (named in every error). Strict, with the checks, their order and the reasons of
    ``CheckpointCodec.decode`` (conformance/vectors/checkpoints.json): a checkpoint is used
    whole or not at all, so any doubt refuses it with :class:`CorruptCheckpointError`."""

    def corrupt(why: str) -> CorruptCheckpointError:
        return CorruptCheckpointError(
            f"txcommit: checkpoint {where} is corrupt: {why}. Readers skip it and use the "
            "previous checkpoint or the commit records, which it only summarises (reads are "
            "exact, only slower); the next checkpoint supersedes it, or delete it."
        )

    root = _json_object(data, corrupt)

    def text(node: dict[str, Any], name: str) -> str:
        return _text(node, name, corrupt)

    def long(node: dict[str, Any], name: str) -> int:
        return _long(node, name, corrupt)

    def array(node: dict[str, Any], name: str) -> list[Any]:
        v = node.get(name)
        if not isinstance(v, list):
            raise corrupt(f"field '{name}' is missing or not a list")
        return v

    def files(node: dict[str, Any], name: str) -> tuple[AddedFile, ...]:
        return tuple(AddedFile(p, n) for p, n, _ in entries(node, name))

    def entries(node: dict[str, Any], name: str) -> list[tuple[str, int, dict[str, Any]]]:
        out: list[tuple[str, int, dict[str, Any]]] = []
        for entry in array(node, name):
            if not isinstance(entry, dict):
                raise corrupt(f"an entry of '{name}' is not an object")
            path = text(entry, "path")
            why = unsafe_relative_path(path)
            if why is not None:
                raise corrupt(
                    f"it names a file outside its table directory ('{path}': {why}); nothing "
                    "outside the table is read or deleted because of it"
                )
            out.append((path, long(entry, "size"), entry))
        return out

    if text(root, "format") != CHECKPOINT_FORMAT:
        raise corrupt(f"field 'format' is not {CHECKPOINT_FORMAT}")
    version = long(root, "version")
    if version != CHECKPOINT_FORMAT_VERSION:
        raise corrupt(
            f"it has format version {version}, which this txcommit (reads version "
            f"{CHECKPOINT_FORMAT_VERSION}) does not understand; upgrade the plugin"
        )
    recorded = long(root, "checkpoint")
    if recorded != expected_number:
        raise corrupt(f"its file name says checkpoint {expected_number} but it records {recorded}")
    committed: list[tuple[str, tuple[AddedFile, ...]]] = []
    for entry in array(root, "committed"):
        if not isinstance(entry, dict):
            raise corrupt("an entry of 'committed' is not an object")
        txn = text(entry, "txn")
        if not is_valid_txn(txn):
            raise corrupt(f"transaction '{txn}' is not a transaction id")
        committed.append((txn, files(entry, "files")))
    declared = long(root, "transactions")
    if declared != len(committed):
        raise corrupt(f"it declares {declared} transactions but lists {len(committed)}")
    by_txn: dict[str, tuple[AddedFile, ...]] = {}
    for txn, fs in committed:
        if txn in by_txn:
            raise corrupt(f"transaction '{txn}' is listed twice")
        by_txn[txn] = fs
    declared = long(root, "files")
    listed = sum(len(fs) for _, fs in committed)
    if declared != listed:
        raise corrupt(f"it declares {declared} files but lists {listed}")
    removed = tuple(_removed_of(e, p, n, corrupt) for p, n, e in entries(root, "removed"))
    declared = long(root, "removedFiles")
    if declared != len(removed):
        raise corrupt(f"it declares {declared} removed files but lists {len(removed)}")
    through = long(root, "through")
    if through < 0:
        raise corrupt(f"field 'through' is {through}; sequences start at 1 (0: none)")
    schema: SchemaMark | None = None
    schema_known = "schema" in root
    node = root.get("schema")
    if node is not None:
        if not isinstance(node, dict):
            raise corrupt("field 'schema' is not an object or null")
        txn = text(node, "txn")
        if txn not in by_txn:
            raise corrupt(f"its schema is of transaction '{txn}', which it does not cover")
        schema = SchemaMark(txn, long(node, "committedAt"), text(node, "ddl"))
    created_at = long(root, "createdAt")
    app_id = root.get("appId")
    return Checkpoint(
        number=expected_number,
        created_at=created_at,
        app_id=app_id if isinstance(app_id, str) else None,
        writer=text(root, "writer"),
        through=through,
        committed=by_txn,
        removed=removed,
        schema=schema,
        schema_known=schema_known,
    )


__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_FORMAT_VERSION",
    "OPERATIONS",
    "READABLE_FORMAT_VERSIONS",
    "RECORD_FORMAT",
    "RECORD_FORMAT_VERSION",
    "WRITE_ID_OPTION",
    "SUCCESS_NAME",
    "AddedFile",
    "Checkpoint",
    "check_write_id",
    "checkpoint_name",
    "checkpoint_of_name",
    "CommitRecord",
    "LogLayout",
    "data_file_name",
    "decode_checkpoint",
    "decode_record",
    "encode_checkpoint",
    "encode_record",
    "generate_txn",
    "is_valid_txn",
    "replace_record_name",
    "SchemaMark",
    "sequence_of_record_name",
    "txn_of",
    "txn_of_record_name",
]
