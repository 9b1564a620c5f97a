"""``txcommit manifest PATH --remote sc://host:port``: rewrite a table's symlink manifests
(``_symlink_format_manifest/``, the file lists Hive, Trino, Athena and Redshift Spectrum read)
from its log, through a Connect server with the txcommit plugin, and print one row per
manifest written or deleted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from txcommit._console import text
from txcommit.cli.remote import run_statement
from txcommit.maintenance import MANIFEST_COLUMNS, quote


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="txcommit manifest",
        description=(
            "Rewrite every symlink manifest of a txcommit table from its log, so engines that "
            "read a table's file list (Hive's SymlinkTextInputFormat, Trino, Athena, Redshift "
            "Spectrum) see exactly its committed files. Runs on a Spark Connect server that has "
            "the txcommit plugin."
        ),
    )
    parser.add_argument("path", metavar="PATH", help="the table directory or URL (e.g. s3a://b/t)")
    parser.add_argument(
        "--remote", required=True, metavar="URL",
        help="the Spark Connect server to run it on, e.g. sc://localhost:15002",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        statement = f"TXCOMMIT GENERATE MANIFEST {quote(ns.path)}"
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    rows = run_statement(
        "txcommit manifest", ns.remote, statement, f"writing the manifests of {ns.path}"
    )
    if isinstance(rows, int):
        return rows
    if rows:
        print(text(MANIFEST_COLUMNS, rows, rule=True))
    deleted = sum(1 for r in rows if r[3])
    print(f"wrote {len(rows) - deleted} manifest(s), deleted {deleted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
