"""What a version of a table is (docs/protocol.md, I30), as the JVM's ``TableVersions`` says it.

A version is a commit point: an append's ``commits/<txn>.json``, a replacing commit's
``replace/<sequence>.json``, a write of a multi-table transaction its transaction's decision.
Versions are ordered by the time the STORE gave the record (the
modification time its listing returns: one clock for every writer, never a writer's), ties by
transaction id, with ``replace/`` records in sequence order (one the store dated before its
predecessor takes its predecessor's time). A listing without a time stands for it with the time
in the transaction id. ``txcommit.asOf`` (and ``dataset(as_of=...)``) names a version by its
transaction id, or by a time: the newest version dated at or before it.
Cases: ``conformance/vectors/versions.json``, which the JVM's TableVersionsSuite loads too.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from txcommit.table.names import is_valid_txn

_BASE36 = 36


@dataclass(frozen=True)
class TableVersion:
    """One version: its place (1-based), its transaction, the store's time of its commit point
    (epoch ms) and its ``replace/`` sequence (None for an append)."""

    number: int
    txn: str
    store_time: int
    sequence: int | None


@dataclass(frozen=True)
class AsOfTxn:
    """``as_of`` naming a transaction: the snapshot right after it committed."""

    text: str


@dataclass(frozen=True)
class AsOfTime:
    """``as_of`` naming a time: every commit the store dated at or before ``epoch_ms``."""

    text: str
    epoch_ms: int


AsOf = AsOfTxn | AsOfTime


def _known(txn: str, store_time: int | None) -> int:
    if store_time is not None and store_time > 0:
        return store_time
    return int(txn[:8], _BASE36) if is_valid_txn(txn) else 0


def order(
    appends: Iterable[tuple[str, int | None]],
    replaces: Iterable[tuple[int, str, int | None]],
    decided: Iterable[tuple[str, int | None, int | None]] = (),
) -> list[TableVersion]:
    """The versions of a table: ``appends`` are (txn, store time ms) of the ``commits/`` records
    that are not a replacing commit's copy nor a prepared record, ``replaces`` (sequence, txn,
    store time ms) of every ``replace/`` record that is not a prepared record, ``decided`` (txn,
    store time ms of its transaction's decision, sequence of a replacing one) of every prepared
    record its multi-table transaction committed: dated by the decision, the same in every table
    (I33), not by its place in ``replace/``."""
    a = sorted(
        [(_known(t, at), t, None) for t, at in appends]
        + [(_known(t, at), t, seq) for t, at, seq in decided],
        key=lambda x: (x[0], x[1]),
    )
    r: list[tuple[int, str, int | None]] = []
    latest = 0
    for seq, txn, at in sorted(replaces, key=lambda x: x[0]):
        latest = max(latest, _known(txn, at))  # sequence order is commit order (I23)
        r.append((latest, txn, seq))
    merged: list[tuple[int, str, int | None]] = []
    i = j = 0
    while i < len(a) or j < len(r):
        if j >= len(r) or (i < len(a) and (a[i][0], a[i][1]) < (r[j][0], r[j][1])):
            merged.append(a[i])
            i += 1
        else:
            merged.append(r[j])
            j += 1
    return [TableVersion(k + 1, txn, at, seq) for k, (at, txn, seq) in enumerate(merged)]


def of_txn(versions: list[TableVersion], txn: str) -> TableVersion | None:
    """The version ``txn`` committed as (its last, for a txn with several ``replace/``
    records)."""
    found = [v for v in versions if v.txn == txn]
    return found[-1] if found else None


def at_time(versions: list[TableVersion], epoch_ms: int) -> TableVersion | None:
    """The newest version the store dated at or before ``epoch_ms``."""
    found = None
    for v in versions:
        if v.store_time > epoch_ms:
            break
        found = v
    return found


def whole(
    versions: list[TableVersion], version: TableVersion, group_of: Mapping[str, str]
) -> TableVersion:
    """The version a snapshot as of ``version`` ends at: ``version``, or a later one where a
    multi-table transaction (``group_of``: a version's transaction, for the writes of one) has a
    write up to it and another after it. A transaction's writes to one table are versions of their
    own, all dated by its one decision; a snapshot holds all of them or none (I37)."""
    groups = [group_of.get(v.txn) for v in versions]
    last_of = {g: k for k, g in enumerate(groups) if g is not None}  # the last index wins
    last = version.number - 1
    i = 0
    while i <= last:
        g = groups[i]
        if g is not None:
            last = max(last, last_of[g])
        i += 1
    return versions[last]


def parse_as_of(value: str) -> AsOf | None:
    """``value`` as a transaction id (16 characters of 0-9 and a-z) or an ISO-8601 time (with
    ``Z`` or an offset; without one, UTC; a date alone: its start in UTC); None when it is
    neither."""
    v = value.strip()
    if is_valid_txn(v):
        return AsOfTxn(v)
    ms = _parse_time(v)
    return None if ms is None else AsOfTime(v, ms)


def _parse_time(v: str) -> int | None:
    if not v or not v[0].isdigit() or v.isdigit():
        return None
    text = v[:-1] + "+00:00" if v.endswith(("Z", "z")) else v
    try:
        if len(text) == 10:
            parsed = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
        else:
            parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    delta = parsed - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


__all__ = [
    "AsOf",
    "AsOfTime",
    "AsOfTxn",
    "TableVersion",
    "at_time",
    "of_txn",
    "order",
    "whole",
    "parse_as_of",
]
