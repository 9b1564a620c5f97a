"""``txcommit conformance``: certify a store adapter against a live store.

    txcommit conformance --store URL [--adapter NAME] [--endpoint URL] [--region REGION]
                         [--report PATH] [--writers 16] [--large-mib 12]
                         [--level 1|2|all] [--halt-points all|none|P1,P2]
                         [--server-conf K=V ...] [--session-conf K=V ...]

Exit codes: 0 = every check the adapter declares passed (certified); 1 = a declared check
failed (not certified); 2 = usage error (bad option, unknown adapter, unusable URL).
Credentials come from the usual environment variables (AWS_*, AZURE_STORAGE_ACCOUNT_NAME and
AZURE_STORAGE_ACCOUNT_KEY, Google application default credentials) and are never printed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import uuid
from collections.abc import Sequence

from txcommit.adapters.local import LocalStore
from txcommit.adapters.registry import adapter_for, open_store, scheme_of
from txcommit.conformance.protocol import VISIBLE_AFTER_HALT, run_level2, scenarios, target_for
from txcommit.conformance.runner import (
    EXIT_USAGE,
    Report,
    Row,
    run_level1,
    scrub,
    write_report,
)
from txcommit.errors import TxCommitError
from txcommit.paths import display_url, join
from txcommit.stores import schemes_taking, store_names
from txcommit.testing.checks import CHECKS


def _parser() -> argparse.ArgumentParser:
    checks = "\n".join(f"  {c.name}: {c.proves}" for c in CHECKS)
    protocol = "\n".join(f"  {s.name}: {s.proves}" for s in scenarios())
    p = argparse.ArgumentParser(
        prog="txcommit conformance",
        description="Certify a store adapter against a live store: Level 1, the primitive it "
        "declares; Level 2, the commit protocol through Spark under injected faults. "
        "Everything is written below a fresh sub-prefix "
        "<store>/txcommit-conformance-<id>/ and deleted at the end.",
        epilog=f"level 1 checks:\n{checks}\n\nlevel 2 scenarios:\n{protocol}\n\n"
        "exit codes: 0 certified (every level asked for), 1 a declared check failed or a "
        "level is not available, 2 usage error. See docs/conformance.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--store",
        required=True,
        metavar="URL",
        help="where to test: a local directory or file: URL, s3://bucket/prefix, "
        "gs://bucket/prefix, az://container/prefix (abfss://container@account.dfs.core."
        "windows.net/prefix), or hdfs://namenode:port/path",
    )
    p.add_argument(
        "--adapter",
        metavar="NAME",
        help="adapter to certify (default: the registry's choice for the URL's scheme)",
    )
    p.add_argument(
        "--endpoint",
        metavar="URL",
        help="the store's endpoint: an S3-compatible endpoint, a GCS emulator "
        "(default $STORAGE_EMULATOR_HOST), or an Azure Blob endpoint such as Azurite's "
        "http://127.0.0.1:10000/devstoreaccount1, or the HDFS NameNode's WebHDFS address "
        "http://namenode:9870 (default $TXCOMMIT_WEBHDFS_ENDPOINT, else port 9870 of the "
        "hdfs:// URL's host)",
    )
    p.add_argument("--region", help="S3 region (default: AWS_REGION, else us-east-1)")
    p.add_argument("--report", metavar="PATH", help="write the JSON report here")
    p.add_argument("--writers", type=int, default=16, metavar="N", help="race width (default 16)")
    p.add_argument(
        "--large-mib",
        type=int,
        default=12,
        metavar="N",
        help="size of the large objects in MiB (default 12; more than one 5 MiB part)",
    )
    p.add_argument(
        "--level",
        choices=["1", "2", "all"],
        default="1",
        help="1: the primitive against the store (seconds; default); 2: the protocol through "
        "Spark, fault scenarios and the reader check (minutes; needs txcommit[server], Java "
        f"17 and an adapter with a JVM implementation: {', '.join(store_names())}); all: both",
    )
    p.add_argument(
        "--halt-points",
        default="all",
        metavar="LIST",
        help="level 2: the fault points at which the driver is killed, comma-separated, "
        f"'all' (default: {', '.join(VISIBLE_AFTER_HALT)}) or 'none'; each costs a server restart",
    )
    p.add_argument(
        "--server-conf",
        action="append",
        default=[],
        metavar="K=V",
        help="level 2: a Spark conf for the server the kit starts (repeatable), e.g. S3A "
        "settings of a real store; credentials belong in the environment, not here",
    )
    p.add_argument(
        "--session-conf",
        action="append",
        default=[],
        metavar="K=V",
        help="level 2: a conf set on every Spark session after txcommit is enabled (repeatable)",
    )
    return p


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, v = value.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} takes KEY=VALUE, got {value!r}")
        out[key.strip()] = v
    return out


def _usage(message: str) -> int:
    print(f"txcommit conformance: {scrub(message)}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the kit; returns the exit code (0 certified, 1 not certified, 2 usage error)."""
    try:
        ns = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as e:  # --help (0) or a usage error (2): a code, not an exception
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    except TxCommitError as e:  # a store whose descriptor cannot be loaded
        return _usage(str(e))
    if ns.writers < 2:
        return _usage(f"--writers must be at least 2 (a race needs two writers), got {ns.writers}")
    if ns.large_mib < 1:
        return _usage(f"--large-mib must be at least 1, got {ns.large_mib}")
    levels = {"1": (1,), "2": (2,), "all": (1, 2)}[ns.level]
    try:
        server_confs = _pairs(ns.server_conf, "--server-conf")
        session_confs = _pairs(ns.session_conf, "--session-conf")
        points = {"all": list(VISIBLE_AFTER_HALT), "none": []}.get(
            ns.halt_points, [p.strip() for p in ns.halt_points.split(",") if p.strip()]
        )
        scenarios(points)  # validates the names
    except ValueError as e:
        return _usage(str(e))
    url = str(ns.store)
    scheme = scheme_of(url)
    options: dict[str, str] = {}
    # Stores reached at an --endpoint: S3-compatibles, GCS emulators, Azurite, WebHDFS.
    for option, given in (("region", ns.region), ("endpoint", ns.endpoint)):
        takes = schemes_taking(option)
        if given and scheme not in takes:
            shown = ", ".join(f"{s}://" for s in takes)
            return _usage(f"--{option} applies to {shown} stores only, not {scheme}:")
    if ns.endpoint:
        options["endpoint"] = ns.endpoint
    if ns.region:
        options["region"] = ns.region
    overrides = {scheme: ns.adapter} if ns.adapter else None
    root = join(url.rstrip("/") or "/", f"txcommit-conformance-{uuid.uuid4().hex[:12]}")
    try:
        adapter_for(url, overrides)
        store = open_store(root, overrides, **options)
    except TxCommitError as e:
        return _usage(str(e))
    d = store.declaration
    endpoint = getattr(store, "endpoint", None)
    where = f" at {endpoint}" if endpoint else ""
    shown = " and ".join(map(str, levels))
    print(
        f"txcommit conformance, level {shown}: adapter {d.name} ({d.primitive}, listing "
        f"{d.listing}) on {scrub(display_url(store.root_url))}/{where}",
        flush=True,
    )
    if 1 in levels:
        report = run_level1(store, writers=ns.writers, large_mib=ns.large_mib)
    else:
        report = Report(d.name, d, scrub(store.root_url), getattr(store, "endpoint", None), [])
    report.levels = levels
    if 2 in levels:
        target = target_for(
            store,
            endpoint=ns.endpoint,
            region=ns.region,
            server_confs=server_confs,
            session_confs=session_confs,
        )

        def progress(row: Row) -> None:
            print(f"  level 2: {row.name}: {row.result} ({row.seconds:.1f}s)", flush=True)

        report.rows += run_level2(target, halt_points=points, on_row=progress)
    if isinstance(store, LocalStore):  # the fresh sub-directory, if the cleanup emptied it
        with contextlib.suppress(OSError):
            store.root.rmdir()
    print(scrub(report.table()), flush=True)
    if ns.report:
        try:
            write_report(report, ns.report)
        except OSError as e:
            print(f"txcommit conformance: could not write the report: {e}", file=sys.stderr)
            return EXIT_USAGE
        print(f"report: {ns.report}", flush=True)
    return report.exit_code


__all__ = ["main"]
