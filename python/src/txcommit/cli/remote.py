"""What the commands that run one statement on a Spark Connect server share: connect, say what
runs where, and turn the server's answer or error into rows or an exit code.

The exit codes are the table commands' (``txcommit ls``, ``log``): 2 for a mistake in the
arguments, a bad ``--remote`` or a PATH that holds no table; 1 for anything else that failed
(no server at ``--remote``, a server without the plugin, a statement the server refused)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from txcommit.cli.ls import NOT_A_TABLE


def parser_with_remote(prog: str, description: str) -> argparse.ArgumentParser:
    """A command's parser with the table's PATH and the server's ``--remote``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("path", metavar="PATH", help="the table directory or URL (e.g. s3a://b/t)")
    parser.add_argument(
        "--remote", required=True, metavar="URL",
        help="the Spark Connect server to run it on, e.g. sc://localhost:15002",
    )  # fmt: skip
    return parser


def run_statement(
    prog: str, remote: str, statement: str, doing: str
) -> list[tuple[Any, ...]] | int:
    """The rows of ``statement`` run on the server at ``remote``; an exit code after printing
    why on stderr, in one line led by ``prog`` (the install steps for a server without the
    plugin follow on their own lines)."""
    from txcommit._session import run_sql, server_failure
    from txcommit.client import close_owned_sessions, connect
    from txcommit.errors import (
        InvalidRemoteError,
        NotATableError,
        ServerUnreachableError,
        TxCommitError,
    )

    try:
        spark = connect(remote)
    except InvalidRemoteError as exc:
        print(f"{prog}: --remote: {exc}", file=sys.stderr)
        return 2
    except ServerUnreachableError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    print(f"{prog}: {doing} on {remote} (the server logs its progress) ...", file=sys.stderr,
          flush=True)  # fmt: skip
    try:
        return [tuple(r) for r in run_sql(spark, statement).collect()]
    except NotATableError as exc:
        print(f"{prog}: {_message(exc)}", file=sys.stderr)
        return NOT_A_TABLE
    except TxCommitError as exc:
        print(f"{prog}: {_message(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the server's error, told without gRPC internals
        print(f"{prog}: failed: {server_failure(exc)}", file=sys.stderr)
        return 1
    finally:
        close_owned_sessions()


def _message(exc: BaseException) -> str:
    """The error's own message, without the "txcommit: " lead the plugin's carry."""
    text = str(exc).split("\n\nJVM stacktrace:", 1)[0].strip()
    return text.removeprefix("txcommit: ")
