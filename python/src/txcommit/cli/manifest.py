"""``txcommit manifest PATH --remote sc://host:port``: rewrite a table's symlink manifests
(``_symlink_format_manifest/``, the file lists Hive, Trino, Athena and Redshift Spectrum read)
from its log, through a Connect server with the txcommit plugin, and print one row per
manifest written or deleted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from txcommit._console import text
from txcommit.cli.remote import parser_with_remote, run_statement
from txcommit.maintenance import MANIFEST_COLUMNS, quote


def build_parser() -> argparse.ArgumentParser:
    return parser_with_remote(
        "txcommit manifest",
        (
            "Rewrite every symlink manifest of a txcommit table from its log, so engines that "
            "read a table's file list (Hive's SymlinkTextInputFormat, Trino, Athena, Redshift "
            "Spectrum) see exactly its committed files. Runs on a Spark Connect server that has "
            "the txcommit plugin."
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        statement = f"TXCOMMIT GENERATE MANIFEST {quote(ns.path)}"
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    rows = run_statement(
        "txcommit manifest",
        ns.remote,
        statement,
        f"writing the manifests of {ns.path}",
        ns.progress,
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
