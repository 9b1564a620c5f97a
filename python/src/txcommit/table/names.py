"""Transaction ids, write ids and data file names, as the JVM plugin makes them
(``TxnId.scala``, ``WriteId.scala``, ``DataFileName.scala``): a transaction id is 16 characters
of ``[0-9a-z]``, 8 of base-36 epoch milliseconds then 8 random ones; a data file is named
``{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}``."""

from __future__ import annotations

import re
import secrets
import time

WRITE_ID_OPTION = "txcommit.writeId"

_TXN = re.compile(r"[0-9a-z]{16}")
# DOTALL: a name may hold line terminators, and the JVM's DataFileName matches them alike. After
# the attempt: ``-`` or ``.``, or ``_`` for a bucketed write (Spark's suffix ``_00002.c000...``).
_DATA_FILE = re.compile(r".*-tid-([0-9a-z]{16})-([0-9]+)(?:[-._].*)?", re.DOTALL)
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_WRITE_ID = re.compile(r"[A-Za-z0-9._:@=+-]{1,200}")


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


def is_valid_write_id(write_id: str) -> bool:
    """Whether ``write_id`` is a write id: 1 to 200 characters of ``[A-Za-z0-9._:@=+-]``."""
    return isinstance(write_id, str) and _WRITE_ID.fullmatch(write_id) is not None


def check_write_id(write_id: str, option: str = WRITE_ID_OPTION) -> str:
    """``write_id`` if it is a valid write id (1..200 characters of ``[A-Za-z0-9._:@=+-]``),
    else a ValueError naming ``option`` and the value."""
    if not is_valid_write_id(write_id):
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


def txn_started_at(txn: str) -> int | None:
    """When the transaction started (epoch ms), read from its id (``TxnId.startedAt``); None for
    an invalid id."""
    return int(txn[:8], 36) if is_valid_txn(txn) else None
