"""``txcommit bench``: txcommit against Hadoop's v1 and v2 committers, the S3A magic committer
and a no-protocol floor, on the local file system and on S3 (moto behind a latency model).

Writes ``docs/benchmarks.md`` (tables, targets held or missed), PNG plots in
``docs/benchmarks/`` and the raw results as ``docs/benchmarks/results.json``. Needs the server
side (``txcommit[server,local]``, Java 17 with javac) and, for plots, ``txcommit[bench]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from txcommit.bench.protocols import PROTOCOLS, STORES, parse


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


#: The sections of a run, for ``--only``: the file-count sweep, the DBIO paper's job, the read
#: cost, a very large job, a table of a million files (those two not in the default run: tens
#: of minutes each) and multi-table transactions (a few minutes, asked for by name).
SECTIONS = ("sweep", "paper", "read", "large", "bigtable", "transactions")
DEFAULT_SECTIONS = ("sweep", "paper", "read")


def _sections(text: str) -> list[str]:
    chosen = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in chosen if v not in SECTIONS]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"expected sections among {', '.join(SECTIONS)}, got {text!r}"
        )
    return chosen


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="txcommit bench",
        description="Benchmark txcommit against Hadoop FileOutputCommitter v1/v2, the S3A "
        "magic committer and a no-protocol floor, on the local file system and on a local S3 "
        "endpoint (moto) that charges each request what it costs on S3. Writes a Markdown "
        "report with tables, PNG plots next to it, and the raw results as JSON. The default "
        "size takes about 35 minutes on 2 cores; --quick is a smoke run of a few minutes.",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 10 files, 100k-row DBIO paper's job, tables of 1 "
        "and 20 transactions and a plain table of 20 directories for the read "
        "cost (the size flags below still override)",
    )
    p.add_argument(
        "--only",
        type=_sections,
        help="run only these sections, comma-separated: "
        f"{', '.join(SECTIONS)} (default {','.join(DEFAULT_SECTIONS)})",
    )
    p.add_argument(
        "--out",
        default="docs/benchmarks.md",
        help="report to write (default docs/benchmarks.md); the plots and "
        "results.json go into a directory named like it without .md",
    )
    p.add_argument(
        "--files",
        type=_ints,
        help="file counts of the sweep, appended, on "
        "every store (default 10,100,1000; 5000 adds ~5 min on S3)",
    )
    p.add_argument(
        "--overwrite-files",
        type=_ints,
        help="file counts also overwritten "
        "(default 10, to fit the 35-minute budget on 2 cores; with --files, the "
        "same as --files)",
    )
    p.add_argument("--no-overwrite", action="store_true", help="skip the overwrites")
    p.add_argument(
        "--s3-large-protocols",
        help="on S3, only these protocols run file counts above 1000 (default "
        "floor,txcommit: v1 commits at ~0.65 s per file on the modelled S3, "
        "so 5000 files would take about an hour; 'all' runs every protocol)",
    )
    p.add_argument(
        "--s3-target-protocols",
        help="on S3, only these protocols run exactly 1000 files, the targets' point "
        "(default floor,v1,magic,txcommit,txcommit-mp: v2 adds ~100 s and no target needs "
        "it; 'all' runs every protocol)",
    )
    p.add_argument(
        "--rows-per-file", type=_positive, help="rows per file in the sweep (default 1000)"
    )
    p.add_argument(
        "--partitions",
        type=_positive,
        help="partition directories of every sweep write; each of files/partitions "
        "tasks writes one file per directory (default 10)",
    )
    p.add_argument(
        "--seed-rows", type=int, help="rows of the DBIO paper's job (default 10000000; 0 skips it)"
    )
    p.add_argument(
        "--seed-partitions",
        type=_positive,
        help="repartition() of the DBIO paper's job (default 100)",
    )
    p.add_argument(
        "--read-txns",
        type=_ints,
        help="committed transactions of the "
        "synthesised txcommit tables of the read cost, each planned cold and warm "
        "with a checkpoint (and without one, see --read-no-checkpoint-max) (default "
        "1,100,1000,10000)",
    )
    p.add_argument(
        "--read-no-checkpoint-max",
        type=int,
        help="plan only the txcommit "
        "tables of at most this many transactions also without a checkpoint (default "
        "1000: without one, a cold plan of 10,000 transactions reads 10,000 records "
        "one after another, ~7 min on the model; 10000 includes it)",
    )
    p.add_argument(
        "--read-partitions",
        type=int,
        help="partition directories of the plain "
        "Hive-style table of the read cost; 0 skips it (default 1000)",
    )
    p.add_argument(
        "--read-listing-txns",
        type=int,
        help="committed transactions of the read "
        "cost's txcommit table read by listing (one txcommit adopted); 0 skips it "
        "(default 1000)",
    )
    p.add_argument(
        "--no-read-leftovers",
        action="store_true",
        help="skip the read cost's table with uncommitted leftovers and its VACUUM",
    )
    p.add_argument(
        "--large-files",
        type=_ints,
        help="file counts of the large section's "
        "txcommit appends on S3, run only when --only names large "
        "(default 100000)",
    )
    p.add_argument(
        "--bigtable-commits",
        type=_positive,
        help="appends of the bigtable section's synthesised table, run only when --only names "
        "bigtable (default 1000)",
    )
    p.add_argument(
        "--bigtable-files-per-commit",
        type=_positive,
        help="data files per append of the bigtable section's table (default 1000: a table of "
        "1,000,000 files)",
    )
    p.add_argument(
        "--transaction-tables",
        type=_ints,
        help="table counts of the transactions section's transactions, run only when --only "
        "names transactions (default 2,16); each must divide --transaction-files",
    )
    p.add_argument(
        "--transaction-files",
        type=_positive,
        help="files of each commit point of the transactions section, split evenly over its "
        "tables, against one table holding them all (default 16)",
    )
    p.add_argument(
        "--transaction-undecided",
        type=_ints,
        help="undecided transactions a reader meets in the transactions section (default 1,4)",
    )
    p.add_argument("--no-read", action="store_true", help="skip the read-cost measurement")
    p.add_argument(
        "--repeats",
        type=_positive,
        help="timed repeats per read plan, and rounds of the transactions section (default 3; "
        "the transactions section 5)",
    )
    p.add_argument(
        "--stores", default=",".join(STORES), help=f"stores to run on (default {','.join(STORES)})"
    )
    p.add_argument(
        "--protocols",
        default=",".join(x.key for x in PROTOCOLS),
        help=f"protocols to compare (default all: {','.join(x.key for x in PROTOCOLS)})",
    )
    p.add_argument(
        "--latency-scale",
        type=float,
        default=1.0,
        help="multiply the S3 latency model by this (default 1.0; 0 = moto's speed)",
    )
    p.add_argument(
        "--master",
        default="local[16]",
        help="Spark master of the server (default local[16]: 16 task slots; the "
        "S3 work is latency-bound, so slots can outnumber cores)",
    )
    p.add_argument(
        "--work-dir",
        help="where local tables and the server log go (default: a "
        "new temporary directory, removed afterwards unless --keep)",
    )
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument(
        "--note",
        default="",
        help="a remark kept with the run in results.json (with --from-json: appended to the "
        "run's own), not printed in the report, which states results and method only",
    )
    p.add_argument(
        "--from-json",
        help="re-render the report (and plots) from a results.json of an earlier run; runs nothing",
    )
    p.add_argument(
        "--merge-into",
        metavar="RESULTS_JSON",
        help="run what the other options select, then merge it into an earlier "
        "run's results.json: its rows of the same store, file count, mode and "
        "protocol (the DBIO paper's job: store and protocol; read cost: all of it) "
        "are replaced, "
        "and the report names the run each row comes from",
    )
    return p


def option_rows() -> list[tuple[str, str, str]]:
    """(flag, meaning, default) of every option, for the report's table."""
    rows = []
    for action in build_parser()._actions:
        if not action.option_strings or action.dest == "help":
            continue
        meaning = (action.help or "").split(" (default")[0]
        default = (
            "off"
            if isinstance(action, argparse._StoreTrueAction)
            else (str(action.default) if action.default is not None else "see meaning")
        )
        match = re.search(r"\(default:? ([^)]*)\)", action.help or "")
        if match:
            default = match.group(1).split(":")[0].split(";")[0]
        rows.append((", ".join(f"`{o}`" for o in action.option_strings), meaning, default))
    return rows


def sizes_from(ns: argparse.Namespace) -> Any:
    from txcommit.bench.runner import Sizes

    sizes = Sizes.quick() if ns.quick else Sizes()
    if ns.files:
        sizes.files = ns.files
        sizes.overwrite_files = ns.files
    if ns.overwrite_files:
        sizes.overwrite_files = ns.overwrite_files
    if ns.no_overwrite:
        sizes.overwrite_files = []
    keys = [p.key for p in PROTOCOLS]
    for name in ("s3_large_protocols", "s3_target_protocols"):
        chosen = getattr(ns, name)
        if chosen:
            setattr(sizes, name, keys if chosen == "all" else [p.key for p in parse(chosen)])
    for name in (
        "rows_per_file",
        "partitions",
        "seed_rows",
        "seed_partitions",
        "read_txns",
        "read_no_checkpoint_max",
        "read_partitions",
        "read_listing_txns",
        "repeats",
    ):
        value = getattr(ns, name)
        if value is not None:
            setattr(sizes, name, value)
    if ns.no_read_leftovers:
        sizes.read_leftovers = False
    only = ns.only or list(DEFAULT_SECTIONS)
    if "large" in only:
        sizes.large_files = ns.large_files or [100_000]
    if "bigtable" in only:
        sizes.bigtable_commits = ns.bigtable_commits or 1000
        if ns.bigtable_files_per_commit:
            sizes.bigtable_files_per_commit = ns.bigtable_files_per_commit
    if "transactions" in only:
        sizes.transaction_tables = ns.transaction_tables or [2, 16]
        if ns.transaction_files:
            sizes.transaction_files = ns.transaction_files
        if ns.transaction_undecided:
            sizes.transaction_undecided = ns.transaction_undecided
        if ns.repeats is not None:
            sizes.transaction_repeats = ns.repeats
        bad = [n for n in sizes.transaction_tables if sizes.transaction_files % n]
        if bad:
            raise SystemExit(
                f"txcommit bench: --transaction-tables {','.join(map(str, bad))}: each must "
                f"divide --transaction-files {sizes.transaction_files} (the same files in all)"
            )
    if ns.no_read or "read" not in only:
        sizes.read_txns = []
        sizes.read_partitions = 0
        sizes.read_listing_txns = 0
        sizes.read_leftovers = False
    if "sweep" not in only:
        sizes.files = []
        sizes.overwrite_files = []
    if "paper" not in only:
        sizes.seed_rows = 0
    return sizes


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    out = Path(ns.out)
    if out.suffix != ".md":
        raise SystemExit(f"txcommit bench: --out {ns.out}: expected a .md file")
    assets = out.with_suffix("")
    if ns.from_json:
        results = _read_results("--from-json", ns.from_json)
        if ns.note:  # a remark added after the run, kept with its results
            results["meta"]["note"] = f"{results['meta'].get('note', '')} {ns.note}".strip()
        if ns.note:
            _save(assets, results)
    else:
        stores = [s.strip() for s in ns.stores.split(",") if s.strip()]
        bad = [s for s in stores if s not in STORES]
        if bad or not stores:
            raise SystemExit(
                f"txcommit bench: --stores {ns.stores!r}: choose from {', '.join(STORES)}"
            )
        for section in ("read", "bigtable"):
            if ns.only == [section] and "s3" not in stores:
                raise SystemExit(
                    f"txcommit bench: --only {section} measures on S3: add s3 to --stores"
                )
        earlier = None
        if ns.merge_into:  # read first: a bad file should not cost a run
            earlier = _read_results("--merge-into", ns.merge_into)
        partial = assets / "results.partial.json"
        results = run(ns, stores, parse(ns.protocols), sizes_from(ns), partial)
        partial.unlink(missing_ok=True)
        for r in results.get("large", []):  # its heap is the server JVM's: say what ran in it
            r.setdefault("master", ns.master)
        if results.get("transactions"):
            from txcommit.bench.transactions_report import transactions_section

            print("\n".join(transactions_section(results["transactions"])))
        if earlier is not None:
            results = merge(earlier, results)
        _save(assets, results)
    write_report(results, out, assets, plots=not ns.no_plots)
    return 0


def _read_results(flag: str, path: str) -> dict[str, Any]:
    """A results.json written by txcommit bench, or an error naming the flag and the file."""
    try:
        results: dict[str, Any] = json.loads(Path(path).read_text())
        results["meta"]["sizes"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(
            f"txcommit bench: {flag} {path}: not a results.json written by txcommit bench ({e!r})"
        ) from e
    return results


def _save(assets: Path, results: dict[str, Any]) -> None:
    assets.mkdir(parents=True, exist_ok=True)
    (assets / "results.json").write_text(json.dumps(results, indent=1) + "\n")


def _covers(meta: dict[str, Any], results: dict[str, Any]) -> str:
    """What a run measured, from its own rows (a sentence for the report)."""
    parts = []
    for store in meta.get("stores", []):
        rows = [r for r in results.get("sweep", []) if r["store"] == store]
        by: dict[tuple[int, str], list[str]] = {}
        for r in rows:
            by.setdefault((r["files"], r["mode"]), []).append(r["protocol"])
        if by:
            points = "; ".join(f"{n} {mode}: {','.join(p)}" for (n, mode), p in sorted(by.items()))
            parts.append(f"{store} sweep ({points})")
    if results.get("read"):
        txns = sorted(
            {
                r["txns"]
                for r in results["read"]
                if r.get("case", "txcommit") == "txcommit" and r["txns"]
            }
        )
        dirs = sorted({r["dirs"] for r in results["read"] if r.get("case") == "plain"})
        listing = sorted({r["txns"] for r in results["read"] if r.get("case") == "listing"})
        plain = f", a plain table of {dirs[0]} directories" if dirs else ""
        by_listing = f", a table of {listing[0]} read by listing" if listing else ""
        parts.append(f"read cost at {','.join(map(str, txns))} transactions{plain}{by_listing}")
    if results.get("large"):
        files = ",".join(str(r["files"]) for r in results["large"])
        parts.append(f"large jobs of {files} files")
    if results.get("bigtable"):
        files = ",".join(f"{r['files']:,}" for r in results["bigtable"])
        parts.append(f"a synthesised table of {files} files (checkpoint, plans)")
    if results.get("transactions"):
        tx = results["transactions"]
        tables = sorted({r["tables"] for r in tx if r["kind"] == "commit" and r["tables"] > 1})
        stores = ",".join(sorted({r["store"] for r in tx if r["kind"] == "commit"}))
        undecided = sorted({r["undecided"] for r in tx if r["kind"] == "reader"})
        parts.append(
            f"transactions over {','.join(map(str, tables))} tables on {stores}"
            + (f", a reader meeting {','.join(map(str, undecided))} undecided" if undecided else "")
        )
    if results.get("seed"):
        stores = ",".join(sorted({r["store"] for r in results["seed"]}))
        parts.append("DBIO paper's job on " + stores)
    return "; ".join(parts) or "nothing"


#: The parts of results.json that hold rows.
PARTS = ("sweep", "seed", "read", "large", "bigtable", "transactions")


def merge(earlier: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new``'s rows replace ``earlier``'s of the same point; every row names its run."""
    runs = earlier.get("runs") or [
        {
            "id": "A",
            "date": earlier["meta"]["date"],
            "elapsed_s": earlier["meta"]["elapsed_s"],
            "note": earlier["meta"].get("note", ""),
            "covers": _covers(earlier["meta"], earlier),
        }
    ]
    run_id = chr(ord("A") + len(runs))
    for part in PARTS:
        for r in earlier.get(part, []):
            r.setdefault("run", runs[0]["id"])
        for r in new.get(part, []):
            r["run"] = run_id
    runs.append(
        {
            "id": run_id,
            "date": new["meta"]["date"],
            "elapsed_s": new["meta"]["elapsed_s"],
            "note": new["meta"].get("note", ""),
            "covers": _covers(new["meta"], new),
        }
    )

    def key(part: str, r: dict[str, Any]) -> tuple[Any, ...]:
        if part == "seed":
            return (r["store"], r["protocol"])
        if part == "large":
            return (r["store"], r["files"], r["protocol"])
        if part == "bigtable":
            return (r["store"], r["commits"], r["files_per_commit"])
        if part == "read":
            return tuple(r.get(k) for k in ("case", "txns", "dirs", "checkpoint", "temp", "filter"))
        if part == "transactions":
            fields = ("kind", "store", "case", "tables", "undecided", "phase")
            return tuple(r.get(k) for k in fields)
        return (r["store"], r["files"], r["mode"], r["protocol"])

    merged: dict[str, Any] = {"runs": runs}
    if new.get("read"):  # rows of an older layout (no "case") cannot be matched: re-run whole
        earlier = {**earlier, "read": [r for r in earlier.get("read", []) if "case" in r]}
    for part in PARTS:  # a re-run point takes its earlier row's place
        fresh = {key(part, r): r for r in new.get(part, [])}
        merged[part] = [fresh.pop(key(part, r), r) for r in earlier.get(part, [])]
        merged[part] += list(fresh.values())
    # The earlier run's description of the read cost (synthesis, server starts) stays: a
    # partial re-run describes less of it.
    info = {**new.get("read_info", {}), **earlier.get("read_info", {})}
    checkpoints = {
        **earlier.get("read_info", {}).get("checkpoints", {}),
        **new.get("read_info", {}).get("checkpoints", {}),
    }
    if checkpoints:
        info["checkpoints"] = checkpoints
    if info:
        merged["read_info"] = info
    merged["meta"] = {**earlier["meta"], "merged": True}
    return merged


def write_report(results: dict[str, Any], out: Path, assets: Path, plots: bool) -> None:
    from txcommit.bench.report import render, targets, verdict

    if plots:
        from txcommit.bench.plots import all_plots

        names = all_plots(results, assets)
    else:
        # The plots drawn before (a run that merges one section into the results draws none):
        # the report keeps showing them.
        names = sorted(p.name for p in assets.glob("*.png"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(results, names, assets.name, option_rows()))
    print(
        f"txcommit bench: wrote {out}" + (f" and {len(names)} plots in {assets}" if names else "")
    )
    for t in targets(results):
        print(f"  {verdict(t['held']).strip('*'):12} {t['target']}: {t['value']}")


def run(
    ns: argparse.Namespace,
    stores: list[str],
    protocols: list[Any],
    sizes: Any,
    partial: Path | None = None,
) -> dict[str, Any]:
    import txcommit  # noqa: F401 - before pyspark.sql.connect (see txcommit._spark_home)
    from txcommit.bench.jvm import HADOOP_CLOUD, floor_jar, hadoop_cloud_jar
    from txcommit.bench.runner import BUCKET, Bench
    from txcommit.devkit.latency_model import s3_model
    from txcommit.server import ServerConfig, find_pyspark_server, free_port, start
    from txcommit_store_s3 import s3a_confs
    from txcommit_store_s3.devkit.emulator import LocalS3

    started = time.monotonic()
    workdir = Path(ns.work_dir or tempfile.mkdtemp(prefix="txcommit-bench-")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    run_id = time.strftime("run-%Y%m%d-%H%M%S")
    jars = [str(floor_jar(find_pyspark_server() / "jars"))]
    if any(p.key == "magic" for p in protocols) and "s3" in stores:
        jars.append(str(hadoop_cloud_jar()))
    s3 = None
    confs = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "100"}
    if "s3" in stores:
        s3 = LocalS3(latency=s3_model(ns.latency_scale) if ns.latency_scale > 0 else None)
        s3.start()
        s3.create_bucket(BUCKET)
        confs.update(s3a_confs(s3.endpoint))
    config = ServerConfig(
        port=free_port(),
        master=ns.master,
        confs=confs,
        jars=jars,
        store="s3" if "s3" in stores else "local",
        log_file=str(workdir / "server.log"),
        die_with_parent=True,
        startup_timeout=300,
    )
    print(f"txcommit bench: starting the server (log {config.log_file})", flush=True)
    server = start(config)
    results: dict[str, Any] = {part: [] for part in PARTS}

    def fresh_server(name: str, extra: dict[str, str] | None = None) -> Any:
        """Another server configured like this one (cold plans), plus ``extra`` confs."""
        return start(
            replace(
                config,
                port=free_port(),
                log_file=str(workdir / f"server-{name}.log"),
                confs={**config.confs, **(extra or {})},
            )
        )

    def meta(done: bool) -> dict[str, Any]:
        return {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "elapsed_s": round(time.monotonic() - started, 1),
            "quick": bool(ns.quick),
            "complete": done,
            "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}",
            "note": ns.note,
            "master": ns.master,
            "latency_scale": ns.latency_scale,
            "hadoop_cloud": HADOOP_CLOUD.filename,
            "sizes": asdict(sizes),
            "stores": stores,
            "protocols": [p.key for p in protocols],
        }

    def checkpoint() -> None:
        """What has been measured so far, so an interrupted run still leaves its data."""
        if partial is not None:
            partial.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps({**results, "meta": meta(False)}, indent=1) + "\n")

    # S3 first: the targets are measured there; then the read cost, the DBIO paper's job, local.
    order = sorted(stores, key=lambda s: s != "s3")
    try:
        bench = Bench(server, s3, workdir, run_id, say=lambda m: print(m, flush=True))
        if sizes.files or sizes.seed_rows > 0:
            print("txcommit bench: warm-up", flush=True)
            bench.warm_up(protocols, stores)
        for store in order:
            for files in sizes.files:
                results["sweep"] += bench.sweep_point(
                    protocols, store, files, sizes, files in sizes.overwrite_files
                )
                checkpoint()
            tx = next((p for p in protocols if p.key == "txcommit"), None)
            if store == "s3" and tx is not None and sizes.large_files:
                from txcommit.bench.large import large_job

                if not sizes.files:
                    bench.warm_up([tx], ["s3"])
                for files in sizes.large_files:
                    results["large"].append(large_job(bench, tx, files, sizes))
                    checkpoint()
            if store == "s3" and tx is not None and sizes.bigtable_commits:
                from txcommit.bench import bigtable

                results["bigtable"].append(bigtable.run(bench, tx, sizes, fresh_server))
                checkpoint()
            reads = sizes.read_txns or sizes.read_partitions or sizes.read_listing_txns
            if store == "s3" and tx is not None and reads:
                from txcommit.bench.reads import ReadBench

                def progress(rows: list[dict[str, Any]], info: dict[str, Any]) -> None:
                    results["read"], results["read_info"] = rows, info
                    checkpoint()

                results["read"], results["read_info"] = ReadBench(
                    bench, tx, sizes, fresh_server, progress
                ).run()
                checkpoint()
            if store == order[0] and tx is not None and sizes.transaction_tables:
                from txcommit.bench import transactions

                results["transactions"] = transactions.run(bench, tx, sizes, order, fresh_server)
                checkpoint()
            if sizes.seed_rows > 0:
                results["seed"] += bench.paper_job(protocols, store, sizes)
                checkpoint()
    finally:
        server.stop()
        if s3 is not None:
            s3.stop()
        if not (ns.keep or ns.work_dir):
            shutil.rmtree(workdir, ignore_errors=True)
    results["meta"] = meta(True)
    return results
