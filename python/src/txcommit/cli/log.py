"""``txcommit log PATH``: the transaction history of a table, newest first, as a table in the
terminal or as JSON (``--json``): each transaction's id, state (committed, pending, aborted),
start and commit time, operation, write id, files, bytes, rows (as Spark counted them, recorded
just after the commit; "not counted" where Spark counted none), what it removed, what a
restore re-added, its version, its replace sequence and, where the commit changed the table's
schema, the schema it set. Below the table, the table's properties in force
(``manifests=true``: every commit writes the symlink manifests), when any was set.

    txcommit log /data/events
    txcommit log s3://bucket/events --endpoint http://127.0.0.1:9000 --json
    txcommit log hdfs://namenode:8020/events --endpoint http://namenode:9870

*pending* means the job started and neither committed nor aborted: it is running, or its
driver died (VACUUM removes its files after the data horizon).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from txcommit._console import print_error, text
from txcommit.cli.ls import NOT_A_TABLE, add_table_arguments, human_bytes, open_or_report
from txcommit.errors import TxCommitError
from txcommit.paths import printable
from txcommit.table.view import HistoryRow

#: The tables below a directory named when ``log`` refuses it.
_TABLES_NAMED = 5


def _time(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _removed(files: int | None, size: int | None) -> str:
    return "-" if files is None else f"{files} ({human_bytes(size)})"


def _rows(r: HistoryRow) -> str:
    if r.rows is not None:
        return str(r.rows)
    return "not counted" if r.state == "committed" else "-"


def _text(value: object) -> str:
    return "-" if value is None else str(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="txcommit log",
        description="Show the transaction history of a txcommit table, newest first "
        "(times in UTC). Columns: TXN, STATE (committed / pending / aborted), VERSION (the "
        "commit's place in the table's versions, what --as-of and txcommit.asOf name), STARTED, "
        "COMMITTED, OPERATION (append, overwrite, overwrite-partitions, write-id), WRITE ID, "
        "FILES and BYTES added, ROWS (as Spark counted them; 'not counted' for a streaming "
        "batch or a driver that died right after the commit point), "
        "REMOVED files and bytes, RESTORED (the files a restore re-added), "
        "SEQ (the replace sequence of a replacing commit), "
        "SCHEMA (the schema a commit set, where it changed the table's schema).",
    )
    add_table_arguments(parser)
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="show the newest N transactions"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if ns.limit is not None and ns.limit < 0:
        print(f"txcommit: --limit must be 0 or more, got {ns.limit}", file=sys.stderr)
        return 2
    view = open_or_report(ns, with_markers=True)
    if isinstance(view, int):
        return view
    if not view.is_table and view.tables_below:  # each table has a history of its own
        tables = view.tables_below
        shown = ", ".join(printable(t) for t in tables[:_TABLES_NAMED])
        more = f" and {len(tables) - _TABLES_NAMED} more" if len(tables) > _TABLES_NAMED else ""
        print(
            f"txcommit: {printable(ns.path)} is not a table but holds {len(tables)} below it "
            f"({shown}{more}); each has a history of its own: give one table's directory",
            file=sys.stderr,
        )
        return NOT_A_TABLE
    rows = view.history()
    if ns.limit is not None:
        rows = rows[: ns.limit]
    if ns.json:
        print(json.dumps([r.as_dict() for r in rows], indent=2))
        return 0
    headers = ["TXN", "STATE", "VERSION", "STARTED", "COMMITTED", "OPERATION", "WRITE ID"]
    headers += ["FILES", "BYTES", "ROWS", "REMOVED", "RESTORED", "SEQ", "SCHEMA"]
    table = [
        [
            r.txn,
            r.state,
            _text(r.version),
            _time(r.started_at),
            _time(r.committed_at),
            _text(r.operation),
            _text(r.write_id),
            _text(r.files),
            human_bytes(r.bytes),
            _rows(r),
            _removed(r.removed_files, r.removed_bytes),
            _text(r.restored_files or None),
            _text(r.sequence),
            _text(r.schema),
        ]
        for r in rows
    ]
    if table:
        print(text(headers, table))
    states = ("committed", "pending", "aborted", "fenced")
    counts = {s: sum(r.state == s for r in rows) for s in states}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n or s != "fenced")
    print(f"{len(rows)} transactions ({summary}) in {view.url}")
    try:
        properties = view.properties
    except TxCommitError as e:  # the history above stands; the bad file is named
        print("table properties: unreadable (below)")
        print_error(e)
        return 1
    if properties is not None:
        values = ", ".join(f"{k}={v}" for k, v in sorted(properties.values.items()))
        print(f"table properties (change {properties.number}): {values or 'none'}")
    return 0


__all__ = ["build_parser", "main"]
