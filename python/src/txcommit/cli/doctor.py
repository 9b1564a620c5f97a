"""``txcommit doctor PATH``: what a reader that knows nothing of txcommit sees in a table that
txcommit readers do not, and what removes it.

Engines that read a directory by listing it (Trino, Presto, Athena, Hive, Redshift Spectrum,
Spark without the plugin, pyarrow, DuckDB, polars) read every data file there: the files of
jobs that did not commit, of aborted jobs, of task attempts their job did not keep, and the
files an overwrite or a write-id re-run replaced. txcommit readers hide them (the reader rule,
docs/protocol.md) and VACUUM deletes them once they are older than its horizon.

    txcommit doctor /data/events
    txcommit doctor s3://bucket/events --endpoint http://127.0.0.1:9000 --json
    txcommit doctor /data/events --check   # exit status 3 while such files exist
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from txcommit._console import text
from txcommit.cli.ls import NOT_A_TABLE, add_table_arguments, human_bytes, open_or_report
from txcommit.table.view import TableFile, TableView

#: Exit status of ``--check`` when a plain listing shows files txcommit readers do not.
HIDDEN_FILES_FOUND = 3

#: VACUUM's default retention horizon (``Vacuum.DefaultRetainHours`` on the JVM).
DEFAULT_HORIZON_HOURS = 48

#: Why a data file is hidden from txcommit readers, in the order the report lists them.
REASONS = {
    "uncommitted": "of a job that has not committed (still running, or its driver died)",
    "aborted": "of an aborted job",
    "attempt": "of a task attempt its committed job did not keep (a failed or duplicate attempt)",
    "replaced": "replaced by an overwrite or a write-id re-run",
}


@dataclass
class Hidden:
    """The hidden files of one reason: how many, their bytes, their transactions and the
    oldest one's modification time (epoch ms, None where the store gives none)."""

    files: int = 0
    bytes: int = 0
    txns: set[str] = field(default_factory=set)
    oldest_ms: int | None = None

    def add(self, f: TableFile) -> None:
        self.files += 1
        self.bytes += f.size
        if f.txn is not None:
            self.txns.add(f.txn)
        if f.modified_at is not None and (self.oldest_ms is None or f.modified_at < self.oldest_ms):
            self.oldest_ms = f.modified_at


def hidden_files(view: TableView) -> list[tuple[str, TableFile]]:
    """The data files of ``view`` (a table's root) that a plain listing shows and txcommit
    readers do not, each with its reason (a key of :data:`REASONS`)."""
    shown = {f.path for f in view.visible_files()}
    records = view.records
    named: dict[str, set[str]] = {}  # a committed txn's recorded paths, built once per txn
    found: list[tuple[str, TableFile]] = []
    for f in view.data_files:
        if f.path in shown:
            continue
        if f.txn is None:  # written without txcommit: only a replacing commit hides it
            reason = "replaced"
        elif f.txn in records:
            if f.txn not in named:
                named[f.txn] = {a.path for a in records[f.txn].added}
            reason = "replaced" if f.path in named[f.txn] else "attempt"
        elif f.txn in view.aborted:
            reason = "aborted"
        else:
            reason = "uncommitted"
        found.append((reason, f))
    return found


def report(view: TableView, horizon_hours: float, now_ms: int) -> dict[str, Any]:
    """The doctor's findings as JSON-ready data."""
    visible = view.visible_files()
    hidden = hidden_files(view)
    by_reason = {reason: Hidden() for reason in REASONS}
    for reason, f in hidden:
        by_reason[reason].add(f)
    horizon_ms = now_ms - int(horizon_hours * 3_600_000)
    return {
        "table": view.url,
        "committed": {"files": len(visible), "bytes": sum(f.size for f in visible)},
        "listed": {
            "files": len(view.data_files),
            "bytes": sum(f.size for f in view.data_files),
        },
        "hidden": {
            "files": len(hidden),
            "bytes": sum(f.size for _, f in hidden),
            # Older than the horizon by their age alone: VACUUM still keeps the files of a
            # job that may be running.
            "pastHorizon": sum(
                1 for _, f in hidden if f.modified_at is not None and f.modified_at < horizon_ms
            ),
            "byReason": {
                reason: {
                    "files": h.files,
                    "bytes": h.bytes,
                    "transactions": len(h.txns),
                    "oldestModifiedAt": h.oldest_ms,
                }
                for reason, h in by_reason.items()
                if h.files
            },
        },
        "horizonHours": horizon_hours,
    }


def remedy(table: str, hidden: dict[str, Any], horizon_hours: float) -> str:
    """What the hidden files mean and what to do about them, for a person at a terminal."""
    said = (
        f"{hidden['files']} files ({human_bytes(hidden['bytes'])}) are hidden from txcommit "
        "readers but read by engines that list the directory (Trino, Presto, Athena, Hive, "
        "Redshift Spectrum, Spark without the txcommit plugin, pyarrow, DuckDB, polars); "
        f"{hidden['pastHorizon']} of them are older than VACUUM's horizon ({horizon_hours:g} "
        "hours). Read the table through txcommit (docs/readers.md), or delete them with VACUUM "
        "once no reader needs them:"
    )
    return (
        textwrap.fill(said, width=100)
        + f"\n  txcommit vacuum {table} --remote sc://<server>:15002 --dry-run"
        + f"\n  TXCOMMIT VACUUM '{table}'   (Spark SQL, on a session with the plugin)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="txcommit doctor",
        description="Report the data files of a txcommit table that a plain listing shows and "
        "txcommit readers do not (uncommitted and aborted jobs, task attempts their job did "
        "not keep, files replaced by overwrites and write-id re-runs): what engines that read "
        "the directory without txcommit would read, and the VACUUM that removes them.",
    )
    add_table_arguments(parser)
    parser.add_argument(
        "--retain-hours",
        type=float,
        default=DEFAULT_HORIZON_HOURS,
        metavar="N",
        help="the VACUUM horizon the report counts files against "
        f"(default: {DEFAULT_HORIZON_HOURS}, VACUUM's)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit with status {HIDDEN_FILES_FOUND} when such files exist (for a scheduled check)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    view = open_or_report(ns, with_markers=True)  # the abort markers tell aborted from pending
    if isinstance(view, int):
        return view
    if not view.is_table or view.url != view.table_url:
        where = (
            f"is inside the table {view.table_url}"
            if view.is_table
            else "holds tables below it but is not one"
        )
        print(
            f"txcommit: doctor reads a whole table, and {ns.path} {where}; give the table's "
            "own directory",
            file=sys.stderr,
        )
        return NOT_A_TABLE
    found = report(view, ns.retain_hours, int(time.time() * 1000))
    hidden = found["hidden"]
    if ns.json:
        print(json.dumps(found, indent=2))
    else:
        committed, listed = found["committed"], found["listed"]
        print(f"{view.url}")
        print(
            f"  txcommit readers see   {committed['files']} files, "
            f"{human_bytes(committed['bytes'])}"
        )
        print(f"  a plain listing shows  {listed['files']} files, {human_bytes(listed['bytes'])}")
        if hidden["files"]:
            rows = [
                [str(r["files"]), human_bytes(r["bytes"]), str(r["transactions"]), REASONS[k]]
                for k, r in hidden["byReason"].items()
            ]
            print()
            print(text(["FILES", "SIZE", "TXNS", "HIDDEN FROM TXCOMMIT READERS"], rows))
            print()
            print(remedy(view.url, hidden, ns.retain_hours))
        else:
            print("\nA plain listing shows exactly what txcommit readers see.")
    return HIDDEN_FILES_FOUND if ns.check and hidden["files"] else 0


__all__ = ["HIDDEN_FILES_FOUND", "REASONS", "build_parser", "hidden_files", "main", "report"]
