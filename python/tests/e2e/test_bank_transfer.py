"""The bank transfer (docs/protocol.md, I33-I37): a writer moves amounts from table ``a`` to table
``b`` in multi-table transactions (each an append to both; every few, a consolidation that
overwrites both tables whole with their balances), while readers in another application sum
both tables in one query, in a loop, and the Python readers sum a view of the directory holding
both. The total never changes in any read: no read shows a transfer in one table and not the
other. Beside them VACUUM runs in a loop at the shortest horizon allowed beside running jobs and
readers (``RETAIN 1 HOURS``: a shorter one needs FORCE, which promises that no job writes and no
reader reads, and so fences the writer) and, on S3, the answers of some decisions' creation are
lost (the SDK resends; the resend finds the decision).
At the end every transfer the log says committed is in ``b``, and none other.

The race is counted: reads whose span overlapped a COMMIT (between its statement being sent and
answered), and the distinct balances the readers saw; each has a floor. The soak adds rounds,
the other stores, a transaction across two stores, and a writer server killed at a random
point of random transactions (restarted; the dead transactions are rolled back by the next
overwrite after their lease)."""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.devkit.lossy_proxy import LossyProxy
from txcommit.devkit.testkit import store_test_kits
from txcommit.readers import dataset

from support.races import beside
from support.scale import SOAK, scaled
from support.servers import (
    ServerProcess,
    crashing_server,
    new_session,
    run_until_the_server_dies,
    running,
)
from support.tables import TableRef, make_table_of, reader_target
from support.transactions import DECIDED_POINTS, TRANSACTION_POINTS, decisions, prepared_groups

START = 100
ACCOUNTS = 10
TOTAL = START * ACCOUNTS
#: Transactions per run; every CONSOLIDATE-th is an overwrite of both tables.
TRANSFERS = scaled(12, 80)
CONSOLIDATE = 5
#: Floors the race must reach: reads that overlapped a COMMIT, and balances of ``a`` seen.
MIN_OVERLAPPING_READS = scaled(3, 30)
MIN_BALANCES_SEEN = scaled(3, 20)
#: The soak's stores: each with its writer and its other application (server_of).
BANK_STORES = ["local", "s3", "s3-multipart", "hdfs", "gcs", "azure"] if SOAK else ["local", "s3"]


@dataclass
class Ledger:
    """What the writer did (the txn of each transfer's transaction, its amount) and when each
    COMMIT was in flight (monotonic seconds)."""

    transfers: dict[str, int] = field(default_factory=dict)
    #: Every transaction begun (acknowledged or not), with the amount it moves (0: a
    #: consolidation), so that one a killed writer left decided is accounted for.
    begun: dict[str, int] = field(default_factory=dict)
    commits: list[tuple[float, float]] = field(default_factory=list)
    #: Transactions rolled back because VACUUM FORCE fenced one of their jobs.
    fenced: int = 0


@dataclass
class Reads:
    spans: list[tuple[float, float]] = field(default_factory=list)
    balances: set[int] = field(default_factory=set)
    torn: list[dict[str, int]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def overlapping(self, commits: list[tuple[float, float]]) -> int:
        return sum(1 for s, e in self.spans if any(s < ce and cs < e for cs, ce in commits))


def balances(spark, a: str, b: str) -> dict[str, int]:
    """Both tables' sums in ONE query (one plan: one snapshot of both logs)."""
    both = (
        spark.read.parquet(a)
        .select(F.lit("a").alias("t"), "amount")
        .unionByName(spark.read.parquet(b).select(F.lit("b").alias("t"), "amount"))
    )
    return {
        r["t"]: int(r["s"]) for r in both.groupBy("t").agg(F.sum("amount").alias("s")).collect()
    }


def rows(spark, amounts: list[int], gen: int):
    return spark.createDataFrame(
        [(i, m, gen) for i, m in enumerate(amounts)], "id long, amount long, gen int"
    )


def transfer(spark, a: str, b: str, n: int, ledger: Ledger, lose=None) -> None:
    """Transaction ``n``: moves ``n`` from ``a`` to ``b`` (appends), or, every CONSOLIDATE-th,
    overwrites both with their balances (read inside the transaction: as committed before it)."""
    with txcommit.transaction(spark) as tx:
        ledger.begun[tx.id] = n if n % CONSOLIDATE else 0
        if n % CONSOLIDATE == 0:
            now = balances(spark, a, b)
            rows(spark, [now["a"]], n).write.mode("overwrite").parquet(a)
            rows(spark, [now["b"]], n).write.mode("overwrite").parquet(b)
        else:
            rows(spark, [-n], n).write.mode("append").parquet(a)
            rows(spark, [n], n).write.mode("append").parquet(b)
        if lose is not None:
            lose()
        started = time.monotonic()
    ledger.commits.append((started, time.monotonic()))
    if n % CONSOLIDATE:
        ledger.transfers[tx.id] = n


def read_loop(read, reads: Reads, done: threading.Event) -> None:
    """Reads until after the writer is done; every read must show the total."""
    while True:
        last = done.is_set()
        start = time.monotonic()
        try:
            seen = read()
        except Exception as e:
            # Only a read whose logs kept changing may fail (it says to run it again).
            reads.failed.append(str(e).split("\n")[0][:200])
            if last:
                return
            continue
        reads.spans.append((start, time.monotonic()))
        if sum(seen.values()) != TOTAL:
            reads.torn.append(seen)
        reads.balances.add(seen.get("a", 0))
        if last:
            return


def vacuum_loop(
    spark, tables: list[str], done: threading.Event, runs: list[int], retain: str
) -> None:
    while not done.is_set():
        for t in tables:
            spark.sql(f"TXCOMMIT VACUUM '{t}' {retain}").collect()
        runs[0] += 1
        time.sleep(0.3)


def decided(table: TableRef) -> dict[str, str]:
    """Each transaction's outcome, from the decisions the first table keeps."""
    return {d["group"]: d["outcome"] for d in decisions(table)}


def pair_of(store: str, workdir: Path, request) -> tuple[TableRef, TableRef, TableRef]:
    parent = make_table_of(store, workdir, request)
    return parent, parent.child("a"), parent.child("b")


def run_bank(
    writer: Any, reader_server: ServerProcess, a: TableRef, b: TableRef, parent: TableRef | None,
    local_s3: Any, lose=None, retain: str = "RETAIN 1 HOURS",
) -> tuple[Ledger, list[Reads], int]:  # fmt: skip
    """Sets up ``a`` (ACCOUNTS accounts of START) and ``b`` (0), then runs TRANSFERS
    transactions while a reader of another application and the Python readers read both and
    VACUUM (``retain``) runs beside them. Under FORCE a transaction whose job VACUUM fenced is
    rolled back and counted."""
    a.prepare(writer)
    b.prepare(writer)
    rows(writer, [START] * ACCOUNTS, 0).write.parquet(a.url)
    rows(writer, [0], 0).write.parquet(b.url)
    reader = new_session(reader_server.url)
    a.prepare(reader)
    b.prepare(reader)
    vacuumer = new_session(writer_url(writer))
    a.prepare(vacuumer)
    ledger, reads = Ledger(), [Reads(), Reads()]
    runs = [0]
    loops = [
        lambda done: read_loop(lambda: balances(reader, a.url, b.url), reads[0], done),
        lambda done: vacuum_loop(vacuumer, [a.url, b.url], done, runs, retain),
    ]
    if parent is not None and python_readable(parent):
        url, options = reader_target(parent, local_s3)

        def python_read() -> dict[str, int]:
            # One view of the directory holding both tables: their logs settled together.
            t = dataset(url, storage_options=options).to_table(columns=["amount"])
            return {"both": sum(t.column("amount").to_pylist())}

        loops.append(lambda done: read_loop(python_read, reads[1], done))

    def transfers(done: threading.Event) -> None:
        for n in range(1, TRANSFERS + 1):
            if done.is_set():
                break
            try:
                transfer(writer, a.url, b.url, n, ledger, lose if n % 3 == 1 else None)
            except Exception as e:
                if "FORCE" not in retain or "fenced by VACUUM" not in str(e):
                    raise
                ledger.fenced += 1

    beside(loops, transfers)
    reader.stop()
    vacuumer.stop()
    return ledger, reads, runs[0]


#: A decision's path in its table's log.
DECISION = r"_txcommit/groups/[0-9a-z]{16}\.json"


class LostDecisionAnswers:
    """Each call loses the answer to the next decision's create (the create lands, its answer
    never comes; the client's resend or read-back must find it); counts what was lost."""

    def __init__(self, arm: Callable[[], None], taken: Callable[[], list[str]]) -> None:
        #: ``taken``: what was lost since the last arming, and disarms.
        self._arm, self._taken = arm, taken
        self.arms = 0
        self.lost: list[str] = []

    def __call__(self) -> None:
        self.lost += self._taken()  # arming again forgets what was lost
        self._arm()
        self.arms += 1

    def done(self) -> list[str]:
        self.lost += self._taken()
        return self.lost


def lost_decision_answers(
    store: str, a: TableRef, local_s3: Any, front_of: Any
) -> LostDecisionAnswers | None:
    """Losing decisions' answers on ``store`` (its decisions live in ``a``): through the S3
    endpoint's faults, or through the proxy every server of GCS and Azure reaches its emulator
    through. None on the local file system (no network) and HDFS (whose client's one connection
    to the NameNode fails every call in flight with a lost answer; test_attacks loses the
    answers of its records' creates)."""
    if store.startswith("s3"):
        faults = local_s3.front.lose

        def taken() -> list[str]:
            lost = list(faults.state()["lost"])
            faults.arm("", 0)
            return lost

        pattern = f"PUT {re.escape(a.bucket)}/{re.escape(a.prefix)}/{DECISION}"
        return LostDecisionAnswers(lambda: faults.arm(pattern, 1), taken)
    creates = store_test_kits()[store].creates
    if store in ("gcs", "azure") and creates is not None:
        front: LossyProxy = front_of(store)
        return LostDecisionAnswers(lambda: front.lose(creates(DECISION)), front.lost)
    return None


def python_readable(table: TableRef) -> bool:
    """Whether the Python readers read the tables here (the local file system and S3:
    `reader_target`); HDFS, GCS and Azure are read by Spark only."""
    return table.local is not None or table.s3 is not None


def writer_url(spark) -> str:
    url = txcommit.client.session_url(spark)
    assert url is not None
    return url


@pytest.mark.parametrize("store", BANK_STORES)
def test_the_total_of_two_tables_never_changes_in_any_read(
    store: str, workdir: Path, request, server_of, local_s3, front_of
) -> None:
    parent, a, b = pair_of(store, workdir, request)
    writer = new_session(server_of(store).url)
    lose = lost_decision_answers(store, a, local_s3, front_of)
    ledger, reads, vacuums = run_bank(
        writer, server_of(store, other=True), a, b, parent, local_s3, lose
    )
    lost_note = ""
    if lose is not None:
        lost = lose.done()
        # Every COMMIT after an arming creates a decision: at least half of them lost answers.
        assert len(lost) >= max(1, lose.arms // 2), (lose.arms, lost)
        lost_note = f"; decisions' answers lost {len(lost)} of {lose.arms} armed"
    spark_reads, python_reads = reads
    assert not spark_reads.torn, (
        f"Spark reads that saw a transfer in one table only: {spark_reads.torn}"
    )
    assert not python_reads.torn, f"Python reads that saw part of a transfer: {python_reads.torn}"
    for r in (spark_reads, python_reads):
        assert all("kept changing" in f for f in r.failed), r.failed
    overlapping = spark_reads.overlapping(ledger.commits)
    assert overlapping >= MIN_OVERLAPPING_READS, (
        f"{overlapping} of {len(spark_reads.spans)} reads overlapped a COMMIT (floor "
        f"{MIN_OVERLAPPING_READS}); {len(spark_reads.failed)} failed under VACUUM"
    )
    assert len(spark_reads.balances) >= MIN_BALANCES_SEEN, spark_reads.balances
    python_overlapping = python_reads.overlapping(ledger.commits)
    assert python_overlapping >= MIN_OVERLAPPING_READS or not python_readable(parent), (
        f"{python_overlapping} of {len(python_reads.spans)} Python reads overlapped a COMMIT "
        f"(floor {MIN_OVERLAPPING_READS})"
    )
    print(
        f"bank[{store}]: {len(ledger.commits)} transactions; Spark reads {len(spark_reads.spans)}, "
        f"{overlapping} overlapping a COMMIT, {len(spark_reads.balances)} balances; Python reads "
        f"{len(python_reads.spans)}, {python_overlapping} overlapping; VACUUM runs {vacuums}"
        f"{lost_note}"
    )
    assert vacuums >= 1
    # Every transfer committed is in b (consolidations keep sums), VACUUM lost none of it.
    final = balances(writer, a.url, b.url)
    assert final == {
        "a": TOTAL - sum(ledger.transfers.values()),
        "b": sum(ledger.transfers.values()),
    }
    assert set(decided(a).values()) == {"committed"}
    writer.stop()


def test_a_transfer_across_two_stores_is_whole_in_every_read(
    workdir: Path, request, server, other_server, local_s3
) -> None:
    """Table ``a`` on the local file system, ``b`` on S3: one decision (in ``a``'s log)
    commits both."""
    local = make_table_of("local", workdir, request)
    s3 = make_table_of("s3", workdir, request)
    a, b = local.child("a"), s3.child("b")
    writer = new_session(server.url)
    ledger, reads, _ = run_bank(writer, other_server, a, b, None, local_s3)
    assert not reads[0].torn, reads[0].torn
    overlapping = reads[0].overlapping(ledger.commits)
    assert overlapping >= MIN_OVERLAPPING_READS, (overlapping, len(reads[0].spans))
    print(f"bank[local+s3]: {len(reads[0].spans)} Spark reads, {overlapping} overlapping a COMMIT")
    final = balances(writer, a.url, b.url)
    assert final["b"] == sum(ledger.transfers.values()) and sum(final.values()) == TOTAL
    writer.stop()


@pytest.mark.skipif(not SOAK, reason="the soak runs the race beside VACUUM RETAIN 0 HOURS FORCE")
def test_vacuum_force_beside_the_race_deletes_no_committed_transfer(
    workdir: Path, request, server_of, local_s3
) -> None:
    """VACUUM ``RETAIN 0 HOURS FORCE`` beside the race on S3 (docs/protocol.md, I37). FORCE
    promises that no job writes and no reader reads, so it may fence the writer's jobs and read
    short a reader's snapshot that a later consolidation replaced; it never deletes a committed
    transfer. The writer's own reads (inside its transactions: of what it last committed, which
    no other writer replaces) never fail, and at the end both tables hold exactly the transfers
    committed. (Before I37's one view, two runs of two lost a committed file: a consolidated
    balance, an append.)"""
    parent, a, b = pair_of("s3", workdir, request)
    writer = new_session(server_of("s3").url)
    ledger, reads, vacuums = run_bank(
        writer, server_of("s3", other=True), a, b, parent, local_s3,
        retain="RETAIN 0 HOURS FORCE",
    )  # fmt: skip
    spark_reads = reads[0]
    print(
        f"bank[s3, FORCE]: {len(ledger.commits)} transactions committed, {ledger.fenced} fenced; "
        f"Spark reads {len(spark_reads.spans)}, {len(spark_reads.torn)} short, "
        f"{len(spark_reads.failed)} failed; VACUUM runs {vacuums}"
    )
    assert vacuums >= MIN_OVERLAPPING_READS
    assert len(ledger.commits) >= TRANSFERS // 2, "FORCE fenced most transactions"
    final = balances(writer, a.url, b.url)
    assert final == {
        "a": TOTAL - sum(ledger.transfers.values()),
        "b": sum(ledger.transfers.values()),
    }
    writer.stop()


#: The fault points a transaction of the bank passes: its writes make one directory each, so
#: never `job.duringCleanup` (test_transactions kills a partitioned transaction there).
BANK_POINTS = [p for p in TRANSACTION_POINTS if p != "job.duringCleanup"]
#: The soak's kill runs: each of BANK_STORES, and table a on the local file system with b on S3.
KILL_STORES = [*BANK_STORES, "local+s3"]
LEASE_MS = 2000


def kill_pair(store: str, workdir: Path, request) -> tuple[TableRef, TableRef]:
    if store == "local+s3":
        local, s3 = make_table_of("local", workdir, request), make_table_of("s3", workdir, request)
        return local.child("a"), s3.child("b")
    _, a, b = pair_of(store, workdir, request)
    return a, b


@pytest.mark.skipif(not SOAK, reason="the soak kills the writer at every point of a transaction")
@pytest.mark.parametrize("store", KILL_STORES)
def test_a_writer_killed_at_every_transaction_point_leaves_every_transfer_whole(
    store: str, workdir: Path, request, server_of, local_s3
) -> None:
    """The writer's server is killed once at each of BANK_POINTS (in a random order, a
    consolidation or a transfer in turn), and restarted; a reader in another application sums
    both tables all along. Every read holds the total. Each round opens with a consolidation
    after the dead transaction's lease: an overwrite of both tables, which rolls back a dead
    consolidation it meets (its prepared records are decided aborted) and rolls a committed
    one's derived work forward. At the end VACUUM decides the dead transfers (appends, which no
    writer waits on); then every prepared transaction is decided, each transaction killed
    before its decision is not committed and each killed after it is, and the balances hold
    exactly the transfers committed: nothing visible that was not, nothing lost that was."""
    seed = int(os.environ.get("TXCOMMIT_TEST_SEED", "7"))
    rng = random.Random(seed)
    points = list(BANK_POINTS)
    rng.shuffle(points)
    a, b = kill_pair(store, workdir, request)
    reader = new_session(server_of(b.store, other=True).url, one_clock=True)
    a.prepare(reader)
    b.prepare(reader)
    ledger, reads = Ledger(), Reads()
    killed: dict[str, str] = {}  # txn of the transaction killed -> its point
    kill_spans: list[tuple[float, float]] = []
    started = threading.Event()
    rolled_back = 0

    def kills(done: threading.Event) -> None:
        nonlocal rolled_back
        for k, point in enumerate(points):
            if done.is_set():
                return
            crashing = crashing_server(
                workdir / f"bank-kill-{store}-{k}", a.store, request, executors_matter=False
            )
            for _ in running(crashing):
                spark = new_session(crashing.url)
                a.prepare(spark)
                b.prepare(spark)
                spark.conf.set("spark.txcommit.transaction.leaseMs", str(LEASE_MS))
                if k == 0:
                    rows(spark, [START] * ACCOUNTS, 0).write.parquet(a.url)
                    rows(spark, [0], 0).write.parquet(b.url)
                    started.set()
                dead = prepared_groups(a, b, areas=("replace",)) - set(decided(a))
                # The last kill's dead consolidation, if it prepared an overwrite: past its
                # lease, this overwrite of both tables decides it aborted.
                transfer(spark, a.url, b.url, 1000 * k + CONSOLIDATE * 2, ledger)
                now = decided(a)
                assert all(now.get(g) == "aborted" for g in dead), (dead, now)
                rolled_back += len(dead)
                for n in range(1, rng.randint(1, 3)):
                    transfer(spark, a.url, b.url, 1000 * k + n, ledger)
                spark.conf.set("spark.txcommit.test.haltAt", point)
                n = 1000 * k + (CONSOLIDATE if k % 2 else 7)
                before = set(ledger.begun)
                t0 = time.monotonic()
                run_until_the_server_dies(
                    crashing, spark, lambda s=spark, n=n: transfer(s, a.url, b.url, n, ledger)
                )
                kill_spans.append((t0, time.monotonic()))
                (txn,) = set(ledger.begun) - before
                killed[txn] = point
            time.sleep(LEASE_MS / 1000)

    def read_all_along(done: threading.Event) -> None:
        while not started.wait(1):
            if done.is_set():
                return
        read_loop(lambda: balances(reader, a.url, b.url), reads, done)

    beside([read_all_along], kills)
    started.set()
    # The dead transfers (appends): once their lease ran out, VACUUM decides them aborted.
    time.sleep(LEASE_MS / 1000 + 1)
    for t in (a, b):
        reader.sql(f"TXCOMMIT VACUUM '{t.url}' RETAIN 0 HOURS FORCE").collect()
    outcomes = decided(a)
    assert not reads.torn, f"reads that saw part of a transfer: {reads.torn}"
    assert all("kept changing" in f for f in reads.failed), reads.failed
    undecided = prepared_groups(a, b) - set(outcomes)
    assert not undecided, f"transactions left undecided after their lease: {undecided}"
    for txn, point in killed.items():
        expected = "committed" if point in DECIDED_POINTS else "aborted"
        assert outcomes.get(txn, "aborted") == expected, (txn, point, outcomes.get(txn))
    moved = sum(n for txn, n in ledger.begun.items() if outcomes.get(txn) == "committed")
    assert set(ledger.transfers) <= {t for t, o in outcomes.items() if o == "committed"}
    final = balances(reader, a.url, b.url)
    assert final == {"a": TOTAL - moved, "b": moved}, (final, moved)
    overlapping = reads.overlapping(ledger.commits + kill_spans)
    print(
        f"bank-kills[{store}]: {len(killed)} kills at {sorted(set(killed.values()))}; "
        f"{len(ledger.commits)} transactions acknowledged, {len(outcomes)} decided "
        f"({sum(o == 'aborted' for o in outcomes.values())} aborted, {rolled_back} of them by "
        f"the next overwrite); reads {len(reads.spans)}, {overlapping} overlapping a COMMIT or a "
        f"killed transaction, {len(reads.failed)} failed"
    )
    assert len(killed) == len(BANK_POINTS)
    assert overlapping >= len(killed), (
        f"{overlapping} reads overlapped a COMMIT or a killed transaction (floor {len(killed)})"
    )
    reader.stop()
