"""The ``txcommit`` command line.

    txcommit server [--port 15002] [--host localhost] [--master local[*]] [--conf k=v ...]
                    [--jars a.jar,b.jar ...] [--spark-conf-dir DIR] [--log-file PATH]
                    [--timeout 120] [--store local|s3|s3-multipart|hdfs|gcs|azure|...]
                    [--local] [--no-plugin] [--dry-run]
    txcommit jars --store s3
    txcommit local-s3 [--port 9000] [--bucket NAME ...] [--ignore-if-none-match]
    txcommit conformance --store URL [--adapter NAME] [--endpoint URL] [--report out.json]
                         [--level 1|2|all] [--halt-points all|none|P1,P2]
    txcommit version | --version
    txcommit log PATH [--json] [--endpoint URL] [--limit N] [--allow-empty]
    txcommit ls PATH [--json] [--endpoint URL] [--allow-empty]
    txcommit vacuum PATH --remote sc://HOST:PORT [--retain-hours N] [--dry-run] [--force]
    txcommit manifest PATH --remote sc://HOST:PORT
    txcommit bench [--quick] [--out docs/benchmarks.md] [--merge-into results.json]
    txcommit bench-streaming [ARGS ...]
    txcommit demo [ARGS ...]

To add a subcommand: write ``_add_<name>_parser`` + ``_cmd_<name>`` and register it in
``_build_parser``; or, for a command that parses its own arguments in its own module, add it
to ``PASSTHROUGH``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from importlib import metadata
from types import FrameType
from typing import NoReturn

from txcommit import __version__
from txcommit._console import leave, print_error
from txcommit.errors import TxCommitError
from txcommit.server import (
    DEFAULT_PORT,
    LOCAL_BUCKET,
    PLUGIN_JAR_NAME,
    RunningServer,
    ServerConfig,
    build_command,
    find_plugin_jar,
    format_command,
    start,
)
from txcommit.stores import LOCAL_EXTRA, store_descriptor, store_descriptors, store_names

# Subcommands implemented as ``main(argv) -> int | None`` in their own module; every
# argument after the subcommand name is passed through untouched.
PASSTHROUGH: dict[str, tuple[str, str]] = {
    "conformance": ("txcommit.conformance", "certify a store adapter against a live store"),
    "demo": ("txcommit.bench.demo", "replay the DBIO paper's failure table live"),
    "local-s3": (
        "txcommit_store_s3.devkit.emulator",
        "run a local S3 endpoint (moto) that counts requests",
    ),
    "vacuum": ("txcommit.cli.vacuum", "delete a table's garbage through a Connect server"),
    "manifest": (
        "txcommit.cli.manifest",
        "rewrite a table's symlink manifests (for Hive, Trino, Athena) through a Connect server",
    ),
    "log": ("txcommit.cli.log", "show a table's transaction history (committed/pending/aborted)"),
    "ls": ("txcommit.cli.ls", "list a table's committed data files (what readers see)"),
    "doctor": (
        "txcommit.cli.doctor",
        "report the files a plain listing shows and txcommit readers do not",
    ),
    "bench-streaming": ("txcommit.bench.streaming", "checkpoint store requests per micro-batch"),
    "bench": ("txcommit.bench", "benchmark txcommit against v1, v2, magic (docs/benchmarks.md)"),
}


#: Commands that start Spark Connect servers and kill them under live sessions. Once one of
#: them has its exit code it leaves without the interpreter's teardown: a native thread still
#: running then (gRPC's, or the Rust runtime of obstore) can abort that teardown, and a verdict
#: already printed would end as exit code 134 (SIGABRT).
VERDICT_COMMANDS = frozenset({"conformance", "demo", "bench", "bench-streaming"})


#: Exit status when the reader of stdout went away (``txcommit log --json | head``): 128 +
#: SIGPIPE, what a shell reports for other Unix tools cut off the same way.
CLOSED_PIPE = 141


def console() -> NoReturn:
    """The ``txcommit`` console script: :func:`main`, then exit with its code."""
    try:
        try:
            code = main()
        finally:
            sys.stdout.flush()  # now, so that a closed pipe is caught here, not at exit
    except BrokenPipeError:
        code = _closed_pipe()
    if sys.argv[1:2] and sys.argv[1] in VERDICT_COMMANDS:
        leave(code)
    sys.exit(code)


def _closed_pipe() -> int:
    """Stop quietly once stdout's reader is gone, as ``head`` expects of a writer."""
    # What is still buffered can never be written: point stdout at /dev/null so that the
    # interpreter's own flush at exit does not report the broken pipe again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE


class _StopRequested(Exception):
    """Raised from a signal handler to leave the foreground wait."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``txcommit`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in PASSTHROUGH:
        return _run_passthrough(args[0], args[1:])
    try:
        parser = _build_parser()  # loads the stores' descriptors (--store choices)
    except TxCommitError as exc:
        print(f"txcommit: {exc}", file=sys.stderr)
        return 1
    ns = parser.parse_args(args)
    if ns.version:
        print(f"txcommit {__version__}")
        return 0
    if not getattr(ns, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(ns.handler(ns))
    except TxCommitError as exc:
        print(f"txcommit: {exc}", file=sys.stderr)
        return 1


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="txcommit", description="Transactional file commits for Spark Connect."
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print txcommit's version and exit (`txcommit version` adds pyspark's and the "
        "plugin jar's)",
    )
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_server_parser(sub)
    version = sub.add_parser("version", help="print txcommit, pyspark and plugin jar versions")
    version.set_defaults(handler=_cmd_version)
    jars = sub.add_parser(
        "jars",
        help="fetch the jars a store adapter needs on the server (cached under ~/.cache)",
        description="Download (once) the third-party jars a store adapter needs on the server "
        "and print their paths, one per line: put them on every Spark JVM's classpath "
        "(spark.driver.extraClassPath / spark.executor.extraClassPath).",
    )
    jars.add_argument("--store", choices=store_names(), required=True)
    jars.add_argument(
        "--spark-line",
        choices=("4.0", "4.1", "4.2", "4.3"),
        help="the Spark line whose Hadoop the connectors must match (default: the installed "
        "pyspark's)",
    )
    jars.set_defaults(handler=_cmd_jars)
    for name, (_, help_text) in PASSTHROUGH.items():
        # Listed for --help only; main() dispatches these before argparse runs.
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


# ------------------------------------------------------------------------------ server


def _add_server_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "server",
        help="run a Spark Connect server with the txcommit plugin (foreground)",
        description="Run a Spark Connect server with the txcommit plugin in the foreground; "
        "Ctrl-C or SIGTERM stops it. Needs the full pyspark (pip install 'txcommit[server]') "
        "and Java 17+.",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="gRPC port (default 15002)")
    p.add_argument(
        "--host",
        default="localhost",
        help="address to bind and advertise (default localhost; 0.0.0.0 = all interfaces)",
    )
    p.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    p.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark conf, repeatable; spark.plugins/spark.sql.extensions are merged",
    )
    p.add_argument(
        "--jars",
        action="append",
        default=[],
        metavar="JARS",
        help="extra jars (comma-separated, repeatable), added after the plugin jar",
    )
    stores = "; ".join(f"{plugin.name}: {plugin.summary}" for plugin in store_descriptors())
    p.add_argument(
        "--store",
        choices=store_names(),
        default="local",
        help=f"store adapter to set up (default: local). {stores}",
    )
    p.add_argument(
        "--local",
        action="store_true",
        help="start the store's emulator on loopback for the server's lifetime, with bucket "
        f"'{LOCAL_BUCKET}' (needs {LOCAL_EXTRA}); without it the server reaches the real store "
        "through your confs",
    )
    p.add_argument("--spark-conf-dir", help="directory with spark-defaults.conf to merge with")
    p.add_argument("--log-file", help="server log (default: a new file in the temp directory)")
    p.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server to listen"
    )
    p.add_argument(
        "--no-plugin",
        action="store_true",
        help="debugging: run a plain Spark Connect server without txcommit",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the command line (redacted) and exit"
    )
    p.set_defaults(handler=_cmd_server)


def _parse_confs(pairs: Sequence[str]) -> dict[str, str]:
    confs: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"txcommit: --conf expects KEY=VALUE, got {pair!r}")
        confs[key.strip()] = value
    return confs


def _server_config(ns: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        port=ns.port,
        host=ns.host,
        master=ns.master,
        confs=_parse_confs(ns.conf),
        jars=[jar for value in ns.jars for jar in value.split(",") if jar.strip()],
        spark_conf_dir=ns.spark_conf_dir,
        log_file=ns.log_file,
        plugin=not ns.no_plugin,
        startup_timeout=ns.timeout,
        store=ns.store,
        # If this command is killed outright, take the server down with it.
        die_with_parent=True,
        local=ns.local,
    )


def _cmd_server(ns: argparse.Namespace) -> int:
    config = _server_config(ns)
    if ns.dry_run:
        print(format_command(build_command(config)))
        return 0

    def request_stop(signum: int, frame: FrameType | None) -> None:
        raise _StopRequested(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _run_server(config)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_server(config: ServerConfig) -> int:
    server: RunningServer | None = None
    try:
        server = start(config)  # stops the half-started server itself if interrupted
        if server.emulator is not None:
            banner = store_descriptor(config.store).local_emulator().banner
            print(f"txcommit: {banner(server.emulator, config.local_bucket)}", flush=True)
        print(
            f"txcommit: Spark Connect server ready at {server.url} (log: {server.log_path})",
            flush=True,
        )
        code = server.wait()
    except (KeyboardInterrupt, _StopRequested):
        if server is None:
            print("txcommit: interrupted while the server was starting", file=sys.stderr)
            return 130
        print("txcommit: stopping the Spark Connect server ...", file=sys.stderr, flush=True)
        try:
            server.stop()
        except (KeyboardInterrupt, _StopRequested):  # asked twice: do not wait any longer
            server.kill()
            return 130
        print("txcommit: stopped", file=sys.stderr)
        return 0
    print(
        f"txcommit: the Spark Connect server exited unexpectedly with code {code}. "
        f"Last lines of {server.log_path}:\n{server.log_tail()}",
        file=sys.stderr,
    )
    return code if code > 0 else 1


# ----------------------------------------------------------------------------- version


def _cmd_version(ns: argparse.Namespace) -> int:
    print(f"txcommit {__version__}")
    for dist, kind in (("pyspark", "server-capable"), ("pyspark-client", "pure client")):
        with contextlib.suppress(metadata.PackageNotFoundError):
            print(f"{dist} {metadata.version(dist)} ({kind})")
    try:
        print(f"plugin jar: {find_plugin_jar()}")
    except TxCommitError:
        print(f"plugin jar: not built ({PLUGIN_JAR_NAME}; run `bash .ci/setup` in a checkout)")
    return 0


def _cmd_jars(ns: argparse.Namespace) -> int:
    paths = store_descriptor(ns.store).jars(ns.spark_line)
    if not paths:
        print(
            f"txcommit: the {ns.store} adapter needs no jar beyond the txcommit plugin's: "
            "Spark's own Hadoop client reaches it",
            file=sys.stderr,
        )
    for path in paths:
        print(path)
    return 0


# ------------------------------------------------------------------------- passthrough


def _run_passthrough(name: str, argv: list[str]) -> int:
    module_name = PASSTHROUGH[name][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(
            f"txcommit: `{name}` is not available in this install: it comes with the devkit, "
            f"{LOCAL_EXTRA}",
            file=sys.stderr,
        )
        return 2
    try:
        result = module.main(argv)
    except TxCommitError as exc:  # a store or table error a command did not report itself
        print_error(exc)
        return 1
    return int(result or 0)
