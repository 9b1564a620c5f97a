"""What the commands that run one statement on a Spark Connect server share: connect, say what
runs where, and turn the server's answer or error into rows or an exit code."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def parser_with_remote(prog: str, description: str) -> argparse.ArgumentParser:
    """A command's parser with the table's PATH and the server's ``--remote``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("path", metavar="PATH", help="the table directory or URL (e.g. s3a://b/t)")
    parser.add_argument(
        "--remote",
        required=True,
        metavar="URL",
        help="the Spark Connect server to run it on, e.g. sc://localhost:15002",
    )
    return parser


def run_statement(
    prog: str, remote: str, statement: str, doing: str
) -> list[tuple[Any, ...]] | int:
    """The rows of ``statement`` run on the server at ``remote``; an exit code (2: a bad
    ``--remote``, 1: no server there or the statement failed) after printing why."""
    import txcommit
    from txcommit.errors import InvalidRemoteError, ServerUnreachableError

    try:
        spark = txcommit.connect(remote)
    except InvalidRemoteError as exc:
        print(f"{prog}: --remote: {exc}", file=sys.stderr)
        return 2
    except ServerUnreachableError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    print(
        f"{prog}: {doing} on {remote} (the server logs its progress) ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        return [tuple(r) for r in spark.sql(statement).collect()]
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        print(f"{prog}: failed: {first}", file=sys.stderr)
        return 1
