"""The read section of docs/benchmarks.md (results of :mod:`txcommit.bench.reads`): its
targets, the notes on them and the tables, filter on against off side by side."""

from __future__ import annotations

from typing import Any

from txcommit._console import markdown

#: Request operations of the read tables (a plan makes no others; any other shows in "other").
READ_OPS = ("LIST", "HEAD", "GET")
COLD_RATIO = 1.2
WARM_RATIO = 1.05
PLAIN_RATIO = 1.05
#: The "filter" of a warm plan read as of a time (``txcommit.asOf``, filter on).
AS_OF = "as-of"


def is_new(reads: list[dict[str, Any]]) -> bool:
    """Whether ``reads`` come from the read section with cold and warm plans (rows of runs
    before it have no ``temp``)."""
    return any("temp" in r for r in reads)


def _find(reads: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    return next((r for r in reads if all(r.get(k) == v for k, v in match.items())), None)


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


def read_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    reads = results.get("read", [])
    info = results.get("read_info", {})
    out: list[dict[str, Any]] = []

    def add(name: str, held: bool | None, value: str) -> None:
        out.append({"target": name, "held": held, "value": value})

    txns = sorted({r["txns"] for r in reads if r["case"] == "txcommit"})
    most = txns[-1] if txns else None
    for temp, limit in (("cold", COLD_RATIO), ("warm", WARM_RATIO)):
        on, off = _pair(reads, case="txcommit", txns=most, checkpoint=True, temp=temp)
        ratio = _ratio(on, off)
        add(
            f"{temp} filtered plan <= {limit:g}x unfiltered ({most} transactions, with a "
            "checkpoint)",
            None if ratio is None else ratio <= limit,
            _why_not(info) if ratio is None else _vs(on, off),
        )
    bare = max(
        (r["txns"] for r in reads if r["case"] == "txcommit" and not r["checkpoint"]), default=None
    )
    for temp, limit in (("cold", COLD_RATIO), ("warm", WARM_RATIO)):
        on, off = _pair(reads, case="txcommit", txns=bare, checkpoint=False, temp=temp)
        ratio = _ratio(on, off)
        if ratio is not None:
            add(
                f"(also) {temp} filtered plan <= {limit:g}x unfiltered ({bare} transactions, "
                "no checkpoint)",
                ratio <= limit,
                _vs(on, off),
            )
    plain = [r for r in reads if r["case"] == "plain"]
    dirs = plain[0]["dirs"] if plain else None
    pairs = {t: _pair(plain, temp=t) for t in ("cold", "warm")}
    ratios = [r for r in (_ratio(*p) for p in pairs.values()) if r is not None]
    measured = len(ratios) == len(pairs)
    add(
        f"plain Hive-style table ({dirs} directories): filtered plan <= {PLAIN_RATIO:g}x "
        "unfiltered, cold and warm",
        all(v <= PLAIN_RATIO for v in ratios) if measured else None,
        "; ".join(f"{t} {_vs(*pairs[t])}" for t in ("cold", "warm"))
        if measured
        else "not measured",
    )
    if measured:
        assert dirs is not None  # measured: the plain table's rows exist
        extra = {t: _total(pairs[t][0]) - _total(pairs[t][1]) for t in ("cold", "warm")}
        add(
            "plain Hive-style table: no extra request per directory with the filter, cold and warm",
            all(e < dirs for e in extra.values()),
            "; ".join(
                f"{t}: {_extra(*pairs[t])} per plan = {extra[t] / dirs:.1f} per directory"
                for t in ("cold", "warm")
            ),
        )
    else:
        add(
            "plain Hive-style table: no extra request per directory with the filter",
            None,
            "not measured",
        )
    travel = _find(reads, case="txcommit", txns=most, checkpoint=True, temp="warm", filter=AS_OF)
    now = _find(reads, case="txcommit", txns=most, checkpoint=True, temp="warm", filter="on")
    if travel is None or now is None:
        add("a time-travel read costs no more than a read of now", None, _why_not(info))
    else:
        ratio = _ratio(travel, now)
        add(
            f"a time-travel read costs no more than a read of now (warm, {most} transactions, "
            f"with a checkpoint: <= {WARM_RATIO:g}x, no more requests)",
            ratio is not None and ratio <= WARM_RATIO and _total(travel) <= _total(now),
            f"as of now by time {travel['plan_s']:.3f} s vs now {now['plan_s']:.3f} s"
            + ("" if ratio is None else f" ({ratio:.2f}x)")
            + f"; requests {_kv(travel['requests'])} vs {_kv(now['requests'])}",
        )
    few = 100 if 100 in txns and most != 100 else (txns[0] if txns else None)
    a = _find(reads, case="txcommit", txns=few, checkpoint=True, temp="cold", filter="on")
    b = _find(reads, case="txcommit", txns=most, checkpoint=True, temp="cold", filter="on")
    name = (
        f"requests of the filter per cold plan flat in history length with a checkpoint "
        f"({few} vs {most} transactions)"
    )
    if a is None or b is None or few == most:
        add(name, None, _why_not(info) if a is None or b is None else "one size only")
    else:
        add(
            name,
            _log_total(b) <= _log_total(a),
            f"log requests {_log_total(a)} vs {_log_total(b)} ({_kv(a['log_requests'])} vs "
            f"{_kv(b['log_requests'])}); all requests {_total(a)} vs {_total(b)}, the rest "
            "being the data listing (S3 lists 1000 keys a page)",
        )
    return out


# ------------------------------------------------------------------------------ notes


def read_notes(results: dict[str, Any]) -> list[str]:
    """Why the read targets came out as they did, read off the same figures."""
    reads = results.get("read", [])
    notes: list[str] = []
    txns = sorted({r["txns"] for r in reads if r["case"] == "txcommit"})
    if not txns:
        return notes
    most = txns[-1]
    bare = max(
        (r["txns"] for r in reads if r["case"] == "txcommit" and not r["checkpoint"]), default=None
    )
    on, off = _pair(reads, case="txcommit", txns=bare, checkpoint=False, temp="cold")
    if on and off:
        gets = on["log_requests"].get("GET commits", 0)
        each = (on["plan_s"] - off["plan_s"]) / gets * 1000 if gets else 0.0
        notes.append(
            f"Cold, without a checkpoint, at {bare} transactions: the filtered plan took "
            f"{on['plan_s']:.1f} s against {off['plan_s']:.1f} s unfiltered: it read "
            f"{gets} commit records, one GET each, 16 at a time while it took the snapshot "
            f"({each:.0f} ms per record of extra plan time; the model charges 25 ms a GET, and "
            "the local endpoint serves them on the same two cores); "
            f"log requests: {_kv(on['log_requests'])}. Warm, the same JVM has them decoded "
            "and reads none. A table written through Spark has a checkpoint every "
            "`spark.txcommit.checkpoint.interval` commits (10), so at most that many records "
            "to read."
        )
    on, off = _pair(reads, case="txcommit", txns=most, checkpoint=True, temp="cold")
    won, woff = _pair(reads, case="txcommit", txns=most, checkpoint=True, temp="warm")
    if on and off:
        note = (
            f"Cold, with a checkpoint, at {most} transactions: {_vs(on, off)}; the filter's "
            f"requests were {_kv(on['log_requests'])}: the checkpoint replaces the records "
            f"it covers. The filter added {_extra(on, off)} to the plan."
        )
        if won and woff:
            note += (
                f" Warm, it adds {_extra(won, woff)}: about {_model_ms(won, woff):.0f} ms on "
                f"the model, against a plan of {woff['plan_s']:.1f} s, so the filter's own "
                f"cost is about {1 + _model_ms(won, woff) / 1000 / woff['plan_s']:.2f}x. A "
                "plan of this size is mostly the driver's CPU (listing the table's keys, data "
                f"and log, and returning {on['files']} paths), which varies on this shared "
                "2-core machine by more than that (warm samples, filter on: "
                f"{_span(won)}; off: {_span(woff)}), so the measured ratios at this size are "
                "as much the machine's noise as the filter's cost"
                + (
                    ", and a filtered plan faster than the unfiltered one is noise, not a speed-up"
                    if min(_ratio(on, off) or 1, _ratio(won, woff) or 1) < 1
                    else ""
                )
                + "."
            )
        notes.append(note)
    warm = [(n, _pair(reads, case="txcommit", txns=n, checkpoint=True, temp="warm")) for n in txns]
    warm = [(n, p) for n, p in warm if p[0] and p[1]]
    if warm:
        notes.append(
            "Warm, with a checkpoint, the filter adds the same requests to every plan whatever "
            f"the table's size ({_extra(*warm[0][1])} with {warm[0][0]} transaction(s): the "
            "`commits/`, `checkpoints/` and `replace/` listings, sent at once for a table the "
            "JVM has read before, so one round trip), so its share falls as the plan grows: "
            + ", ".join(f"{_ratio(*p):.2f}x at {n}" for n, p in warm)
            + " transactions."
        )
    plain = [r for r in reads if r["case"] == "plain"]
    on, off = _pair(plain, temp="warm")
    if on and off:
        dirs = on["dirs"]
        made = (
            f"The plain table ({dirs} directories `k=<i>`, no `_txcommit/` anywhere): with the "
            f"filter a warm plan made {_extra(on, off)} ({_kv(on['log_requests'])})"
        )
        per_dir = (sum(on["requests"].values()) - sum(off["requests"].values())) / dirs
        if per_dir >= 1:
            notes.append(
                f"{made}: every plan asks again, for each partition directory and once for each "
                "ancestor up to the bucket, whether it holds `_txcommit` (S3A's existence check: "
                "a HEAD and a LIST), one after another in the listing, because only positive "
                "answers (a table root) are cached (docs/protocol.md, *Reading*); so cold and "
                "warm cost the same. `spark.txcommit.read.filter=false` in sessions that read no "
                "txcommit table avoids it."
            )
        else:
            notes.append(
                f"{made}: the `commits/` listing that finds no table at the root, one listing "
                "of the table's tree, from which the filter learns which partition directories "
                "hold `_txcommit/` (S3: one LIST per 1,000 keys), and an existence check of each "
                "directory above the table up to the bucket (S3A: a HEAD and a LIST), asked "
                "again by every plan because only positive answers are cached (docs/protocol.md, "
                "*Reading*). A directory that is no table may still hold tables (a parent of "
                "tables), whose logs judge the files below them, and only a listing of its tree "
                "finds them: Spark's own listing sees `_txcommit/` but drops it before any "
                "filter, and a Hadoop path filter cannot share that listing. So the tree is "
                "listed a second time, and its time grows with the table's key count as the "
                "unfiltered listing's does; on this endpoint one LIST of 1,000 keys also costs "
                "the local endpoint's CPU (moto)."
            )
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
        "client, with txcommit's read filter on (`spark.txcommit.read.filter=true`, the "
        "default) and off in two sessions of the same server; *requests* are every request "
        "the endpoint served during the plan, *log requests* those under `_txcommit/` (a "
        "commit record, a checkpoint, the `replace/` and `checkpoints/` listings) or asking "
        "whether a directory holds `_txcommit` (*probe*).",
        "",
        "- **The tables are synthesised** with the project's own record encoder "
        "(`txcommit.bench.synth`: `encode_record`, `generate_txn`, `data_file_name`, "
        "`LogLayout`): per transaction one data file named with its txn id, holding the "
        f"bytes of one real Parquet file written through Spark ({sample.get('bytes', '?')} "
        "bytes, 100 longs), and its record `_txcommit/commits/<txn>.json`, committed days "
        "before the run; the plain table has one such file in each `k=<i>` directory and no "
        "`_txcommit/`. They are PUT in parallel with the latency model off (setup, not "
        f"measured): {synth.get('objects', '?')} objects in {synth.get('seconds', '?')} s. "
        "Writing them through Spark would make the same objects, plus `_SUCCESS` and "
        "automatic checkpoints (`spark.txcommit.checkpoint.interval`), which the "
        "*no checkpoint* tables must not have.",
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
        out += [
            f"### txcommit tables, {'with a checkpoint' if checkpoint else 'no checkpoint'}",
            "",
            _pairs_table(rows, "transactions", lambda r: r["txns"], runs, repeats),
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
) -> str:
    headings = [first, "plan", "filter on s", "filter off s", "on/off"]
    headings += [f"{op} on/off" for op in READ_OPS] + ["log requests (on)", "files on/off"]
    if per_dir:
        headings.append("extra requests per directory")
    if runs:
        headings.append("run")
    body = []
    seen = []
    for r in rows:
        k = (key(r), r["temp"])
        if k not in seen:
            seen.append(k)
    for value, temp in seen:
        on = next(r for r in rows if key(r) == value and r["temp"] == temp and r["filter"] == "on")
        off = next(
            r for r in rows if key(r) == value and r["temp"] == temp and r["filter"] == "off"
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
