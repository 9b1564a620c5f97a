"""The read section of docs/benchmarks.md (results of :mod:`txcommit.bench.reads`): its
targets, the notes on them and the tables, filter on against off side by side."""

from __future__ import annotations

from typing import Any

from txcommit._console import markdown

#: Request operations of the read tables (a plan makes no others; any other shows in "other").
READ_OPS = ("LIST", "HEAD", "GET")
#: Plans of a log-only table against the unfiltered listing of the same files.
LOG_ONLY_RATIO = 0.5
#: A plain table (no log) against the same plan without txcommit; it may add no request.
PLAIN_RATIO = 1.02
#: A table read by listing (files written without txcommit visible).
LISTING_RATIO = 1.1
#: A read as of now by time against the read of now.
TRAVEL_RATIO = 1.05
#: Requests to the log per plan of a table with a checkpoint, whatever its history.
LOG_REQUESTS_MAX = 4
#: Histories the log-request target is held at (those measured).
LOG_REQUEST_SIZES = (100, 10_000, 100_000)
#: The "filter" of a warm plan read as of a time (``txcommit.asOf``, filter on).
AS_OF = "as-of"
#: The "filter" of a read with a filter on the partition column, with txcommit and without.
PRUNED = "pruned"
PRUNED_OFF = "pruned-off"


def is_new(reads: list[dict[str, Any]]) -> bool:
    """Whether ``reads`` come from the read section with cold and warm plans (rows of runs
    before it have no ``temp``)."""
    return any("temp" in r for r in reads)


def _find(reads: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    return next((r for r in reads if all(r.get(k) == v for k, v in match.items())), None)


def _listing_rows(reads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the table read by listing the targets judge: those with a checkpoint where
    the run measured them (txcommit's appends leave one every few commits), else the others."""
    rows = [r for r in reads if r["case"] == "listing"]
    return [r for r in rows if r.get("checkpoint")] or rows


def _pair(reads: list[dict[str, Any]], **match: Any) -> tuple[Any, Any]:
    return _find(reads, filter="on", **match), _find(reads, filter="off", **match)


def _ratio(on: dict[str, Any] | None, off: dict[str, Any] | None) -> float | None:
    if not on or not off or not off["plan_s"]:
        return None
    return float(on["plan_s"]) / float(off["plan_s"])


def _total(r: dict[str, Any]) -> int:
    return sum(r["requests"].values())


def _log_total(r: dict[str, Any]) -> int:
    return sum(r.get("log_requests", {}).values())


def _extra(on: dict[str, Any], off: dict[str, Any]) -> str:
    """The requests the filter added, by operation (``+5 HEAD, +5 LIST``)."""
    ops = sorted(set(on["requests"]) | set(off["requests"]))
    diffs = [(op, on["requests"].get(op, 0) - off["requests"].get(op, 0)) for op in ops]
    return ", ".join(f"{d:+d} {op}" for op, d in diffs if d) or "none"


def _kv(d: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (d or {}).items()) or "none"


def _vs(on: dict[str, Any], off: dict[str, Any]) -> str:
    ratio = _ratio(on, off)
    return f"{ratio:.2f}x ({on['plan_s']:.3f} s vs {off['plan_s']:.3f} s)"


def _model_ms(on: dict[str, Any], off: dict[str, Any]) -> float:
    """What the requests the filter added cost on the latency model, in ms."""
    from txcommit.devkit.latency_model import S3_DEFAULT_MS, S3_FIGURES

    ms = {op: float(v) for op, v, _ in S3_FIGURES}
    ops = set(on["requests"]) | set(off["requests"])
    total: float = sum(
        (on["requests"].get(op, 0) - off["requests"].get(op, 0)) * ms.get(op, S3_DEFAULT_MS)
        for op in ops
    )
    return total


def _span(r: dict[str, Any]) -> str:
    samples = r.get("samples") or [r["plan_s"]]
    return f"{min(samples):.2f}-{max(samples):.2f} s"


def _why_not(info: dict[str, Any]) -> str:
    why = info.get("checkpoint")
    return f"not measured: {why}" if why and why != "written" else "not measured"


# ------------------------------------------------------------------------------ targets


def _data_lists(r: dict[str, Any]) -> int:
    """LIST requests outside every log (a listing of data)."""
    logs = sum(int(v) for k, v in r.get("log_requests", {}).items() if k.startswith("LIST "))
    return int(r["requests"].get("LIST", 0)) - logs


def read_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    reads = results.get("read", [])
    info = results.get("read_info", {})
    out: list[dict[str, Any]] = []

    def add(name: str, held: bool | None, value: str) -> None:
        out.append({"target": name, "held": held, "value": value})

    def ratio_target(name: str, limit: float, pairs: dict[str, tuple[Any, Any]]) -> None:
        ratios = {t: _ratio(*p) for t, p in pairs.items()}
        measured = all(r is not None for r in ratios.values()) and bool(ratios)
        add(
            f"{name}: plan <= {limit:g}x the unfiltered listing, cold and warm",
            all(r is not None and r <= limit for r in ratios.values()) if measured else None,
            "; ".join(f"{t} {_vs(*pairs[t])}" for t in pairs) if measured else _why_not(info),
        )

    part = [r for r in reads if r["case"] == "partitioned"]
    if part:
        dirs = part[0]["dirs"]
        ratio_target(
            f"log-only table of {dirs} partition directories",
            LOG_ONLY_RATIO,
            {t: _pair(part, temp=t) for t in ("cold", "warm")},
        )
        pruned = _find(part, temp="warm", filter=PRUNED)
        if pruned is None:
            add("partition pruning on a log-only table", None, "not measured")
        else:
            lists = _data_lists(pruned)
            add(
                f"partition pruning on a log-only table ({dirs} directories, `WHERE k = 7`): "
                "only the matching directory's files read, no LIST of data",
                lists == 0 and pruned["files"] == 1,
                f"{pruned['files']} file read, {lists} LIST of data; requests "
                f"{_kv(pruned['requests'])} (log: {_kv(pruned['log_requests'])})",
            )
    txns = sorted({r["txns"] for r in reads if r["case"] == "txcommit"})
    for n in [n for n in txns if n >= 10_000]:
        ratio_target(
            f"{n:,} commits with a checkpoint (log-only)",
            LOG_ONLY_RATIO,
            {
                t: _pair(reads, case="txcommit", txns=n, checkpoint=True, temp=t)
                for t in ("cold", "warm")
            },
        )
    sizes = [n for n in txns if n in LOG_REQUEST_SIZES]
    if sizes:
        per = {
            (n, t): _find(reads, case="txcommit", txns=n, checkpoint=True, temp=t, filter="on")
            for n in sizes
            for t in ("cold", "warm")
        }
        measured = all(r is not None for r in per.values())
        add(
            f"log requests per plan <= {LOG_REQUESTS_MAX} with a checkpoint, cold and warm, at "
            + ", ".join(f"{n:,}" for n in sizes)
            + " commits",
            all(_log_total(r) <= LOG_REQUESTS_MAX for r in per.values() if r) if measured else None,
            "; ".join(
                f"{n:,} {t}: {_log_total(r)} ({_kv(r['log_requests'])})"
                for (n, t), r in per.items()
                if r
            )
            or _why_not(info),
        )
    plain = [r for r in reads if r["case"] == "plain"]
    if plain:
        pairs = {t: _pair(plain, temp=t) for t in ("cold", "warm")}
        ratio_target(f"plain table ({plain[0]['dirs']} directories, no log)", PLAIN_RATIO, pairs)
        if all(p[0] and p[1] for p in pairs.values()):
            extra = {t: _total(pairs[t][0]) - _total(pairs[t][1]) for t in pairs}
            add(
                "plain table: no extra request, cold and warm",
                all(e <= 0 for e in extra.values()),
                "; ".join(f"{t}: {_extra(*pairs[t])}" for t in pairs),
            )
    listing = _listing_rows(reads)
    if listing:
        checkpointed = listing[0]["checkpoint"]
        ratio_target(
            f"a table read by listing ({listing[0]['txns']:,} commits, files written without "
            "txcommit visible" + (", with a checkpoint" if checkpointed else "") + ")",
            LISTING_RATIO,
            {t: _pair(listing, temp=t) for t in ("cold", "warm")},
        )
    most = txns[-1] if txns else None
    travel = _find(reads, case="txcommit", txns=most, checkpoint=True, temp="warm", filter=AS_OF)
    now = _find(reads, case="txcommit", txns=most, checkpoint=True, temp="warm", filter="on")
    if travel is None or now is None:
        add("a time-travel read costs no more than a read of now", None, _why_not(info))
    else:
        ratio = _ratio(travel, now)
        add(
            f"a time-travel read costs no more than a read of now (warm, {most} transactions, "
            f"with a checkpoint: <= {TRAVEL_RATIO:g}x, no more requests)",
            ratio is not None and ratio <= TRAVEL_RATIO and _total(travel) <= _total(now),
            f"as of now by time {travel['plan_s']:.3f} s vs now {now['plan_s']:.3f} s"
            + ("" if ratio is None else f" ({ratio:.2f}x)")
            + f"; requests {_kv(travel['requests'])} vs {_kv(now['requests'])}",
        )
    return out


# ------------------------------------------------------------------------------ notes


def read_notes(results: dict[str, Any]) -> list[str]:
    """Why the read targets came out as they did, read off the same figures."""
    reads = results.get("read", [])
    notes: list[str] = []
    txns = sorted({r["txns"] for r in reads if r["case"] == "txcommit"})
    for n in txns[-1:]:
        on, off = _pair(reads, case="txcommit", txns=n, checkpoint=True, temp="cold")
        won, woff = _pair(reads, case="txcommit", txns=n, checkpoint=True, temp="warm")
        if on and off and won and woff:
            notes.append(
                f"At {n:,} commits with a checkpoint the table is planned from its log: cold "
                f"{_vs(on, off)}, log requests {_kv(on['log_requests'])}, all requests "
                f"{_kv(on['requests'])} against the unfiltered listing's {_kv(off['requests'])}; "
                f"warm {_vs(won, woff)}, log requests {_kv(won['log_requests'])}. The unfiltered "
                f"plan lists the table's {off['files']:,} data keys and its log's (S3 lists "
                "1,000 keys a request) and returns the paths; the planned one lists only the "
                "log's `commits/` (the commits the checkpoint does not cover, and, until they "
                "move out of it, the ones it does: one request per 1,000), `checkpoints/` and "
                "`replace/`, and reads the checkpoint (once per JVM). The first plan of a table in "
                "a JVM also lists its root once (one request: the first page of the listing "
                "Spark would make) to learn that it holds a log."
            )
    bare = max(
        (r["txns"] for r in reads if r["case"] == "txcommit" and not r["checkpoint"]), default=None
    )
    on, off = _pair(reads, case="txcommit", txns=bare, checkpoint=False, temp="cold")
    warm = _pair(reads, case="txcommit", txns=bare, checkpoint=False, temp="warm")
    if on and off and warm[0] and warm[1]:
        gets = on["log_requests"].get("GET commits", 0)
        notes.append(
            f"Cold, with only the checkpoint that created the table (it covers nothing), at "
            f"{bare:,} transactions: {_vs(on, off)}: the plan read {gets:,} commit records, one "
            "GET each, 16 at a time; warm, the JVM has them decoded and reads none "
            f"({_vs(*warm)}). A table written through Spark gets a checkpoint every "
            "`spark.txcommit.checkpoint.interval` commits (10), so at most that many records "
            "to read."
        )
    plain = [r for r in reads if r["case"] == "plain"]
    on, off = _pair(plain, temp="cold")
    won, woff = _pair(plain, temp="warm")
    if on and off and won and woff:
        notes.append(
            f"The plain table ({on['dirs']} directories `k=<i>`, no `_txcommit/` anywhere) is read "
            "from one listing, the one Spark would make, and nothing else is asked of the store: "
            f"cold {_extra(on, off)} against Spark without txcommit, warm {_extra(won, woff)}. "
            "(Spark alone also checks that the path exists and looks for a streaming sink's "
            "`_spark_metadata/` there; the one listing shows both.) Its time is the listing's and "
            "the driver's on both sides; the spread of single plans on this shared 2-core machine "
            f"is of the order of the difference (warm samples: {_span(won)} with, {_span(woff)} "
            "without)."
        )
    listing = _listing_rows(reads)
    on, off = _pair(listing, temp="warm")
    if on and off:
        bare_rows = [r for r in reads if r["case"] == "listing" and not r["checkpoint"]]
        bare = _pair(bare_rows, temp="cold")
        notes.append(
            f"The table read by listing ({on['txns']:,} commits of a table txcommit adopted: files "
            "written without txcommit stay visible) lists its log, then the table once, and "
            f"judges each file against the log: warm {_vs(on, off)}, {_extra(on, off)} "
            f"({_kv(on['log_requests'])})."
            + (
                " Without a checkpoint (a log of records only, as no txcommit write leaves it: "
                "appends write one every `spark.txcommit.checkpoint.interval` commits) its cold "
                f"plan reads every record: {_vs(*bare)} ({_kv(bare[0]['log_requests'])})."
                if on["checkpoint"] and bare[0] and bare[1]
                else ""
            )
        )
    part = [r for r in reads if r["case"] == "partitioned"]
    on, off = _pair(part, temp="warm")
    pruned = _find(part, temp="warm", filter=PRUNED)
    pruned_off = _find(part, temp="warm", filter=PRUNED_OFF)
    if on and off:
        note = (
            f"The log-only table of {on['dirs']} partition directories (one partitioned write) is "
            f"planned from its log with no listing of data: warm {_vs(on, off)}, "
            f"{_kv(on['requests'])} against {_kv(off['requests'])}."
        )
        if pruned and pruned_off:
            note += (
                " A read with `WHERE k = 7`, planned and run, takes its one partition from the "
                f"log and reads that file: {_kv(pruned['requests'])} "
                f"({pruned['plan_s']:.3f} s), where Spark without txcommit lists the table "
                f"first: {_kv(pruned_off['requests'])} ({pruned_off['plan_s']:.3f} s)."
            )
        notes.append(note)
    return notes


# ------------------------------------------------------------------------------ section


def read_section(results: dict[str, Any]) -> list[str]:
    reads = results["read"]
    info = results.get("read_info", {})
    sizes = results["meta"].get("sizes", {})
    runs = any("run" in r for r in reads)
    repeats = info.get("repeats", sizes.get("repeats"))
    synth = info.get("synthesis", {})
    sample = info.get("sample", {})
    ckpt = info.get("checkpoints", {})
    out = [
        "## Read planning cost (S3)",
        "",
        "One plan is `spark.read.parquet(url)`, its schema and `inputFiles()`, timed by the "
        "client, with txcommit on (`spark.txcommit.read.filter=true`, the default: its SQL "
        "extension plans a read from the table's log, docs/readers.md) and off (`false`: "
        "Spark's own listing and nothing of txcommit, the *unfiltered listing*) in two "
        "sessions of the same server; *requests* are every request the endpoint served during "
        "the plan, *log requests* those under `_txcommit/` (a commit record, a checkpoint, the "
        "`commits/`, `replace/` and `checkpoints/` listings) or asking whether a directory "
        "holds `_txcommit` (*probe*).",
        "",
        "- **The tables are synthesised** with the project's own encoders "
        "(`txcommit.bench.synth`: `encode_record`, `encode_checkpoint`, `generate_txn`, "
        "`data_file_name`, `LogLayout`): per transaction one data file named with its txn id, "
        "holding the bytes of one real Parquet file written through Spark "
        f"({sample.get('bytes', '?')} bytes, 100 longs), and its record "
        "`_txcommit/commits/<txn>.json`, committed days before the run. The txcommit tables "
        "are log-only, as txcommit creates them "
        "(docs/protocol.md, I32): their log starts with checkpoint 1, covering nothing; the "
        "table *read by listing* has the same records and no such checkpoint (a table txcommit "
        "adopted), and is planned again after `TXCOMMIT CHECKPOINT` covered them (as the "
        "automatic checkpoints of its appends would); the *partitioned* log-only table is one "
        "write of one file in each `k=<i>` directory; the plain table has one file in each "
        "`k=<i>` directory and no `_txcommit/`. "
        "They are PUT in parallel with the latency model off (setup, not measured): "
        f"{synth.get('objects', '?')} objects in {synth.get('seconds', '?')} s. Writing them "
        "through Spark would make the same objects, plus `_SUCCESS` and automatic checkpoints "
        "(`spark.txcommit.checkpoint.interval`), which the tables planned with only their "
        "creation checkpoint must not have.",
        "- **Cold**: the first plans of a table on a server started for the measurement (a "
        "fresh JVM), after warm-up plans of two other small tables (one txcommit, with a "
        "checkpoint on the server that measures checkpoints, and one plain), filter off and "
        "on, so the JVM's start-up (class loading, JIT, the S3A client) is paid before. "
        "The filter-off plan runs first (it reads no log and fills none of the "
        "filter's caches), then the filter-on plan, which has never seen the table: no "
        "decoded record, checkpoint or table root of it in the JVM. One sample each.",
        f"- **Warm**: then {repeats or '?'} more plans of each, off and on "
        "alternately, in the same JVM: the median (fewer, at least one, once a table's warm "
        "plans took a minute: the *plan* column says so).",
        "- **Time travel**: each warm round of a txcommit table also plans it with "
        '`option("txcommit.asOf", <a time just after now>)` in the filtered session (a read '
        "of the newest version named by time), compared in the targets with the read of now.",
        "- The first plan of a table in a JVM also reads a Parquet footer for the schema (one "
        "HEAD and one GET) that no later plan of it repeats, whatever its filter setting: "
        "the cold filter-off plan pays it, so the cold filter-on plan is favoured by about "
        "those two requests (~50 ms on the model).",
        "- **Checkpoint**: after the first fresh server stopped, `TXCOMMIT CHECKPOINT '<url>'` "
        "(`txcommit.maintenance.checkpoint`) on every txcommit table, then a second fresh "
        "server plans them again, cold then warm"
        + (
            ": checkpoint sizes "
            + ", ".join(f"{n} transactions {c['bytes']:,} bytes" for n, c in ckpt.items())
            if ckpt
            else ""
        )
        + (
            f". {_why_not(info).capitalize()}."
            if info.get("checkpoint") not in (None, "written")
            else "."
        )
        + _skipped(reads, info)
        + " Fresh servers took "
        + ", ".join(f"{s:.0f} s" for s in info.get("server_start_s", []))
        + " to start.",
        "",
    ]
    for checkpoint in (False, True):
        rows = [r for r in reads if r["case"] == "txcommit" and r["checkpoint"] == checkpoint]
        if not rows:
            continue
        what = "with a checkpoint" if checkpoint else "only their creation checkpoint"
        out += [
            f"### Log-only txcommit tables, {what}",
            "",
            _pairs_table(rows, "transactions", lambda r: r["txns"], runs, repeats),
            "",
        ]
    part = [r for r in reads if r["case"] == "partitioned"]
    if part:
        out += [
            f"### A log-only txcommit table of {part[0]['dirs']} partition directories",
            "",
            '*pruned*: `spark.read.parquet(url).where("k = 7")`, planned and run (the files '
            "its scan read: one), with txcommit and without.",
            "",
            _pairs_table(part, "read", _read_of, runs, repeats, filters=PART_FILTERS),
            "",
        ]
    listing = [r for r in reads if r["case"] == "listing"]
    if listing:
        out += [
            "### A txcommit table read by listing (one txcommit adopted: files written without "
            "txcommit visible)",
            "",
            _pairs_table(
                listing,
                "transactions",
                lambda r: f"{r['txns']}" + (" with a checkpoint" if r.get("checkpoint") else ""),
                runs,
                repeats,
            ),
            "",
        ]
    plain = [r for r in reads if r["case"] == "plain"]
    if plain:
        out += [
            f"### A plain Hive-style table ({plain[0]['dirs']} directories, not written by "
            "txcommit)",
            "",
            _pairs_table(plain, "directories", lambda r: r["dirs"], runs, repeats, per_dir=True),
            "",
        ]
    left = [r for r in reads if r["case"] == "leftovers"]
    if left:
        out += [
            f"### Uncommitted leftovers and VACUUM ({left[0]['txns']} transactions, warm, on "
            "the bench's own server)",
            "",
            "*with leftovers*: plus 10 data files of two transactions that never committed "
            "(their ids an hour old), which the filter hides and an unfiltered plan reads as "
            "data; *after vacuum*: after `TXCOMMIT VACUUM '<table>' RETAIN 0 HOURS FORCE` "
            "removed them (the benchmark checks that none is left).",
            "",
            _pairs_table(left, "table", lambda r: r["state"], runs, repeats),
            "",
        ]
    return out


#: The partitioned table's rows: all of it, and pruned, each with txcommit and without.
PART_FILTERS = {"all": ("on", "off"), "pruned": (PRUNED, PRUNED_OFF)}


def _read_of(r: dict[str, Any]) -> str:
    return "all" if r["filter"] in ("on", "off") else "pruned"


def _skipped(reads: list[dict[str, Any]], info: dict[str, Any]) -> str:
    """The sentence naming tables planned only with a checkpoint (--read-no-checkpoint-max)."""
    bare = {r["txns"] for r in reads if r["case"] == "txcommit" and not r["checkpoint"]}
    only = sorted({r["txns"] for r in reads if r["case"] == "txcommit"} - bare)
    if not only or not bare:
        return ""
    return (
        f" Tables of more than {info.get('no_checkpoint_max', max(bare))} transactions "
        f"({', '.join(map(str, only))}) were planned with a checkpoint only "
        "(`--read-no-checkpoint-max`): without one, a cold plan reads every record, one after "
        f"another (see the {max(bare)}-transaction row)."
    )


def _pairs_table(
    rows: list[dict[str, Any]],
    first: str,
    key: Any,
    runs: bool,
    repeats: Any,
    per_dir: bool = False,
    filters: dict[Any, tuple[str, str]] | None = None,
) -> str:
    """On and off side by side per ``key`` and temperature; ``filters`` names the rows' on and
    off filters per key (default "on", "off")."""
    headings = [first, "plan", "txcommit on s", "off s", "on/off"]
    headings += [f"{op} on/off" for op in READ_OPS] + ["log requests (on)", "files on/off"]
    if per_dir:
        headings.append("extra requests per directory")
    if runs:
        headings.append("run")
    body = []
    seen = []
    pick = filters or {}
    for r in rows:
        k = (key(r), r["temp"])
        f_on, f_off = pick.get(k[0], ("on", "off"))
        present = {x["filter"] for x in rows if key(x) == k[0] and x["temp"] == k[1]}
        if k not in seen and f_on in present and f_off in present:
            seen.append(k)
    for value, temp in seen:
        f_on, f_off = pick.get(value, ("on", "off"))
        on = next(r for r in rows if key(r) == value and r["temp"] == temp and r["filter"] == f_on)
        off = next(
            r for r in rows if key(r) == value and r["temp"] == temp and r["filter"] == f_off
        )
        ratio = _ratio(on, off)
        n = min(len(on.get("samples", [])), len(off.get("samples", [])))
        plan = (
            temp if temp == "cold" or n in (0, repeats) else f"{temp} ({n} sample{'s' * (n > 1)})"
        )
        row = [
            value,
            plan,
            f"{on['plan_s']:.3f}",
            f"{off['plan_s']:.3f}",
            "n/a" if ratio is None else f"{ratio:.2f}x",
        ]
        others = {op for r in (on, off) for op in r["requests"] if op not in READ_OPS}
        row += [f"{on['requests'].get(op, 0)} / {off['requests'].get(op, 0)}" for op in READ_OPS]
        log = _kv(on.get("log_requests"))
        if others:
            log += (
                " (other requests: " + _kv({op: on["requests"].get(op, 0) for op in others}) + ")"
            )
        row += [log, f"{on['files']} / {off['files']}"]
        if per_dir:
            row.append(f"{(_total(on) - _total(off)) / on['dirs']:.1f}")
        if runs:
            row.append(on.get("run"))
        body.append(row)
    return markdown(headings, body)
