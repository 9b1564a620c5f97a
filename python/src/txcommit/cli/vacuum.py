"""``txcommit vacuum PATH --remote sc://host:port``: VACUUM a table through a Connect server.

The server (with the txcommit plugin) lists and deletes; this command sends the statement,
then prints what was (or, with ``--dry-run``, would be) deleted as a table and a summary.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from txcommit._console import text
from txcommit.cli.remote import parser_with_remote, run_statement
from txcommit.maintenance import VACUUM_COLUMNS, vacuum_statement


def build_parser() -> argparse.ArgumentParser:
    parser = parser_with_remote(
        "txcommit vacuum",
        (
            "Delete the files of a txcommit table that no reader can see any more (files of "
            "uncommitted or aborted transactions and failed task attempts, files replaced by "
            "overwrites and write-id re-runs, stale markers, open multipart uploads of dead "
            "jobs), once they are older than the retention horizon. Runs on a Spark Connect "
            "server that has the txcommit plugin."
        ),
    )
    parser.add_argument(
        "--retain-hours",
        type=float,
        default=None,
        metavar="N",
        help="retention horizon in hours: only garbage older than this is deleted "
        "(default: the server's, 48; below 1 needs --force)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="list what would be deleted; delete nothing",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="allow a horizon below the safe minimum (only when no job writes to and no "
        "reader reads the table)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        statement = vacuum_statement(ns.path, ns.retain_hours, ns.dry_run, ns.force)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    what = "listing (dry run)" if ns.dry_run else "vacuuming"
    start = time.monotonic()
    rows = run_statement("txcommit vacuum", ns.remote, statement, f"{what} {ns.path}", ns.progress)
    if isinstance(rows, int):
        return rows
    if rows:
        print(text(VACUUM_COLUMNS, rows, rule=True))
    verb = "would delete" if ns.dry_run else "deleted"
    total = sum(int(r[3] or 0) for r in rows)
    print(f"{verb} {len(rows)} item(s), {total} bytes in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
