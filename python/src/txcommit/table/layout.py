"""Where a table's transaction log lives (``LogLayout.scala``):
``<table>/_txcommit/{commits,pending,aborted}/<txn>.json``,
``<table>/_txcommit/replace/<sequence, 20 digits>.json``,
``<table>/_txcommit/checkpoints/<number, 20 digits>.json``,
``<table>/_txcommit/properties/<number, 20 digits>.json`` and ``<table>/_SUCCESS``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from txcommit.paths import LOG_DIR_NAME, join
from txcommit.table.names import is_valid_txn

SUCCESS_NAME = "_SUCCESS"
SEQUENCE_DIGITS = 20
_SEQUENCE_NAME = re.compile(r"[0-9]{20}\.json")


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
    def properties_dir(self) -> str:
        return join(self.log_dir, "properties")

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

    def properties(self, number: int) -> str:
        """``properties/<number>.json``, the number zero-padded to 20 digits."""
        return join(self.properties_dir, checkpoint_name(number))


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
