"""``txcommit ls PATH``: the committed data files of a table (what every reader sees), with
their sizes and transactions, as a table in the terminal or as JSON (``--json``).

    txcommit ls /data/events
    txcommit ls s3://bucket/events --endpoint http://127.0.0.1:9000 --json
    txcommit ls hdfs://namenode:8020/events --endpoint http://namenode:9870

S3 credentials come from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, or the default chain) and are never printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from txcommit._console import Progress, print_error, text
from txcommit._names import IGNORE_CORRUPT_RECORDS_CONF
from txcommit.adapters.registry import scheme_of
from txcommit.errors import TxCommitError
from txcommit.paths import LOG_DIR_NAME, printable
from txcommit.stores import schemes_taking
from txcommit.table.view import TableView, open_table


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """PATH and the store options shared by ``txcommit ls`` and ``txcommit log``."""
    parser.add_argument(
        "path",
        metavar="PATH",
        help="the table, a directory inside it (a partition) or a directory holding tables: a "
        "local path, file://, s3://, s3a://, hdfs://, gs://, az:// or abfs[s]:// URL",
    )
    parser.add_argument(
        "--endpoint",
        help="S3-compatible endpoint URL, e.g. http://127.0.0.1:9000 (default: "
        "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS itself); credentials always come "
        "from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) "
        "and are never printed. For hdfs:// tables: the NameNode's WebHDFS address, e.g. "
        "http://namenode:9870 (default: TXCOMMIT_WEBHDFS_ENDPOINT, else port 9870 of the "
        "URL's host; the user is HADOOP_USER_NAME, else the login name). For gs:// and "
        "az:// or abfs[s]:// tables: the store's endpoint (an emulator's; Azure's account key "
        "comes from AZURE_STORAGE_ACCOUNT_KEY)",
    )
    parser.add_argument(
        "--region", help="S3 region (default: AWS_REGION / AWS_DEFAULT_REGION, else us-east-1)"
    )
    parser.add_argument(
        "--ignore-corrupt-records",
        action="store_true",
        help="hide a transaction whose commit record is corrupt instead of failing (like "
        f"{IGNORE_CORRUPT_RECORDS_CONF}=true)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="treat a path that does not exist or holds no txcommit log as an empty table "
        "(default: an error, exit status 2, so that a typo does not look like an empty table)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report listing and reading progress on stderr (default: when stderr is a terminal)",
    )


def store_options(ns: argparse.Namespace) -> dict[str, Any]:
    """--endpoint and --region, for a path whose store takes them (its descriptor says which
    schemes take which, :func:`~txcommit.stores.schemes_taking`)."""
    scheme = scheme_of(ns.path)
    region, endpoint = schemes_taking("region"), schemes_taking("endpoint")
    if ns.region and scheme not in region and scheme in endpoint:
        raise TxCommitError(f"--region is for {_shown(region)} tables, not {ns.path}")
    if (ns.endpoint and scheme not in endpoint) or (ns.region and scheme not in region):
        raise TxCommitError(
            f"--endpoint and --region are for {_shown(region)} tables (--endpoint also for "
            f"{_shown(tuple(s for s in endpoint if s not in region))}), not {ns.path}"
        )
    return {k: v for k, v in (("endpoint", ns.endpoint), ("region", ns.region)) if v}


def _shown(schemes: tuple[str, ...]) -> str:
    return ", ".join(f"{s}://" for s in schemes)


def open_from_args(ns: argparse.Namespace, with_markers: bool = False) -> TableView:
    options = store_options(ns)
    progress = Progress(sys.stderr.isatty() if ns.progress is None else ns.progress)
    try:
        return open_table(
            ns.path,
            options,
            ignore_corrupt_records=ns.ignore_corrupt_records,
            with_markers=with_markers,
            progress=progress,
            as_of=getattr(ns, "as_of", None),
        )
    finally:
        progress.done()


#: Exit status of a command whose PATH is not a table (argparse's status for bad arguments).
NOT_A_TABLE = 2


def open_or_report(ns: argparse.Namespace, with_markers: bool = False) -> TableView | int:
    """:func:`open_from_args` for a command's ``main``, or the exit status after printing why
    on stderr: 1 when the table cannot be read, 2 when PATH does not exist (a typo inside a
    table is no empty partition) or is not a table (unless ``--allow-empty``)."""
    try:
        view = open_from_args(ns, with_markers=with_markers)
    except TxCommitError as e:
        print_error(e)
        return 1
    if ns.allow_empty or (view.has_logs and view.found):
        return view
    print(f"txcommit: {not_a_table(view, ns.path)}", file=sys.stderr)
    return NOT_A_TABLE


def not_a_table(view: TableView, path: str) -> str:
    """Why ``view`` (missing, or neither a table nor inside one) is refused, naming ``path``."""
    path = printable(path)
    if not view.found:
        local = isinstance(getattr(view.store, "root", None), Path)  # a local store's directory
        what = f"{path} does not exist" if local else f"{path} holds no files"
        return f"{what}; check the path, or pass --allow-empty to show it as an empty table"
    return (
        f"{path} is not a txcommit table: neither it nor a directory above or below it has a "
        f"{LOG_DIR_NAME}/ log. Give the directory a txcommit write went to, or pass "
        "--allow-empty to show it as an empty table"
    )


def human_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="txcommit ls",
        description="List the committed data files of a txcommit table: exactly the files "
        "Spark with the txcommit read filter, txcommit.dataset() and the txcommit+ fsspec "
        "file systems read (files of uncommitted or aborted jobs, failed task attempts and "
        "files removed by an overwrite or a write-id re-run are not listed).",
    )
    add_table_arguments(parser)
    parser.add_argument(
        "--as-of",
        metavar="TXN_OR_TIME",
        help="list a past snapshot: a transaction id from `txcommit log` (the table right after "
        "it committed) or an ISO-8601 time (every commit the store dated at or before it), "
        "as spark.read.option('txcommit.asOf', ...) reads it",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    view = open_or_report(ns)
    if isinstance(view, int):
        return view
    files = view.visible_files()
    if ns.json:
        doc = [{"path": f.path, "size": f.size, "txn": f.txn} for f in files]
        print(json.dumps(doc, indent=2))
        return 0
    rows = [[str(f.size), f.txn or "-", f.path] for f in files]
    if rows:
        print(text(["SIZE", "TXN", "PATH"], rows))
    total = sum(f.size for f in files)
    print(f"{len(files)} committed files, {human_bytes(total)} ({total} bytes) in {view.url}")
    return 0


__all__ = [
    "NOT_A_TABLE",
    "add_table_arguments",
    "build_parser",
    "main",
    "not_a_table",
    "open_from_args",
    "open_or_report",
]
