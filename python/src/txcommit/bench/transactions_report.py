"""The report of the transactions section (:mod:`txcommit.bench.transactions`): its targets and
its tables."""

from __future__ import annotations

from typing import Any

from txcommit._console import markdown

#: Rows of every data file of the section (:mod:`txcommit.bench.transactions`).
ROWS_PER_FILE = 1000
#: A transaction's COMMIT against the job commit of a single-table write of the same data.
VS_SINGLE = 1.5
#: A job commit this short (a local file system's) is timed to the millisecond: the note says so.
SMALL_COMMIT_S = 0.05
#: Extra store requests a reader pays per undecided transaction it meets.
PER_UNDECIDED = 1
#: The reads of a reader's plan, in order (:mod:`txcommit.bench.transactions`).
PHASES = ("none", "undecided", "undecided-again", "decided-first", "decided-again")


def _kv(d: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (d or {}).items()) or "none"


def _commit_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in results.get("transactions", []) if r["kind"] == "commit"]


def _reader_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in results.get("transactions", []) if r["kind"] == "reader"]


def _find(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in match.items())), None)


def _commit_why(tx: dict[str, Any], single: dict[str, Any], apart: dict[str, Any] | None) -> str:
    n = tx["tables"]
    why = (
        f"{n} writes are {n} Spark jobs, each with its own job commit (the prepares: "
        f"{tx['prepare_s']:.2f} s in all), where the single table's data is one job"
    )
    if apart:
        why += (
            f"; the same {n} appends without a transaction took {apart['total_s']:.2f} s, so "
            f"the transaction costs {tx['total_s'] - apart['total_s']:+.2f} s over them"
        )
    why += f" (BEGIN {tx['begin_s']:.3f} s, not counted; COMMIT {tx['commit_s']:.3f} s"
    if tx.get("commit_requests"):
        total = sum(tx["commit_requests"].values())
        why += (
            f": {total} requests, {total / n:.1f} per table: the decision's create, then the "
            "tables' derived work side by side before COMMIT answers; "
            f"{_kv(tx['commit_requests'])}, in the log {_kv(tx['commit_log_requests'])}"
        )
    why += ")"
    if single["commit_s"] < SMALL_COMMIT_S:
        why += (
            f"; the single write's job commit took {single['commit_s'] * 1000:.0f} ms: the "
            "decision and each table's derived work add a few milliseconds, timed to the "
            "millisecond"
        )
    return why


def _client(tx: dict[str, Any]) -> str:
    c = tx.get("commit_client_s")
    return f"; COMMIT seen from the client {c:.3f} s" if c is not None else ""


def _per_read(rows: list[dict[str, Any]], phases: tuple[str, ...]) -> str:
    return "; ".join(
        f"{r['undecided']} undecided, {r['phase']}: {r['extra']:+d} ({_kv(r['more']) or 'none'})"
        for r in rows
        if r["phase"] in phases
    )


def transactions_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The section's targets: held or missed, the value, and why."""
    out: list[dict[str, Any]] = []
    commits = _commit_rows(results)
    for store in ("s3", "local"):
        single = _find(commits, store=store, case="single")
        txs = sorted(
            (r for r in commits if r["store"] == store and r["case"] == "transaction"),
            key=lambda r: r["tables"],
        )
        for tx in txs if single else []:
            assert single is not None
            n, ratio = tx["tables"], tx["commit_s"] / single["commit_s"]
            apart = _find(commits, store=store, case="separate", tables=n)
            value = (
                f"{ratio:.2f}x (COMMIT {tx['commit_s']:.3f} s vs the single write's job commit "
                f"{single['commit_s']:.3f} s, both as the server timed them, median of "
                f"{tx['repeats']}{_client(tx)}); wall time, first "
                f"write to COMMIT's answer, {tx['total_s'] / single['total_s']:.2f}x "
                f"({tx['total_s']:.2f} s vs {single['total_s']:.2f} s)"
            )
            if apart:
                value += (
                    f"; the same {n} appends without a transaction {apart['total_s']:.2f} s "
                    f"({tx['total_s'] / apart['total_s']:.2f}x)"
                )
            out.append(
                {
                    "target": f"a transaction over {n} tables commits in <= {VS_SINGLE:g}x a "
                    f"single-table commit of the same data (its COMMIT against the one write's "
                    f"job commit, {store}, {tx['files']} files)",
                    "held": ratio <= VS_SINGLE,
                    "value": value,
                    "why": _commit_why(tx, single, apart),
                }
            )
    reads = sorted(_reader_rows(results), key=lambda r: (r["undecided"], PHASES.index(r["phase"])))
    if reads:
        undecided = [r for r in reads if r["phase"].startswith("undecided")]
        worst = max((r["extra"] / r["undecided"] for r in undecided), default=0.0)
        out.append(
            {
                "target": f"a reader pays at most {PER_UNDECIDED} extra store request per "
                "undecided transaction it meets (S3, against a table of the same history "
                "without transactions)",
                "held": worst <= PER_UNDECIDED,
                "value": f"{worst:g} per undecided transaction at most; "
                + _per_read(reads, ("undecided", "undecided-again")),
                "why": _reader_why(undecided),
            }
        )
        decided = [r for r in reads if r["phase"].startswith("decided")]
        again = [r for r in decided if r["phase"] == "decided-again"]
        out.append(
            {
                "target": "no extra store request for decided transactions a reader has seen "
                "(S3, its second read after the decisions)",
                "held": bool(again) and all(r["extra"] <= 0 for r in again),
                "value": _per_read(reads, ("decided-first", "decided-again")),
                "why": _reader_why(decided),
            }
        )
    return out


def _reader_why(rows: list[dict[str, Any]]) -> str:
    """What the extra requests of these reads were: operations, log areas, the decisions read."""
    parts = []
    for r in rows:
        if r["extra"] > 0 or r["more"]:
            parts.append(
                f"{r['undecided']} undecided, {r['phase']}: {_kv(r['more'])} more "
                f"({', '.join(r['more_paths'])}) and {_kv(r['fewer'])} fewer "
                f"({', '.join(r['fewer_paths']) or 'none'}) than the control table"
            )
    return "; ".join(parts)


def transactions_section(rows: list[dict[str, Any]]) -> list[str]:
    commits = [r for r in rows if r["kind"] == "commit"]
    reads = [r for r in rows if r["kind"] == "reader"]
    files = max((r["files"] for r in commits), default=16)
    out = [
        "## Multi-table transactions",
        "",
        "`txcommit bench --only transactions --stores s3,local` (a few minutes). The same data, "
        f"{files} files of {ROWS_PER_FILE:,} rows, written as one append to one table "
        f"(*single*), as one `txcommit.transaction` over n tables with {files}/n files in each "
        "(*transaction*), and as the same n appends without a transaction (*separate*), side "
        "by side in one run: every table exists before the first round (one untimed append "
        "each), the rounds alternate the cases, and each figure is the median of the rounds.",
        "",
        "- *total*: what the user waits for, the client's wall clock from the first write's "
        "start to the answer of the last statement: the single write; `TXCOMMIT COMMIT` (the "
        "`transaction` block's end); the last separate append. `TXCOMMIT BEGIN` comes before "
        "and is shown apart.",
        "- *commit*, as the server times it: Spark's job-commit timer of the single write; the "
        "COMMIT as its server logs it (the decision's create, then the tables' derived work, "
        "side by side; the statement's round trip from the client is in the target's value); "
        "the sum of the separate appends' job commits. *prepares*: the sum of the transaction's "
        "writes' job commits (each publishes its table's prepared record).",
        "- *requests*: every request the endpoint served in the last round, and the COMMIT "
        "statement's by log area.",
        "",
    ]
    if commits:
        body = []
        for r in sorted(commits, key=lambda r: (r["store"] != "s3", r["tables"], r["case"])):
            single = _find(commits, store=r["store"], case="single")
            body.append(
                [
                    r["store"],
                    r["case"],
                    r["tables"],
                    r["files"] // r["tables"],
                    f"{r['total_s']:.3f}",
                    f"{r['total_s'] / single['total_s']:.2f}x" if single else "n/a",
                    f"{r['commit_s']:.3f}",
                    f"{r['begin_s']:.3f}" if "begin_s" in r else "",
                    f"{r['prepare_s']:.3f}" if "prepare_s" in r else "",
                    _kv(r.get("commit_log_requests"))
                    if r["case"] == "transaction" and r["store"] == "s3"
                    else "",
                    _kv(r.get("requests")) if "requests" in r else "n/a",
                    r["repeats"],
                    r.get("run", ""),
                ]
            )
        out += [
            markdown(
                [
                    "store",
                    "case",
                    "tables",
                    "files per table",
                    "total s",
                    "vs single",
                    "commit s",
                    "BEGIN s",
                    "prepares s",
                    "COMMIT log requests",
                    "requests (last round)",
                    "rounds",
                    "run",
                ],
                ([str(c) for c in row] for row in body),
            ),
            "",
        ]
    if reads:
        out += [
            "### What a reader pays for transactions it meets (S3)",
            "",
            "A table txcommit wrote and a control table of the same history, each read "
            "(`spark.read.schema(...).parquet(url)` and `inputFiles()`: the schema given, as a "
            "catalog table's is, since an inferred one costs a footer read in some plans and not "
            "in others, in both tables alike) by a reader on a server of its "
            "own that never wrote them (a JVM that decided a transaction knows its outcome "
            "without asking), warm: after two plans of each. *none*: no transaction. Then k "
            "transactions, each in a session of its own, append one file to the table and stay "
            "open (`TXCOMMIT BEGIN`, the write, no COMMIT), and k appends without a transaction "
            "go to the control table; *undecided*: the reader's next two reads; the k sessions "
            "then COMMIT; *decided-first*, *decided-again*: its two reads after. *extra*: the "
            "table's requests minus the control's in the same state; *more*/*fewer*: by "
            "operation and log area (*data*: outside the log).",
            "",
            markdown(
                [
                    "undecided",
                    "read",
                    "files seen",
                    "requests",
                    "control's requests",
                    "extra",
                    "extra per undecided",
                    "more",
                    "fewer",
                    "run",
                ],
                (
                    [
                        str(r["undecided"]),
                        r["phase"],
                        str(r["files"]),
                        _kv(r["requests"]),
                        _kv(r["control_requests"]),
                        f"{r['extra']:+d}",
                        f"{r['extra'] / r['undecided']:+.2f}",
                        _kv(r["more"]),
                        _kv(r["fewer"]),
                        r.get("run", ""),
                    ]
                    for r in reads
                ),
            ),
            "",
        ]
    return out
