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
    """A command's parser with the table's PATH, the server's ``--remote`` and ``--progress``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("path", metavar="PATH", help="the table directory or URL (e.g. s3a://b/t)")
    parser.add_argument(
        "--remote",
        required=True,
        metavar="URL",
        help="the Spark Connect server to run it on, e.g. sc://localhost:15002",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="report the server's progress on stderr while a long run goes on (the tasks of "
        "the Spark job it deletes or checks many files in; default: when stderr is a terminal)",
    )
    return parser


class _TaskProgress:
    """pyspark's progress handler (stages and their tasks, as the server reports them while a
    statement runs) drawn as one line on stderr."""

    def __init__(self, doing: str, enabled: bool) -> None:
        from txcommit._console import Progress

        self.doing, self.line = doing, Progress(enabled, interval=0.5)

    def __call__(
        self,
        stages: Any = None,
        inflight_tasks: int = 0,
        operation_id: Any = None,
        done: bool = False,
    ) -> None:
        stages = list(stages or [])
        total = sum(s.num_tasks for s in stages)
        if total:
            finished = sum(s.num_completed_tasks for s in stages)
            self.line(f"{self.doing}: {finished} of {total} task(s) done", force=done)


def run_statement(
    prog: str, remote: str, statement: str, doing: str, progress: bool | None = None
) -> list[tuple[Any, ...]] | int:
    """The rows of ``statement`` run on the server at ``remote``; an exit code after printing
    why on stderr, in one line led by ``prog`` (the install steps for a server without the
    plugin follow on their own lines). With ``progress`` (None: when stderr is a terminal), the
    server's progress is drawn on stderr as it runs."""
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
    print(f"{prog}: {doing} on {remote} ...", file=sys.stderr, flush=True)
    handler = _TaskProgress(doing, sys.stderr.isatty() if progress is None else progress)
    register = getattr(spark, "registerProgressHandler", None)  # pyspark 4.0 and later
    if callable(register):
        register(handler)
    try:
        return [tuple(r) for r in run_sql(spark, statement).collect()]
    except NotATableError as exc:
        print(f"{prog}: {_message(exc)}", file=sys.stderr)
        return NOT_A_TABLE
    except TxCommitError as exc:
        print(f"{prog}: {_message(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"{prog}: failed: {server_failure(exc)}", file=sys.stderr)
        return 1
    finally:
        handler.line.done()
        close_owned_sessions()


def _message(exc: BaseException) -> str:
    """The error's own message, without the "txcommit: " lead the plugin's carry."""
    text = str(exc).split("\n\nJVM stacktrace:", 1)[0].strip()
    return text.removeprefix("txcommit: ")
