"""Checkpoints (``CheckpointCodec.scala``, ``Checkpoint.scala``): the committed state up to a
point, in the same JSON layout as commit records and as strictly decoded
(:class:`~txcommit.errors.CorruptCheckpointError`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from txcommit.errors import CorruptCheckpointError
from txcommit.paths import unsafe_relative_path
from txcommit.table.jackson import (
    JsonObject,
    check_format,
    long_field,
    pretty,
    strict_object,
    text_field,
)
from txcommit.table.names import is_valid_txn, txn_of
from txcommit.table.records import AddedFile, RemovedFile, removed_entry, removed_of

CHECKPOINT_FORMAT = "txcommit-checkpoint"
CHECKPOINT_FORMAT_VERSION = 1
#: How a table is read (``ReadMode`` on the JVM; docs/protocol.md, I32).
READS_LOG = "log"
READS_LISTING = "listing"
READ_MODES = (READS_LISTING, READS_LOG)


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
    commits up to ``through`` (possibly none: a fence, or every file replaced; a file a restore
    re-added is back in its transaction's list). ``removed`` holds the net removals as of
    ``through`` (restores folded in, I31) that no covered transaction accounts for (files
    without a transaction id, files of transactions it does not cover). ``created_at``
    is when it was published (epoch milliseconds, its writer's clock). ``schema`` is the
    table's schema as of the transactions it covers (docs/protocol.md, I27): the mark of the
    covered record carrying a schema that committed last, or None when none carries one;
    ``schema_known`` is False for a checkpoint written before checkpoints carried it (then
    ``schema`` is None and says nothing). ``reads`` is how the table is read (docs/protocol.md,
    I32): ``"log"`` (log-only) or ``"listing"``; None (a checkpoint that does not say) reads as
    ``"listing"``.
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
    reads: str | None = None

    @property
    def files(self) -> int:
        """The number of live files it lists, over every covered transaction."""
        return sum(len(fs) for fs in self.committed.values())

    def covers(self, txn: str) -> bool:
        return txn in self.committed

    @property
    def log_only(self) -> bool:
        """Whether the table is log-only as of this checkpoint (I32)."""
        return self.reads == READS_LOG

    @cached_property
    def named_plain(self) -> frozenset[str]:
        """The files without a txn id it names (adopted or restored into a log-only table)."""
        return frozenset(
            f.path
            for fs in self.committed.values()
            for f in fs
            if txn_of(f.path.rpartition("/")[2]) is None
        )

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
        ("removed", [removed_entry(f) for f in removals]),
    ]
    if c.schema_known:
        m = c.schema
        fields.append(
            (
                "schema",
                None
                if m is None
                else JsonObject([("txn", m.txn), ("committedAt", m.committed_at), ("ddl", m.ddl)]),
            )
        )
    elif c.schema is not None:
        raise ValueError(f"checkpoint {c.number} has a schema but schema_known is False")
    if c.reads is not None:
        if c.reads not in READ_MODES:
            raise ValueError(
                f"checkpoint {c.number}: reads is {c.reads!r}, not one of {READ_MODES}"
            )
        fields.append(("reads", c.reads))
    return pretty(fields, 0).encode("utf-8")


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

    root = strict_object(data, corrupt)

    def text(node: dict[str, Any], name: str) -> str:
        return text_field(node, name, corrupt)

    def long(node: dict[str, Any], name: str) -> int:
        return long_field(node, name, corrupt)

    def array(node: dict[str, Any], name: str) -> list[Any]:
        v = node.get(name)
        if not isinstance(v, list):
            raise corrupt(f"field '{name}' is missing or not a list")
        return v

    def files(node: dict[str, Any], name: str) -> tuple[AddedFile, ...]:
        # A million entries: the checks of `entries` inlined for the common entry (a safe path,
        # a size that fits a long); any other takes them one by one, for their errors.
        out: list[AddedFile] = []
        for entry in array(node, name):
            if type(entry) is dict:
                path, size = entry.get("path"), entry.get("size")
                if (
                    type(path) is str
                    and type(size) is int
                    and -(2**63) <= size < 2**63
                    and unsafe_relative_path(path) is None
                ):
                    out.append(AddedFile(path, size))
                    continue
            out.extend(AddedFile(p, n) for p, n, _ in entries({name: [entry]}, name))
        return tuple(out)

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

    check_format(root, CHECKPOINT_FORMAT, CHECKPOINT_FORMAT_VERSION, corrupt)
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
    removed = tuple(removed_of(e, p, n, corrupt) for p, n, e in entries(root, "removed"))
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
    reads = root.get("reads")
    if reads is not None and (not isinstance(reads, str) or reads not in READ_MODES):
        raise corrupt(
            f"field 'reads' is {json.dumps(reads)[:40]}, not one of {', '.join(sorted(READ_MODES))}"
        )
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
        reads=reads,
    )
