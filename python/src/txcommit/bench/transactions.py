"""The transactions section of ``txcommit bench``: what a multi-table transaction
(``txcommit.transaction``, docs/protocol.md I33-I37) costs its writer and the readers that meet it.

* **Commit time**: the same data (``transaction_files`` files of ``ROWS_PER_FILE`` rows) written
  as one append to one table, as one transaction over n tables (n = ``transaction_tables``,
  ``files / n`` files each), and as the same n appends without a transaction; side by side in
  one run, ``transaction_repeats`` rounds, the median. Every table exists before the first round
  (one untimed append each), so a round measures appends to tables the server knows. *total*
  is what a user feels: the client's wall clock from the first write's start to the answer of
  the last statement (the single write; ``TXCOMMIT COMMIT``, the ``transaction`` block's end; the
  last separate write); *commit* is the server's own time: Spark's job-commit timer of the
  single write, the COMMIT of a transaction as its server logs it (its decision and its tables'
  derived work; the statement's round trip from the client is *commit_client_s*), the sum of the
  separate writes' job commits.
* **Reader requests** (S3 only: the endpoint counts requests): a table txcommit wrote and a
  control table of the same history, both read (``spark.read.schema(...).parquet``,
  ``inputFiles()``) by a reader on a server of its own, which never wrote them (a JVM that
  decided a transaction knows its outcome without asking). Then k transactions, each in a
  session of its own on the bench's server, append one file to the table and stay open, and one
  session appends k files to the control table the same way without a transaction; the reader
  reads both twice (undecided: each read asks each decision again), the sessions commit, the
  reader reads both twice (decided: the first read asks each decision, the second nothing).
  *extra* is the table's requests minus the control's in the same state; the difference is
  named by operation and log area.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from txcommit._names import CLEANUP_ATTEMPTS_CONF, READ_FILTER_CONF
from txcommit.bench.protocols import Protocol
from txcommit.bench.reads import count_requests, log_area
from txcommit.bench.runner import summarise_requests
from txcommit.bench.transactions_report import ROWS_PER_FILE

#: The schema of every table of the section (``spark.range``'s column).
SCHEMA = "id BIGINT"
#: Every ``spark.txcommit.checkpoint.interval`` commits a commit writes a checkpoint (0: none).
CHECKPOINT_INTERVAL_CONF = "spark.txcommit.checkpoint.interval"


def run(
    bench: Any, proto: Protocol, sizes: Any, stores: list[str], start_server: Callable[..., Any]
) -> list[dict[str, Any]]:
    """The section's rows: commit points on every store, the reader's plan on S3."""
    rows: list[dict[str, Any]] = []
    for store in sorted(stores, key=lambda s: s != "s3"):
        if store in proto.stores:
            rows += commit_points(bench, proto, store, sizes)
    if "s3" in stores and sizes.transaction_undecided:
        rows += reader_plan(bench, proto, sizes, start_server)
    return rows


# ---------------------------------------------------------------------------- commit time


#: The server's own measure of a COMMIT (DecideGroup), as Spark logs a write's job commit.
COMMIT_TOOK = re.compile(rb"txcommit: .*: COMMIT took (\d+) ms")


def _frame(spark: Any, first: int, files: int) -> Any:
    """``files`` tasks of ROWS_PER_FILE rows from id ``first``: one file each."""
    return spark.range(first, first + files * ROWS_PER_FILE, 1, files)


def _append(bench: Any, spark: Any, url: str, first: int, files: int) -> tuple[float, float]:
    """One append; (wall seconds, Spark's job-commit seconds)."""
    mark = bench._log_size()
    start = time.perf_counter()
    _frame(spark, first, files).write.mode("append").parquet(url)
    elapsed = time.perf_counter() - start
    ms = bench._commit_ms(mark)
    if ms is None:
        raise RuntimeError(f"the append to {url} logged no job commit: the measurement is refused")
    return elapsed, ms / 1000.0


def _tables(bench: Any, store: str, name: str, n: int) -> list[str]:
    return [bench.url(store, f"tx-{name}-{n}-{i}") for i in range(n)]


def commit_points(bench: Any, proto: Protocol, store: str, sizes: Any) -> list[dict[str, Any]]:
    import txcommit

    files = sizes.transaction_files
    single = bench.url(store, f"tx-single-{files}")
    cases = [("single", 1, [single])]
    for n in sizes.transaction_tables:
        cases += [
            ("transaction", n, _tables(bench, store, "group", n)),
            ("separate", n, _tables(bench, store, "apart", n)),
        ]
    spark = bench.session(proto.session_confs(store))
    try:
        bench.say(f"  transactions: {store}: creating {sum(len(c[2]) for c in cases)} tables")
        with bench.unmetered():  # one untimed append each: tables the server knows
            for _, n, urls in cases:
                for url in urls:
                    _append(bench, spark, url, 0, files // n)
        samples: dict[tuple[str, int], list[dict[str, Any]]] = {(c, n): [] for c, n, _ in cases}
        for i in range(sizes.transaction_repeats):
            for case, n, urls in cases:
                first = (i + 1) * files * ROWS_PER_FILE
                mark = bench._requests_mark()
                s: dict[str, Any] = {}
                if case == "transaction":
                    began = time.perf_counter()
                    with txcommit.transaction(spark) as tx:
                        start = time.perf_counter()
                        prepares = [
                            _append(bench, spark, url, first, files // n)[1] for url in urls
                        ]
                        req_commit = bench._requests_mark()
                        log_commit = bench._log_size()
                        at_commit = time.perf_counter()
                    end = time.perf_counter()
                    took = COMMIT_TOOK.findall(bench._log_since(log_commit))
                    if not took:
                        raise RuntimeError(
                            f"transaction {tx.id} on {store} logged no COMMIT time: the "
                            "measurement is refused"
                        )
                    if tx.outcome != "committed" or tx.writes != n:
                        raise RuntimeError(
                            f"transaction {tx.id} over {n} tables on {store} ended "
                            f"{tx.outcome} with {tx.writes} writes: the measurement is refused"
                        )
                    s.update(
                        total_s=end - start,
                        commit_s=int(took[-1]) / 1000.0,
                        commit_client_s=end - at_commit,
                        begin_s=start - began,
                        prepare_s=sum(prepares),
                        commit_requests=bench._requests_since(req_commit),
                    )
                else:
                    start = time.perf_counter()
                    commits = [_append(bench, spark, url, first, files // n)[1] for url in urls]
                    s.update(total_s=time.perf_counter() - start, commit_s=sum(commits))
                s["requests"] = bench._requests_since(mark)
                samples[(case, n)].append(s)
                bench.say(
                    f"    {store:5} {case:11} {n:2} tables  total {s['total_s']:.2f} s, "
                    f"commit {s['commit_s']:.3f} s"
                )
    finally:
        spark.stop()
    return [commit_row(store, case, n, files, ss) for (case, n), ss in samples.items()]


def commit_row(
    store: str, case: str, tables: int, files: int, samples: list[dict[str, Any]]
) -> dict[str, Any]:
    """The medians of one point's rounds (the requests of its last round, on S3)."""

    def median(key: str) -> float:
        return round(float(statistics.median(s[key] for s in samples)), 4)

    row: dict[str, Any] = {
        "kind": "commit",
        "store": store,
        "case": case,
        "tables": tables,
        "files": files,
        "rows": files * ROWS_PER_FILE,
        "repeats": len(samples),
        "total_s": median("total_s"),
        "commit_s": median("commit_s"),
        "samples": {
            "total_s": [round(s["total_s"], 4) for s in samples],
            "commit_s": [round(s["commit_s"], 4) for s in samples],
        },
    }
    if case == "transaction":
        row.update(
            begin_s=median("begin_s"),
            prepare_s=median("prepare_s"),
            commit_client_s=median("commit_client_s"),
        )
    if store == "s3":
        last = samples[-1]
        row["requests"] = summarise_requests(last["requests"])["counts"]
        if "commit_requests" in last:
            row["commit_requests"], row["commit_log_requests"] = count_requests(
                last["commit_requests"]
            )
    return row


# ---------------------------------------------------------------------------- reader requests


def reader_plan(
    bench: Any, proto: Protocol, sizes: Any, start_server: Callable[..., Any]
) -> list[dict[str, Any]]:
    """The reader's requests at each phase, for each count of undecided transactions."""
    # Writers leave no background work to overlap the reader's counted plans, and write no
    # checkpoint (one in `interval` commits writes one, by its id): the table and the control
    # keep the same history, so their reads differ by the transactions alone.
    confs = {
        **proto.session_confs("s3"),
        CLEANUP_ATTEMPTS_CONF: "false",
        CHECKPOINT_INTERVAL_CONF: "0",
    }
    ks = sizes.transaction_undecided
    pairs = {
        k: (bench.url("s3", f"txread-{k}"), bench.url("s3", f"txread-control-{k}")) for k in ks
    }
    writer = bench.session(confs)
    try:
        with bench.unmetered():
            for table, control in pairs.values():
                _append(bench, writer, table, 0, 1)
                _append(bench, writer, control, 0, 1)
    finally:
        writer.stop()
    bench.say("  transactions: starting a reader's server")
    server = start_server("transactions-reader")
    rows: list[dict[str, Any]] = []
    try:
        reader = bench.session({READ_FILTER_CONF: "true"}, server)
        try:
            for table, control in pairs.values():  # footers, records: paid before
                for _ in range(2):
                    _plan(bench, reader, table)
                    _plan(bench, reader, control)
            for k, (table, control) in pairs.items():
                rows += _one_plan(bench, confs, reader, k, table, control)
        finally:
            reader.stop()
    finally:
        server.stop()
    return rows


def _one_plan(
    bench: Any, confs: dict[str, str], reader: Any, k: int, table: str, control: str
) -> list[dict[str, Any]]:
    rows = [_phase(bench, reader, k, "none", table, control, 1, 1)]
    sessions = [bench.session(confs) for _ in range(k)]
    try:
        for i, s in enumerate(sessions):
            s.sql("TXCOMMIT BEGIN").first()
            _frame(s, (i + 1) * ROWS_PER_FILE, 1).write.mode("append").parquet(table)
        plain = bench.session(confs)
        try:
            for i in range(k):
                _frame(plain, (i + 1) * ROWS_PER_FILE, 1).write.mode("append").parquet(control)
        finally:
            plain.stop()
        for phase in ("undecided", "undecided-again"):
            rows.append(_phase(bench, reader, k, phase, table, control, 1, 1 + k))
        for s in sessions:
            answer = s.sql("TXCOMMIT COMMIT").first()
            if answer["outcome"] != "committed":
                raise RuntimeError(
                    f"transaction {answer['transaction']} on {table} ended {answer['outcome']}: "
                    "the measurement is refused"
                )
    finally:
        for s in sessions:
            s.stop()
    rows.append(_phase(bench, reader, k, "decided-first", table, control, 1 + k, 1 + k))
    rows.append(_phase(bench, reader, k, "decided-again", table, control, 1 + k, 1 + k))
    return rows


def _settle(bench: Any, quiet_s: float = 1.0, limit_s: float = 30.0) -> None:
    """Waits until the endpoint has served no request for ``quiet_s`` (at most ``limit_s``): a
    writer's derived work that runs after its job returned (``_SUCCESS``, ``rows/``) must not
    be counted as a reader's."""
    end = time.monotonic() + limit_s
    last, since = bench._requests_mark(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        now = bench._requests_mark()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def _plan(bench: Any, spark: Any, url: str) -> tuple[int, list[dict[str, Any]]]:
    """One plan of ``url``, its schema given, as a catalog table's is: (files, the requests the
    endpoint served meanwhile). Inferred, the schema costs a footer read of a data file in some
    plans and not in others, in both tables alike, which would blur the count."""
    _settle(bench)
    mark = bench._requests_mark()
    df = spark.read.schema(SCHEMA).parquet(url)
    df.schema  # noqa: B018 - forces the plan
    files = len(df.inputFiles())
    return files, bench._requests_since(mark)


def _area(e: dict[str, Any]) -> str:
    """A request as "<operation> <log area>" ("data" outside the log)."""
    return f"{e['op']} {log_area(e) or 'data'}"


def _path(e: dict[str, Any]) -> str:
    """A request as "<operation> <path in its table>" (the bucket's run directory cut off)."""
    key = e.get("key") or e.get("prefix") or ""
    return f"{e['op']} {key.split('/', 1)[-1]}"


def _phase(
    bench: Any,
    reader: Any,
    k: int,
    phase: str,
    table: str,
    control: str,
    expect: int,
    expect_control: int,
) -> dict[str, Any]:
    files, mine = _plan(bench, reader, table)
    control_files, theirs = _plan(bench, reader, control)
    if (files, control_files) != (expect, expect_control):
        raise RuntimeError(
            f"the reader found {files} files in {table} and {control_files} in {control} "
            f"({phase}), expected {expect} and {expect_control}: the measurement is refused"
        )
    return reader_row(k, phase, files, mine, theirs)


def reader_row(
    k: int, phase: str, files: int, mine: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> dict[str, Any]:
    """One phase of the reader's plan: its requests against the control table's."""
    ops, log = count_requests(mine)
    control_ops, control_log = count_requests(theirs)
    areas, control_areas = Counter(map(_area, mine)), Counter(map(_area, theirs))
    more, fewer = areas - control_areas, control_areas - areas
    return {
        "kind": "reader",
        "store": "s3",
        "undecided": k,
        "phase": phase,
        "files": files,
        "requests": ops,
        "log_requests": log,
        "control_requests": control_ops,
        "control_log_requests": control_log,
        "extra": len(mine) - len(theirs),
        "more": dict(sorted(more.items())),
        "fewer": dict(sorted(fewer.items())),
        # which requests those were: the table's of the areas it asked more of, and the
        # control's of the areas it asked more of
        "more_paths": sorted(_path(e) for e in mine if _area(e) in more),
        "fewer_paths": sorted(_path(e) for e in theirs if _area(e) in fewer),
    }
