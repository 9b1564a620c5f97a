"""Multi-table transactions as a reader sees them (docs/protocol.md, I33, I35): a *prepared*
record (format 4, with ``group``) commits nothing by itself; its group's *decision*
(``<dir>/_txcommit/groups/<group>.json``, created once with the store's exclusive primitive)
does, for every table of the group at once: ``committed`` makes visible the records it names in
``participants``, ``aborted`` none of them. A decision never changes, so a decided outcome is
kept for the life of the process; a group not decided yet is asked once per view.

``Decision.scala`` is the JVM's codec; both are held to conformance/vectors/decisions.json."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from txcommit.adapters import Store, open_store
from txcommit.errors import CorruptDecisionError
from txcommit.table.jackson import check_format, long_field, pretty, strict_object, text_field
from txcommit.table.names import is_valid_txn
from txcommit.table.records import CommitRecord, GroupRef

DECISION_FORMAT = "txcommit-decision"
DECISION_FORMAT_VERSION = 1
COMMITTED = "committed"
ABORTED = "aborted"
#: Decided outcomes kept in the process (as the JVM's ``Groups`` cache).
DECISION_CACHE_LIMIT = 100_000


@dataclass(frozen=True)
class Participant:
    """A write of a committed group: its table, its txn and, for a replacing commit, the
    ``replace/`` sequence of its record."""

    table: str
    txn: str
    sequence: int | None = None


@dataclass(frozen=True)
class Decision:
    """A group's decision (``Decision.scala``)."""

    group: str
    outcome: str
    token: str
    decided_at: int
    decided_by: str
    app_id: str | None
    writer: str
    participants: tuple[Participant, ...] = field(default_factory=tuple)

    @property
    def committed(self) -> bool:
        return self.outcome == COMMITTED

    def commits(self, txn: str) -> bool:
        """Whether ``txn``'s prepared record is committed by this decision."""
        return self.committed and any(p.txn == txn for p in self.participants)


def encode_decision(d: Decision) -> bytes:
    """The decision as the JVM's ``Decision.encode`` writes it, byte for byte (the Python side
    never decides: this is for tests and tools that lay a log out)."""
    fields: list[tuple[str, Any]] = [
        ("format", DECISION_FORMAT),
        ("version", DECISION_FORMAT_VERSION),
        ("group", d.group),
        ("outcome", d.outcome),
        ("token", d.token),
        ("decidedAt", d.decided_at),
        ("decidedBy", d.decided_by),
    ]
    if d.app_id is not None:
        fields.append(("appId", d.app_id))
    fields.append(("writer", d.writer))
    participants: list[list[tuple[str, Any]]] = []
    for p in d.participants:
        entry: list[tuple[str, Any]] = [("table", p.table), ("txn", p.txn)]
        if p.sequence is not None:
            entry.append(("sequence", p.sequence))
        participants.append(entry)
    fields.append(("participants", participants))
    return pretty(fields, 0).encode("utf-8")


def decode_decision(data: bytes, where: str, group: str) -> Decision:
    """Decodes the decision of ``group`` stored at ``where`` (named in every error), strictly,
    with the rules and messages of ``Decision.decode``."""

    def corrupt(why: str) -> CorruptDecisionError:
        return CorruptDecisionError(
            f"txcommit: decision {where} is corrupt: {why}. The transaction it decides stays "
            "undecided (its writes invisible) until it is repaired: restore it from a backup, or "
            "delete it to let the transaction be decided again (aborted, once its lease ran out)."
        )

    root = strict_object(data, corrupt)
    check_format(root, DECISION_FORMAT, DECISION_FORMAT_VERSION, corrupt)
    g = text_field(root, "group", corrupt)
    if g != group:
        raise corrupt(f"it decides group '{g}' but its file name says '{group}'")
    outcome = text_field(root, "outcome", corrupt)
    if outcome not in (COMMITTED, ABORTED):
        raise corrupt(f"field 'outcome' is '{outcome}', not {COMMITTED} or {ABORTED}")
    node = root.get("participants")
    if not isinstance(node, list):
        raise corrupt("field 'participants' is missing or not a list")
    participants = []
    for p in node:
        if not isinstance(p, dict):
            raise corrupt("an entry of 'participants' is not an object")
        txn = text_field(p, "txn", corrupt)
        if not is_valid_txn(txn):
            raise corrupt(f"participant txn '{txn}' is not a transaction id")
        table = text_field(p, "table", corrupt)
        if not table:
            raise corrupt(f"participant {txn} names no table")
        sequence = None
        if "sequence" in p:
            sequence = long_field(p, "sequence", corrupt)
            if sequence < 1:
                raise corrupt(f"participant {txn} has sequence {sequence}; sequences start at 1")
        participants.append(Participant(table, txn, sequence))
    app_id = root.get("appId")
    return Decision(
        group=g,
        outcome=outcome,
        token=text_field(root, "token", corrupt),
        decided_at=long_field(root, "decidedAt", corrupt),
        decided_by=text_field(root, "decidedBy", corrupt),
        app_id=app_id if isinstance(app_id, str) else None,
        writer=text_field(root, "writer", corrupt),
        participants=tuple(participants),
    )


_decided: dict[str, Decision] = {}
_decided_lock = threading.Lock()


class Decisions:
    """How one view judges prepared records: each group's decision read once (one GET), a
    decided one kept for the process. A decision lives where its record names it, possibly on
    another store than the table's: it is read with the view's storage options."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self._options = dict(options or {})
        self._asked: dict[str, Decision | None] = {}
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()

    def decision(self, ref: GroupRef) -> Decision | None:
        """The decision of ``ref``'s group as this view knows it (None: not decided when
        asked)."""
        with _decided_lock:
            known = _decided.get(ref.decision)
        if known is not None:
            return known
        with self._lock:
            if ref.decision in self._asked:
                return self._asked[ref.decision]
        directory, _, name = ref.decision.rpartition("/")
        data = self._store(directory).read(name)
        found = None if data is None else decode_decision(data, ref.decision, ref.id)
        with self._lock:
            self._asked[ref.decision] = found
        if found is not None:
            with _decided_lock:
                if len(_decided) >= DECISION_CACHE_LIMIT:
                    _decided.clear()
                _decided[ref.decision] = found
        return found

    def decision_times(self, refs: list[GroupRef]) -> dict[str, int]:
        """The store's times (epoch ms) of the decisions of ``refs``, by decision URL: one
        listing per directory of decisions (``Groups.decisionTimes``)."""
        out: dict[str, int] = {}
        by_dir: dict[str, list[GroupRef]] = {}
        for r in refs:
            by_dir.setdefault(r.decision.rpartition("/")[0], []).append(r)
        for directory, rs in by_dir.items():
            listed = {f.key: f.mtime_ns for f in self._store(directory).list("")}
            for r in rs:
                at = listed.get(r.decision.rpartition("/")[2])
                if at is not None and at > 0:
                    out[r.decision] = at // 1_000_000
        return out

    def _store(self, directory: str) -> Store:
        with self._lock:
            store = self._stores.get(directory)
        if store is None:
            store = open_store(directory, **self._options)
            with self._lock:
                self._stores[directory] = store
        return store

    def forget_undecided(self) -> None:
        """Ask again every group this view found undecided (its logs were listed again)."""
        with self._lock:
            self._asked = {k: v for k, v in self._asked.items() if v is not None}

    def committed(self, record: CommitRecord) -> bool:
        """Whether ``record`` commits: it is not prepared, or its group committed it."""
        if record.group is None:
            return True
        d = self.decision(record.group)
        return d is not None and d.commits(record.txn)


__all__ = ["Decision", "Decisions", "Participant", "decode_decision", "encode_decision"]
