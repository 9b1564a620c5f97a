"""Turns benchmark results into docs/benchmarks.md: tables, the targets held or missed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from txcommit._console import markdown
from txcommit._names import (
    CHECK_CONFLICTS_STAGE,
    COPY_REPLACE_RECORD_STAGE,
    PUBLISH_COMMIT_RECORD_STAGE,
    PUBLISH_REPLACE_RECORD_STAGE,
)
from txcommit.bench.bigtable_report import bigtable_section, bigtable_targets
from txcommit.bench.read_report import is_new, read_notes, read_section, read_targets
from txcommit.bench.transactions_report import transactions_section, transactions_targets
from txcommit.devkit.latency_model import S3_COPY_MB_PER_S, S3_DEFAULT_MS, S3_FIGURES

#: Request columns of the tables: (heading, operations counted).
REQUEST_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("PUT", ("PUT",)),
    ("COPY", ("COPY", "MULTIPART_PART_COPY")),
    ("DELETE", ("DELETE", "DELETE_BULK")),
    ("LIST", ("LIST",)),
    ("HEAD", ("HEAD",)),
    ("GET", ("GET",)),
    ("MPU init", ("MULTIPART_INITIATE",)),
    ("MPU part", ("MULTIPART_PART",)),
    ("MPU complete", ("MULTIPART_COMPLETE",)),
    ("MPU other", ("MULTIPART_ABORT", "MULTIPART_LIST", "MULTIPART_LIST_PARTS")),
)
TARGET_FILES = 1000


def grouped(counts: dict[str, int]) -> dict[str, int]:
    """Request counts folded into the table's columns (anything else goes to "other")."""
    out = {name: sum(counts.get(op, 0) for op in ops) for name, ops in REQUEST_COLUMNS}
    known = {op for _, ops in REQUEST_COLUMNS for op in ops}
    out["other"] = sum(n for op, n in counts.items() if op not in known)
    return out


def table(headings: list[str], rows: Iterable[list[Any]]) -> str:
    return markdown(headings, ([_cell(c) for c in row] for row in rows))


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n else "0"


def _find(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


#: The read-cost state measured without leftovers: after a real VACUUM; results of runs before
#: VACUUM existed call it "after cleanup" (the leftovers deleted directly).
CLEAN_STATES = ("after vacuum", "after cleanup")


def _clean(reads: list[dict[str, Any]], txns: Any, filt: str) -> dict[str, Any] | None:
    for state in CLEAN_STATES:
        found = _find(reads, txns=txns, state=state, filter=filt)
        if found:
            return found
    return None


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


# ------------------------------------------------------------------------------ targets


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target the report states (docs/benchmarks.md): held (True/False, None = not
    measured in this run) and the value."""
    sweep = [r for r in results.get("sweep", []) if r["store"] == "s3"]
    files = sorted({r["files"] for r in sweep})
    at = TARGET_FILES if TARGET_FILES in files else (max(files) if files else None)
    where = f"S3, {at} files, append" + ("" if at == TARGET_FILES else " (1000 not run)")

    def get(proto: str, key: str) -> float | None:
        r = _find(sweep, protocol=proto, files=at, mode="append")
        return None if r is None else r.get(key)

    out: list[dict[str, Any]] = []

    def add(name: str, held: bool | None, value: str) -> None:
        out.append({"target": name, "held": held, "value": value})

    tx = get("txcommit", "commit_s")
    for other, factor in (("v1", 10.0), ("magic", 2.0)):
        ratio = _ratio(get(other, "commit_s"), tx)
        add(
            f"job commit >= {factor:g}x faster than {other} ({where})",
            None if ratio is None else ratio >= factor,
            "not measured"
            if ratio is None
            else f"{ratio:.1f}x ({get(other, 'commit_s'):.3f} s vs {tx:.3f} s)",
        )
    for proto in ("txcommit", "txcommit-mp"):
        for mode in ("append", "overwrite"):
            mine = [r for r in sweep if r["protocol"] == proto and r["mode"] == mode]
            copies = sum(grouped(r["requests"]["counts"])["COPY"] for r in mine)
            deletes = sum(r["requests"]["data_deletes"] for r in mine)
            why = (
                ""
                if mode == "append" or not deletes
                else (
                    "; an overwrite deleted old data during the job (a logical overwrite records "
                    "the removal in replace/ and leaves deletion to VACUUM, docs/protocol.md I14)"
                )
            )
            add(
                f"zero data COPY and DELETE requests ({proto}, every S3 {mode} of the sweep)",
                None if not mine else copies == 0 and deletes == 0,
                f"{copies} COPY, {deletes} data objects deleted over {len(mine)} writes{why}",
            )
    out += floor_targets(results)
    out += large_targets(results)
    out += bigtable_targets(results)
    out += transactions_targets(results)
    costs = {
        r["files"]: {
            k: v for k, v in (r["txcommit"]["jobCommitRequests"] or {}).items() if k != "adapter"
        }
        for r in sweep
        if r["protocol"] == "txcommit" and r["mode"] == "append"
    }
    distinct = {tuple(sorted(c.items())) for c in costs.values()}
    add(
        "job commit requests independent of file count (conditional-put, _SUCCESS)",
        None if len(costs) < 2 else len(distinct) == 1,
        "; ".join(f"{n} files: {c}" for n, c in sorted(costs.items())) or "not measured",
    )
    reads = results.get("read", [])
    if is_new(reads):
        return out + read_targets(results)
    # results of runs before the read section planned cold and warm
    most = max((r["txns"] for r in reads), default=None)
    on, off = _clean(reads, most, "on"), _clean(reads, most, "off")
    ratio = _ratio(on["plan_s"] if on else None, off["plan_s"] if off else None)
    add(
        f"filtered read plan <= 1.1x unfiltered {on['state'] if on else 'after vacuum'} "
        f"({most} transactions)",
        None if ratio is None else ratio <= 1.1,
        "not measured"
        if ratio is None or on is None or off is None
        else f"{ratio:.2f}x ({on['plan_s']:.3f} s vs {off['plan_s']:.3f} s)",
    )
    return out


#: The write path's targets: total job time against the no-protocol floor, per S3 adapter, at
#: these file counts and above (S3, append), side by side in one run.
FLOOR_TARGETS = (("txcommit", "conditional-put", 0.8), ("txcommit-mp", "multipart-complete", 1.0))
#: What one more data file may cost each adapter at most, in the request columns: one PUT
#: (conditional put), or the upload the job commit completes (multipart complete); nothing else.
PER_FILE_TARGETS = (
    ("txcommit", "conditional-put", {"PUT": 1}),
    ("txcommit-mp", "multipart-complete", {"MPU init": 1, "MPU part": 1, "MPU complete": 1}),
)
#: A request kind costs something per data file when it grows by at least this much per file
#: (one request per 100 more files); less is the job's own, which varies by a few per write.
PER_FILE_MIN = 0.01
#: An overwrite may cost this much more than an append of the same size, on every store.
OVERWRITE_TARGET = 1.1
#: Job commit time is "flat" in the file count when its slowest point is within this factor
#: of its fastest (times of a few hundred ms vary by more than 10% on a shared machine).
FLAT_COMMIT_FACTOR = 2.0


def floor_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The write path at the floor: S3 totals against the floor at 1000 files and above, an
    overwrite against an append of the same size on each store, job commit flat in files.
    Every pair compared comes from one run; a missed target carries the reason (``why``),
    read off the same rows."""
    sweep = results.get("sweep", [])
    out: list[dict[str, Any]] = []

    def add(name: str, held: bool | None, value: str, why: str = "") -> None:
        out.append({"target": name, "held": held, "value": value, "why": why})

    s3 = [r for r in sweep if r["store"] == "s3" and r["mode"] == "append"]
    for proto, primitive, limit in FLOOR_TARGETS:
        for row in sorted(
            (r for r in s3 if r["protocol"] == proto and r["files"] >= TARGET_FILES),
            key=lambda r: r["files"],
        ):
            floor = _find(s3, protocol="floor", files=row["files"], run=row.get("run"))
            if floor is None:
                continue
            ratio = row["total_s"] / floor["total_s"]
            add(
                f"total job time <= {limit:g}x the no-protocol floor (txcommit {primitive}, "
                f"S3, {row['files']} files, append)",
                ratio <= limit,
                f"{ratio:.2f}x ({row['total_s']:.1f} s vs {floor['total_s']:.1f} s)",
                _why_above_floor(row, floor),
            )
    for proto, primitive, allowed in PER_FILE_TARGETS:
        rows = sorted(
            (r for r in s3 if r["protocol"] == proto and r.get("requests")),
            key=lambda r: r["files"],
        )
        pairs = [
            (a, b)
            for a in rows
            for b in rows
            if a["files"] < b["files"] and a.get("run") == b.get("run")
        ]
        if not pairs:
            continue
        small, large = max(pairs, key=lambda p: (p[1]["files"] - p[0]["files"], p[1]["files"]))
        n = large["files"] - small["files"]
        big, little = _requests(large), _requests(small)
        delta = {k: big.get(k, 0) - little.get(k, 0) for k in sorted(set(big) | set(little))}
        per = {k: d / n for k, d in delta.items()}
        # The job's own requests (a resent LIST, a retried PUT, the clean-up listing as the
        # job returns) vary by a few between any two writes; a per-file cost grows with n.
        own = {
            k: d for k, d in delta.items() if k not in allowed and d and abs(per[k]) < PER_FILE_MIN
        }
        over = {k: v for k, v in per.items() if v >= allowed.get(k, 0) + PER_FILE_MIN}
        shown = {k: v for k, v in per.items() if k not in own and abs(v) >= 0.0005}
        value = ", ".join(f"{k} {v:.3f}" for k, v in shown.items()) or "none"
        add(
            f"requests per data file: at most {_kv(allowed)}, no HEAD or LIST (txcommit "
            f"{primitive}, S3, the {small['files']} and {large['files']}-file appends of one run)",
            not over,
            value
            + (
                f" (the job's own: {', '.join(f'{k} {d:+d}' for k, d in own.items())})"
                if own
                else ""
            ),
            f"per data file beyond the target: {_kv({k: round(v, 3) for k, v in over.items()})}",
        )
    mine = [r for r in sweep if r["protocol"] in ("txcommit", "txcommit-mp")]
    for over in sorted(
        (r for r in mine if r["mode"] == "overwrite"),
        key=lambda r: (r["store"], r["protocol"], r["files"]),
    ):
        append = _find(
            mine,
            store=over["store"],
            protocol=over["protocol"],
            files=over["files"],
            mode="append",
            run=over.get("run"),
        )
        if append is None:  # measured in different runs: not side by side
            continue
        ratio = over["total_s"] / append["total_s"]
        add(
            f"overwrite <= {OVERWRITE_TARGET:g}x an append of the same size ({over['protocol']}, "
            f"{over['store']}, {over['files']} files)",
            ratio <= OVERWRITE_TARGET,
            f"{ratio:.2f}x ({over['total_s']:.2f} s vs {append['total_s']:.2f} s)",
            _why_overwrite(over, append),
        )
    for store, proto in sorted({(r["store"], r["protocol"]) for r in mine}):
        every = [
            r
            for r in mine
            if r["store"] == store
            and r["protocol"] == proto
            and r["mode"] == "append"
            and r["commit_s"] is not None
        ]
        # One run's rows: times of runs under other loads are not side by side.
        by_run: dict[Any, list[dict[str, Any]]] = {}
        for r in every:
            by_run.setdefault(r.get("run"), []).append(r)
        if not by_run:
            continue
        run = max(by_run, key=lambda k: (len({r["files"] for r in by_run[k]}), str(k)))
        rows = sorted(by_run[run], key=lambda r: r["files"])
        if len(rows) < 2:
            continue
        times = [r["commit_s"] for r in rows]
        slow, fast = max(times), max(min(times), 0.001)
        add(
            f"job commit time flat in the file count: slowest <= {FLAT_COMMIT_FACTOR:g}x "
            f"fastest ({proto}, {store}, {rows[0]['files']} to {rows[-1]['files']} files, append)",
            slow / fast <= FLAT_COMMIT_FACTOR,
            ", ".join(f"{r['files']} files {r['commit_s']:.2f} s" for r in rows)
            + f" ({slow / fast:.1f}x)",
            _why_commit_grows(rows),
        )
    return out


#: A very large job (the large section): its job commit on the S3 model, and how much the
#: server's heap in use grows from before the job (after a full GC) to its peak during it.
LARGE_COMMIT_S = 2.0
LARGE_HEAP_GROWTH_MB = 500.0


def _large_commit_why(commit: float, stages: dict[str, int]) -> str:
    """Why a large job's commit took `commit` s when its stages up to the record took less."""
    named = ", ".join(f"{k} {v} ms" for k, v in stages.items())
    return (
        f"its stages up to the record took {sum(stages.values()) / 1000:.2f} s of the "
        f"{commit:.2f} s ({named}); the rest is outside them: the derived work after the "
        "record (`_SUCCESS`, now and then a checkpoint, manifests where they are on), each "
        "stage timed in the server log"
    )


def large_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Each large job's commit time and heap growth against their targets."""
    out: list[dict[str, Any]] = []
    for r in sorted(results.get("large", []), key=lambda r: r["files"]):
        where = f"{r.get('label', r['protocol'])}, S3, {r['files']} files, append"
        commit = r.get("commit_s")
        stages = (r.get("txcommit") or {}).get("stageDurationsMs") or {}
        out.append(
            {
                "target": f"job commit <= {LARGE_COMMIT_S:g} s ({where})",
                "held": None if commit is None else commit <= LARGE_COMMIT_S,
                "value": "not measured" if commit is None else f"{commit:.2f} s",
                # Spark's timer spans all of commitJob; `_SUCCESS` times the stages up to the
                # record.
                "why": "" if commit is None else _large_commit_why(commit, stages),
            }
        )
        growth = r["heap_peak_mb"] - r["heap_before_mb"]
        out.append(
            {
                "target": f"driver heap growth <= {LARGE_HEAP_GROWTH_MB:g} MB ({where})",
                "held": growth <= LARGE_HEAP_GROWTH_MB,
                "value": f"{growth:+.0f} MB ({r['heap_before_mb']:.0f} MB before, "
                f"{r['heap_peak_mb']:.0f} MB at the peak)"
                + (
                    f"; the largest heap a collection left: "
                    f"{r['heap_live_peak_mb'] - r['heap_before_mb']:+.0f} MB"
                    if "heap_live_peak_mb" in r
                    else ""
                ),
                "why": f"the server JVM's heap: it held the {_server_jvm(r.get('master'))}; "
                "the peak is the heap in use, garbage not yet collected included, so it "
                "overstates what the job kept; the driver held the manifests of "
                f"{r.get('tasks', 0):,} tasks naming {r['files']:,} files and built a commit "
                f"record of {r.get('record_bytes', 0) / 1e6:.1f} MB from them",
            }
        )
    return out


def _server_jvm(master: str | None) -> str:
    """What ran in the JVM whose heap a large row measured."""
    if master is None:
        return "driver and tasks"  # rows of runs before the column: local[16]
    return (
        f"driver ({master})"
        if master.startswith("local-cluster")
        else f"driver and tasks ({master})"
    )


def _large_section(rows: list[dict[str, Any]]) -> list[str]:
    body = []
    for r in sorted(rows, key=lambda r: r["files"]):
        stages = (r.get("txcommit") or {}).get("stageDurationsMs") or {}
        reader = r.get("reader") or {}
        on, off = reader.get("on") or {}, reader.get("off") or {}
        body.append(
            [
                str(r["files"]),
                f"{r['total_s']:.1f}",
                r.get("commit_s"),
                ", ".join(f"{k} {v}" for k, v in stages.items()),
                f"{r.get('record_bytes', 0):,}",
                f"{r['heap_before_mb']:.0f} / {r['heap_peak_mb']:.0f}"
                + (f" / {r['heap_live_peak_mb']:.0f}" if "heap_live_peak_mb" in r else ""),
                _server_jvm(r.get("master")),
                f"{on.get('plan_s', 0):.2f} / {off.get('plan_s', 0):.2f}",
                ", ".join(f"{k} {v}" for k, v in (on.get("log_requests") or {}).items()),
                r.get("run", ""),
            ]
        )
    return [
        "## The sizes users grow into: a very large job (S3)",
        "",
        "One txcommit append (conditional put) written for real through Spark on the modelled "
        "S3, each task writing one small file in each of 100 partition directories "
        "(`txcommit bench --only large --stores s3 --large-files 100000 --master "
        "'local-cluster[2,8,2048]'`, outside CI). *heap* is "
        "the server JVM's heap in use (jstat every 250 ms: survivors, eden and old, so "
        "uncollected garbage counts) before the job, after a full GC, and at its peak during "
        "it, and *kept* the largest heap a collection left during it (survivors and old right "
        "after one); *server JVM* what ran in it: the driver alone (`local-cluster`: executors "
        "in their own JVMs), or the driver and every task (`local[n]`: each task's open Parquet "
        "writers, one per partition directory, count too); *plan* is "
        "`spark.read.parquet(url)`, its schema and `inputFiles()` in a session "
        "that never read the table, the read filter on / off; *log requests* are the filtered "
        "plan's requests of the table's log.",
        "",
        table(
            [
                "files",
                "total s",
                "job commit s",
                "stages (ms)",
                "record bytes",
                "heap MB before / peak / kept",
                "server JVM",
                "plan s on / off",
                "log requests (on)",
                "run",
            ],
            body,
        ),
        "",
    ]


def _requests(row: dict[str, Any]) -> dict[str, int]:
    """Requests by column; rows of the local file system have none (no endpoint to count)."""
    counts = (row.get("requests") or {}).get("counts") or {}
    return {k: v for k, v in grouped(counts).items() if v}


def _delta(a: dict[str, int], b: dict[str, int]) -> str:
    diff = {k: a.get(k, 0) - b.get(k, 0) for k in sorted(set(a) | set(b))}
    return ", ".join(f"{v:+d} {k}" for k, v in diff.items() if v) or "none"


def _why_above_floor(row: dict[str, Any], floor: dict[str, Any]) -> str:
    mine, base = _requests(row), _requests(floor)
    n = row["files"]
    what = (
        "a data file is one PUT with no probe and no HEAD (docs/adapters.md), so the requests "
        "are fewer than the floor's; what is left is the job's own work and the machine"
        if row["protocol"] == "txcommit"
        else "a multipart upload per data file (initiate and part in the task, the completion at "
        "the job commit, 64 at a time: three requests where the conditional put sends one "
        "PUT), the completions being this adapter's commit point (docs/adapters.md)"
    )
    return (
        f"{sum(mine.values()) / sum(base.values()):.2f}x the floor's requests "
        f"({_delta(mine, base)} at {n} files): {what}. The local endpoint (moto behind the "
        "latency model) answers every request in Python on the same two cores as Spark: each "
        "request costs it CPU time the latency model does not charge (a LIST scans the "
        "bucket's keys, so LISTs cost more as the bucket fills), and a large write is bound "
        "by that CPU rather than by the modelled latency."
    )


def _why_overwrite(over: dict[str, Any], append: dict[str, Any]) -> str:
    stages = (over.get("txcommit") or {}).get("stageDurationsMs") or {}
    replacing = ", ".join(
        f"{k} {v} ms"
        for k, v in stages.items()
        if k in (CHECK_CONFLICTS_STAGE, PUBLISH_REPLACE_RECORD_STAGE, COPY_REPLACE_RECORD_STAGE)
    )
    extra = over["total_s"] - append["total_s"]
    commit = (over["commit_s"] or 0) - (append["commit_s"] or 0)
    return (
        f"the overwrite took {extra:+.2f} s, {commit:+.2f} s of it in the job commit "
        f"({replacing}): a replacing commit lists the table it replaces to name every removed "
        "file by its identity (docs/protocol.md I21), checks for conflicting commits and "
        "publishes the replace record and its copy"
        + (
            f"; requests against the append: {_delta(_requests(over), _requests(append))}"
            if over.get("requests")
            else ""
        )
        + ". The rest is Spark's own work for an "
        "overwrite and the run-to-run spread of single totals on a shared 2-core machine "
        "(a few tenths of a second: compare the floor's append and overwrite rows)."
    )


def _why_commit_grows(rows: list[dict[str, Any]]) -> str:
    first, last = rows[0], rows[-1]
    if first["protocol"] == "txcommit-mp":
        return (
            "the multipart-complete adapter's commit point is the completion of every data "
            "file's upload (one request per file, 64 at a time), so its job commit grows with "
            "the file count by design; the conditional-put adapter's does not."
        )

    def record_ms(r: dict[str, Any]) -> int:
        ms: int = ((r.get("txcommit") or {}).get("stageDurationsMs") or {}).get(
            PUBLISH_COMMIT_RECORD_STAGE, 0
        )
        return ms

    return (
        f"the commit record names every data file, so it grows with the file count: "
        f"publishing it took {record_ms(first)} ms at {first['files']} files and "
        f"{record_ms(last)} ms at {last['files']}; the whole job commit stays below "
        f"{max(r['commit_s'] for r in rows):.2f} s."
    )


def verdict(held: bool | None) -> str:
    return {True: "held", False: "**missed**", None: "not measured"}[held]


# ------------------------------------------------------------------------------ document


def render(
    results: dict[str, Any],
    plots: list[str],
    assets: str = "benchmarks",
    options: list[tuple[str, str, str]] | None = None,
) -> str:
    """The report; ``plots`` are file names in the directory ``assets`` next to it, and
    ``options`` the (flag, meaning, default) rows of ``txcommit bench --help``."""
    meta = results["meta"]
    runs = results.get("runs") or []
    if len(runs) > 1:
        # Results and method only: how a particular run went belongs in version control.
        header = [
            f"Merged from {len(runs)} runs of `txcommit bench` (`--merge-into`): the column *run* "
            "names each row's run. Rows of one run are side by side against the same server and "
            "endpoint; rows of different runs are not, so compare them with care.",
            "",
            table(
                ["run", "date", "minutes", "measured"],
                [[r["id"], r["date"], f"{r['elapsed_s'] / 60:.1f}", r["covers"]] for r in runs],
            ),
            "",
            f"Machine: {meta['machine']}.",
        ]
    else:
        header = [
            "Generated by `txcommit bench` "
            + ("(**--quick smoke run: not a full run**) " if meta.get("quick") else "")
            + (
                "(**an interrupted run: only what it measured before it stopped**) "
                if meta.get("complete") is False
                else ""
            )
            + f"on {meta['date']}; the run took {meta['elapsed_s'] / 60:.1f} min. Re-run with "
            "`txcommit bench` (see `txcommit bench --help`); every figure below comes from "
            "that one run, all protocols side by side against the same server and endpoint.",
            "",
            f"Machine: {meta['machine']}.",
        ]
    parts = [
        "# Benchmarks",
        "",
        *header,
        "",
        "## Targets",
        "",
        table(
            ["target", "result", "measured"],
            [[t["target"], verdict(t["held"]), t["value"]] for t in targets(results)],
        ),
        "",
    ]
    parts += _notes_on_targets(results)
    parts += _method(results)
    for store in ("s3", "local"):
        rows = [r for r in results.get("sweep", []) if r["store"] == store]
        if rows:
            parts += _sweep_section(store, rows)
    if results.get("large"):
        parts += _large_section(results["large"])
    if results.get("bigtable"):
        parts += bigtable_section(results["bigtable"])
    if results.get("transactions"):
        parts += transactions_section(results["transactions"])
    if results.get("seed"):
        parts += _seed_section(results["seed"], meta)
    if results.get("read"):
        reads = results["read"]
        parts += read_section(results) if is_new(reads) else _read_section(reads)
    if plots:
        parts += ["## Plots", ""] + [f"![{p}]({assets}/{p})" for p in plots] + [""]
    if options:
        parts += [
            "## Running it",
            "",
            "`txcommit bench [options]` (from a checkout with "
            "`bash .ci/setup` done, or `pip install 'txcommit[server,bench]'` "
            "and a JDK 17 with javac):",
            "",
            table(["Option", "Meaning", "Default"], [list(o) for o in options]),
            "",
        ]
        parts += [
            "The sections outside the default run (and outside CI: tens of minutes each on 2 "
            "cores), each merged into the results of earlier runs:",
            "",
            "- a very large job: `txcommit bench --only large --stores s3 --large-files 100000 "
            "--no-plots --merge-into docs/benchmarks/results.json`;",
            "- a table of a million files: `txcommit bench --only bigtable --stores s3 "
            "--no-plots --merge-into docs/benchmarks/results.json` (`--bigtable-commits`, "
            "`--bigtable-files-per-commit` for other sizes);",
            "- multi-table transactions (a few minutes): `txcommit bench --only transactions "
            "--stores s3,local --no-plots --merge-into docs/benchmarks/results.json` "
            "(`--transaction-tables`, `--transaction-files`, `--transaction-undecided`, "
            "`--repeats` for other sizes).",
            "",
            "The latency model alone: `txcommit local-s3 --latency-model s3 "
            "[--latency-scale F]` (default `--latency-model none`, scale 1.0).",
            "",
        ]
    parts += _latency_section()
    return "\n".join(parts) + "\n"


def _notes_on_targets(results: dict[str, Any]) -> list[str]:
    """Why each target came out as it did, read off the same run's numbers."""
    sweep = [r for r in results.get("sweep", []) if r["store"] == "s3" and r["mode"] == "append"]
    files = sorted({r["files"] for r in sweep})
    at = TARGET_FILES if TARGET_FILES in files else (max(files) if files else None)
    row = {r["protocol"]: r for r in sweep if r["files"] == at}
    notes: list[str] = []
    v1, tx, floor = row.get("v1"), row.get("txcommit"), row.get("floor")
    if v1 and v1["commit_s"]:
        g = grouped(v1["requests"]["counts"])
        notes.append(
            f"v1's job commit at {at} files took {v1['commit_s']:.1f} s "
            f"({v1['commit_s'] / at:.2f} s per file): it renames the job's files one by one, "
            f"each a COPY and a DELETE plus HEAD/LIST probes (whole job: {g['COPY']} COPY, "
            f"{g['HEAD']} HEAD, {g['LIST']} LIST)."
        )
    if tx and tx.get("txcommit"):
        stages = tx["txcommit"].get("stageDurationsMs") or {}
        slowest = max(stages.items(), key=lambda kv: kv[1], default=None)
        notes.append(
            f"txcommit's job commit at {at} files: {tx['commit_s']:.2f} s; its requests "
            f"({_kv(tx['txcommit'].get('jobCommitRequests'))}) are the schema guard's LIST of "
            "commits/ and replace/ and the PUT of the commit record, whatever the file count "
            "(a JVM's first commit to a table also lists checkpoints/ and reads the newest "
            "checkpoint and the records after it, whatever the table's history; clean-up of "
            "failed attempts runs after the job returned)"
            + (f"; the slowest stage was {slowest[0]} ({slowest[1]} ms)." if slowest else ".")
        )
    if tx and floor:
        t, f = grouped(tx["requests"]["counts"]), grouped(floor["requests"]["counts"])
        notes.append(
            f"Total job time against the floor at {at} files: txcommit {tx['total_s']:.1f} s, "
            f"floor {floor['total_s']:.1f} s. Beyond the job commit, txcommit's tasks make "
            f"{t['HEAD'] - f['HEAD']:+d} HEAD, {t['LIST'] - f['LIST']:+d} LIST and "
            f"{t['PUT'] - f['PUT']:+d} PUT requests compared with the floor's: a data file "
            "is one PUT. The floor's HEAD and LIST per file are S3A's probes before it creates "
            "a file (is something at this key, is it a directory) and Spark's statistics "
            "tracker asking the size of the file it closed; txcommit writes its data files "
            "through its own create path, which skips the probes (no two writes share a "
            "txcommit name) and answers the tracker, and the task's manifest, with the bytes "
            "the writer sent, once S3 acknowledged them (docs/protocol.md I19). Totals of "
            "single runs on a shared 2-core machine vary by several percent between runs "
            "(compare the 10- and 100-file rows)."
            + (
                " Here txcommit even came out faster than the floor, which makes fewer "
                "requests: the floor always runs first in its group of writes, and on this "
                "loaded machine single totals are not precise to 10%, so read this target "
                "as indicative; the request counts are exact."
                if tx["total_s"] < floor["total_s"] and sum(t.values()) > sum(f.values())
                else " The floor's total at the same request counts varies between runs with "
                "the machine's load (the local endpoint answers every request in Python on the "
                "same two cores, so under load a request costs more than the model's latency, "
                "and fewer requests save more): compare ratios within one run only."
            )
        )
    notes += [
        f"Missed, {t['target']}: {t['why']}"
        for t in floor_targets(results)
        + large_targets(results)
        + bigtable_targets(results)
        + transactions_targets(results)
        if t["held"] is False and t["why"]
    ]
    reads = results.get("read", [])
    if is_new(reads):
        notes += read_notes(results)
    elif reads:
        most = max(r["txns"] for r in reads)
        on, off = _clean(reads, most, "on"), _clean(reads, most, "off")
        if on and off:
            notes.append(
                f"Read planning with the filter at {most} transactions: {_kv(on['requests'])} "
                f"per plan, against {_kv(off['requests'])} without it. The filter keeps the "
                "commit records it has decoded JVM-wide (they are immutable and never "
                "deleted), so a plan reads only records it has not seen before; what it asks "
                "every time is the `replace/` listing and, per partition directory, whether "
                "that directory is a table root (docs/protocol.md, *Reading*)."
            )
    return (["Notes on the targets:", ""] + [f"- {n}" for n in notes] + [""]) if notes else []


def _method(results: dict[str, Any]) -> list[str]:
    sizes = results["meta"]["sizes"]
    return [
        "## What is measured, and how",
        "",
        "- **Total job time**: the client's wall clock around `df.write....parquet(url)` "
        "(Spark Connect round trip included, the same for every protocol).",
        "- **Job commit time**: Spark's own timer around `FileCommitProtocol.commitJob`, which "
        "`FileFormatWriter` logs for every protocol (`Write Job <id> committed. Elapsed time: "
        "<n> ms.`), read from the server log. It does not include task commits (v1 renames "
        "each task's output at task commit, v2 its files; the magic committer saves the "
        "task's pending uploads), which show in the total.",
        "- **Requests**: every request the local S3 endpoint served during the write, "
        "executors included, from its request log (`GET /_txcommit/requests`). DELETE counts "
        "DeleteObject and DeleteObjects requests; *data deleted* counts data objects "
        "(`part-*` outside `_`/`.` directories) named in them.",
        "- **Protocols**: one Spark Connect server (`txcommit server --store s3`, "
        f"master `{results['meta']['master']}`) serves every protocol; each write runs in a "
        "fresh session with only that protocol's confs. *no protocol (floor)* is a bench-only "
        "`FileCommitProtocol` (`python/src/txcommit/bench/java/DirectWriteCommitProtocol.java`, "
        "compiled by the benchmark, never shipped) that writes each file in place and does "
        "nothing else: the least work a Spark write can do, and unsafe. v1/v2 are Spark's "
        "default protocol with `mapreduce.fileoutputcommitter.algorithm.version`. The S3A "
        "magic committer is spark-hadoop-cloud's `PathOutputCommitProtocol` with "
        "`BindingParquetOutputCommitter` and `fs.s3a.committer.name=magic`, from "
        f"`{results['meta']['hadoop_cloud']}`: Maven Central has no 4.3.0 build of "
        "spark-hadoop-cloud (4.1.2 is the newest); it runs unchanged against Spark 4.3.0.",
        f"- **File-count sweep**: `files` = tasks x {sizes['partitions']} partition directories "
        f'(`partitionBy("p")`, every task writes one file per directory), '
        f"{sizes['rows_per_file']} rows (two longs) per file: the directory count is fixed and "
        "the files are small, so the sweep measures per-file costs. "
        + (
            f"On S3, 1000 files run only {', '.join(sizes['s3_target_protocols'])} (the "
            "protocols the targets compare). "
            if "s3_target_protocols" in sizes
            else ""
        )
        + "On S3, file counts "
        f"above 1000 run only {', '.join(sizes.get('s3_large_protocols', []))} (the others "
        "at 5000 files do not fit the run's 35-minute budget: v1's job commit costs about "
        "0.65 s per file on the modelled S3). Overwrites run at "
        f"{', '.join(str(n) for n in sizes['overwrite_files'])} files. "
        "The append writes a new table; the overwrite then replaces that table with the same "
        "shape.",
        _default_coverage(),
        "- A warm-up write per protocol and store runs first (untimed).",
        "- moto is not thread-safe when a listing races a delete of the same bucket: it "
        "occasionally answers such a LIST with HTTP 500 (seen with v1 and the magic "
        "committer, which delete while they list); S3A retries it, so a write may show a "
        "request or two more than its protocol needs.",
        "",
    ]


def _default_coverage() -> str:
    """What ``txcommit bench`` without options runs (from the defaults themselves)."""
    from txcommit.bench.runner import LARGE, Sizes

    d = Sizes()
    large = [n for n in d.files if n > LARGE]
    return (
        "- **The default run** (`txcommit bench`, no options) covers: both stores; appends at "
        f"{', '.join(map(str, d.files))} files, overwrites at "
        f"{', '.join(map(str, d.overwrite_files))}; every protocol below {LARGE} files; on "
        f"S3 at {LARGE} files only {', '.join(d.s3_target_protocols)}"
        + (f", above it only {', '.join(d.s3_large_protocols)}" if large else "")
        + f"; the DBIO paper's job ({d.seed_rows:_} rows) on both stores; the read cost on "
        f"synthesised log-only txcommit tables of {', '.join(map(str, d.read_txns))} "
        "transactions (cold and warm, with a checkpoint, and with only their creation "
        f"checkpoint up to {d.read_no_checkpoint_max}), a log-only table and a plain table of "
        f"{d.read_partitions} directories, a table of {d.read_listing_txns} transactions read "
        "by listing and a table with uncommitted leftovers. It is sized "
        "for the 35-minute "
        f"budget on 2 cores (v1's {LARGE}-file write on S3 alone takes about 12 min); more "
        "points with `--files`, `--overwrite-files`, `--s3-target-protocols all`, "
        "`--s3-large-protocols`. Rows of other runs merged in with `--merge-into` say so in "
        "their *run* column."
    )


def _sweep_section(store: str, rows: list[dict[str, Any]]) -> list[str]:
    title = "S3 (moto + latency model)" if store == "s3" else "local file system"
    out = [f"## File-count sweep: {title}", ""]
    # "vs floor" against the floor of the row's own run (merged runs: loads differed)
    floor = {
        (r["files"], r["mode"], r.get("run")): r["total_s"]
        for r in rows
        if r["protocol"] == "floor"
    }
    headings = ["files", "mode", "protocol", "total s", "vs floor", "job commit s"]
    runs = any("run" in r for r in rows)
    if store == "s3":
        headings += [name for name, _ in REQUEST_COLUMNS] + [
            "other",
            "bytes copied",
            "data deleted",
        ]
    body = []
    for r in sorted(rows, key=lambda r: (r["files"], r["mode"] != "append")):
        ratio = _ratio(r["total_s"], floor.get((r["files"], r["mode"], r.get("run"))))
        row = [
            r["files"],
            r["mode"],
            r["label"],
            r["total_s"],
            None if ratio is None else f"{ratio:.2f}x",
            r["commit_s"],
        ]
        if store == "s3":
            g = grouped(r["requests"]["counts"])
            row += [g[name] for name, _ in REQUEST_COLUMNS] + [g["other"]]
            row += [_mb(r["requests"]["bytes_copied"]), r["requests"]["data_deletes"]]
        if runs:
            row.append(r.get("run"))
        body.append(row)
    out += [table(headings + (["run"] if runs else []), body), ""]
    tx = [r for r in rows if r.get("txcommit")]
    if tx:
        out += [
            f"txcommit's own `_SUCCESS` summary ({title}): commit duration, stage "
            "timings (ms) and the job commit's requests as counted by the adapter:",
            "",
        ]
        out += [
            table(
                ["files", "mode", "protocol", "durationMs", "stages (ms)", "jobCommitRequests"],
                [
                    [
                        r["files"],
                        r["mode"],
                        r["label"],
                        r["txcommit"]["durationMs"],
                        _kv(r["txcommit"]["stageDurationsMs"]),
                        _kv(r["txcommit"]["jobCommitRequests"]),
                    ]
                    for r in tx
                ],
            ),
            "",
        ]
    return out


def _kv(d: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (d or {}).items()) or "n/a"


def _seed_section(rows: list[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    sizes = meta["sizes"]
    out = [
        "## The DBIO paper's job",
        "",
        f"`spark.range({sizes['seed_rows']:_}).repartition({sizes['seed_partitions']})"
        '.write.mode("append").parquet(...)`',
        "",
    ]
    body = []
    for r in rows:
        floor = _find(rows, store=r["store"], protocol="floor")
        ratio = _ratio(r["total_s"], floor["total_s"] if floor else None)
        req = r.get("requests")
        body.append(
            [
                r["store"],
                r["label"],
                r["total_s"],
                None if ratio is None else f"{ratio:.2f}x",
                r["commit_s"],
                req["total"] if req else None,
                _mb(req["bytes_copied"]) if req else None,
            ]
            + ([r.get("run")] if "run" in r else [])
        )
    out += [
        table(
            ["store", "protocol", "total s", "vs floor", "job commit s", "requests", "bytes copied"]
            + (["run"] if rows and "run" in rows[0] else []),
            body,
        ),
        "",
    ]
    return out


def _read_section(rows: list[dict[str, Any]]) -> list[str]:
    """The read section of results from before cold and warm plans (``--from-json``)."""
    out = [
        "## Read planning cost (S3)",
        "",
        "`spark.read.parquet(url)` + schema + `inputFiles()` of a table of n committed "
        "txcommit transactions (one file each), median of repeats after a warm-up. *with "
        "leftovers*: plus 10 data files of two transactions that never committed (their ids "
        "an hour old). *after vacuum*: after `TXCOMMIT VACUUM '<table>' RETAIN 0 HOURS "
        "FORCE` (`txcommit.maintenance.vacuum`) removed them (the benchmark checks that none "
        "is left). *after cleanup* (runs before VACUUM existed): the leftovers deleted "
        "directly. With the filter off, the leftovers are read as data. The plans of one "
        "table share the server's JVM, so every plan but a table's first finds the commit "
        "records it needs already decoded (docs/protocol.md, *Reading*).",
        "",
    ]
    body = []
    for r in rows:
        off = _find(rows, txns=r["txns"], state=r["state"], filter="off")
        ratio = _ratio(r["plan_s"], off["plan_s"] if off else None)
        body.append(
            [
                r["txns"],
                r["state"],
                r["filter"],
                r["plan_s"],
                None if ratio is None else f"{ratio:.2f}x",
                r["files"],
                _kv(r["requests"]),
            ]
            + ([r.get("run")] if "run" in r else [])
        )
    out += [
        table(
            [
                "transactions",
                "table",
                "filter",
                "plan s",
                "vs filter off",
                "files listed",
                "requests per plan",
            ]
            + (["run"] if rows and "run" in rows[0] else []),
            body,
        ),
        "",
    ]
    return out


def _latency_section() -> list[str]:
    return [
        "## The S3 latency model",
        "",
        "moto answers in well under a millisecond, which would make a rename (COPY + DELETE "
        "per object) free. The endpoint therefore charges every request what it costs on S3 "
        "(`txcommit local-s3 --latency-model s3`, `LocalS3(latency=s3_model())`, data in "
        "`python/src/txcommit/devkit/latency_model.py`), before moto answers. Only the store is "
        "modelled: the JVM, Spark, S3A and the client are real and run on this machine.",
        "",
        table(["operation", "latency ms", "basis"], [[op, ms, why] for op, ms, why in S3_FIGURES]),
        "",
        f"Any other operation: {S3_DEFAULT_MS:g} ms. A server-side copy (COPY, "
        f"UploadPartCopy) additionally costs its bytes at {S3_COPY_MB_PER_S:g} MB/s.",
        "",
        "Where the figures come from:",
        "",
        "- AWS, *Best practices design patterns: optimizing Amazon S3 performance*: small "
        "object latencies (and first-byte latencies of large objects) of roughly 100-200 ms, "
        "and at least 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per second per "
        "prefix. The model takes the fast end, well below 100 ms (what keep-alive connections "
        "inside a region typically see), so it *understates* the store's cost; that favours "
        "the committers that make more requests (v1, v2, magic), not txcommit. The benchmark "
        "stays far below the per-prefix request rates, so no throttling is modelled.",
        "- Server-side copy is O(data): Hadoop's S3A documentation (*Committing work to S3 "
        "with the S3A committers*; *Maximizing performance*) describes rename as a COPY and a "
        "DELETE per object, taking time proportional to the data. 50 MB/s per CopyObject "
        "request is an assumption at the optimistic end of published CopyObject measurements; "
        "the sweep's files are small, so per-request latency dominates there and the per-byte "
        "cost matters for the DBIO paper's job (~80 MB).",
        "",
    ]
