"""Past snapshots and RESTORE, raced through Spark from a JVM-less client (docs/protocol.md,
I30 and I31): reads as of a version while overwrites, appends and VACUUM run; restores while
appends commit, beside an overwrite and beside VACUUM. Each test counts what overlapped (the
commit points as the store showed them, support/races.py) and fails below its floor."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from txcommit.conformance.protocol import pause_at
from txcommit.maintenance import restore, vacuum

from support.races import (
    CommitWatch,
    Generations,
    Span,
    assert_overlaps,
    overlapping,
    race,
    rows_per_gen,
    spanning,
)
from support.scale import SOAK, scaled
from support.servers import ServerProcess, new_session
from support.tables import TableRef, is_data, replace_records, txn_of
from support.waiting import wait_for

#: Reads as of a version, and restores racing appends: on the local file system and S3 in CI
#: (the soak adds `s3-multipart`); a restore beside an overwrite or VACUUM on the local file
#: system (the soak adds both S3 adapters): a restore's publish is an overwrite's.
STORES = ["local", "s3", "s3-multipart"] if SOAK else ["local", "s3"]
ONE_STORE = ["local", "s3", "s3-multipart"] if SOAK else ["local"]
GENERATIONS = Generations(parts=8, rows=400)
HOUR_MS = 3600 * 1000


@pytest.fixture
def sessions(server: ServerProcess, any_table: TableRef):
    """Two sessions for ``any_table`` on the shared server, closed at the end of the test."""
    opened = [new_session(server.url), new_session(server.url)]
    for s in opened:
        any_table.prepare(s)
        s.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide
    yield opened
    for s in opened:
        s.stop()


def newest_append(table: TableRef, before: set[str]) -> str:
    """The one append committed since ``before`` (the transactions committed then); a
    replacing commit's copy in `commits/` is not one."""
    committed = table.committed()
    (txn,) = {t for t in set(committed) - before if "sequence" not in committed[t]}
    return txn


def two_versions(writer, table: TableRef) -> tuple[str, str]:
    """Writes generation 0, then overwrites it with generation 1; their transactions."""
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
    (first,) = table.committed()
    GENERATIONS.of(writer, 1).write.mode("overwrite").partitionBy("k").parquet(table.url)
    (second,) = set(table.committed()) - {first}
    return first, second


def is_vacuumed(error: BaseException) -> bool:
    """A read of a past snapshot VACUUM has deleted files of: refused whole (TimeTravelException
    naming the horizon, or the files a later commit removed that are no longer there, checked
    where the read selects them); failed by a file that went after its listing; or, when VACUUM had
    deleted every file of it before the listing, Spark's own error: no file to infer the schema
    from (with a schema given, the refusal)."""
    text = str(error)
    gone = (
        "VACUUM has deleted",
        "no longer on the store as it had them",
        "FileNotFoundException",
        "does not exist",
        "UNABLE_TO_INFER_SCHEMA",
    )
    return any(why in text for why in gone)


# --- reads as of a version while overwrites, appends and VACUUM race ----------------------------

#: Reads as of a version that must have begun before a commit point (or a VACUUM's horizon
#: record) and ended after it.
AS_OF_OVERLAPS = scaled(2, 4)


@pytest.mark.parametrize("any_table", STORES, indirect=True)
def test_reads_as_of_a_version_show_it_whole_or_fail_while_writes_and_vacuum_race(
    sessions, any_table: TableRef
):
    """Each round overwrites the table (generation 10g), appends to it (10g + 1) and runs
    `VACUUM RETAIN 0 HOURS FORCE`, which deletes what the round before committed; a reader
    reads as of the round before's last version in a loop. Each read shows exactly that
    version (its two generations, whole), or fails because VACUUM deleted its files: never
    another version's rows, never part of one."""
    writer, reader = sessions
    table = any_table
    reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
    rows = GENERATIONS.rows
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
    before = set(table.committed())
    GENERATIONS.of(writer, 1).write.mode("append").partitionBy("k").parquet(table.url)
    #: The version the reader reads: the last of the round before (generation, its txn).
    target = [(0, newest_append(table, before))]

    def write(g: int) -> None:
        GENERATIONS.of(writer, 10 * g).write.mode("overwrite").partitionBy("k").parquet(table.url)
        before = set(table.committed())
        GENERATIONS.of(writer, 10 * g + 1).write.mode("append").partitionBy("k").parquet(table.url)
        appended = newest_append(table, before)
        vacuum(writer, table.url, retain_hours=0, force=True).collect()
        target[0] = (10 * g, appended)

    def read_as_of() -> tuple[int, dict[int, int] | None]:
        gen, txn = target[0]
        try:
            df = reader.read.option("txcommit.asOf", txn).parquet(table.url)
            return gen, {r["gen"]: r["count"] for r in df.groupBy("gen").count().collect()}
        except Exception as e:
            if not is_vacuumed(e):
                raise
            return gen, None

    raced = race(write, scaled(3, 6), [read_as_of], table, floor=AS_OF_OVERLAPS, vacuums=True)
    wrong = [
        (gen, seen)
        for gen, seen in raced.seen(0)
        if seen is not None and seen != {gen: rows, gen + 1: rows}
    ]
    assert not wrong, f"reads as of a version that showed another, or part of one: {wrong}"
    assert any(seen is not None for _, seen in raced.seen(0)), "no read showed its version"
    raced.assert_overlaps(0, "reads as of a version")


# --- restores racing appends -------------------------------------------------------------------

#: Appends that must have begun before a restore's commit point and ended after it.
RESTORE_OVERLAPS = 1


@pytest.mark.parametrize("any_table", STORES, indirect=True)
def test_restores_racing_appends_keep_each_append_committed_after_them_whole(
    sessions, any_table: TableRef
):
    """Appends commit in a loop while the table is restored, again and again, to its first
    version and to its second. The table ends as the last restore's target, with every append
    that committed after that restore began whole and none that committed before it."""
    writer, restorer = sessions
    table = any_table
    rows = GENERATIONS.rows
    first, second = two_versions(writer, table)
    versions = [(first, 0), (second, 1)]
    stop = threading.Event()
    appends: dict[int, str] = {}  # generation -> its txn
    append_spans: list[Span] = []
    errors: list[BaseException] = []

    def append_in_a_loop() -> None:
        gen = 100
        try:
            while not stop.is_set():
                before = set(table.committed())
                with spanning(append_spans):
                    GENERATIONS.of(writer, gen).write.mode("append").partitionBy("k").parquet(
                        table.url
                    )
                appends[gen] = newest_append(table, before)
                gen += 1
        except BaseException as e:
            errors.append(e)

    def commit_points() -> dict[int, Span]:
        """Generation -> the window of its append's commit point, as the store showed it."""
        seen = watch.windows()
        named = {g: f"_txcommit/commits/{t}.json" for g, t in dict(appends).items()}
        return {g: seen[name] for g, name in named.items() if name in seen}

    def restore_points() -> list[Span]:
        return [w for name, w in watch.windows().items() if name.startswith("_txcommit/replace/")]

    restores: list[Span] = []
    thread = threading.Thread(target=append_in_a_loop, daemon=True)
    with CommitWatch(table) as watch:
        thread.start()
        wait_for(lambda: bool(appends) or bool(errors), 120, "the first append")
        n = 0
        while not errors and (
            n < scaled(3, 8)
            or (n < scaled(8, 16) and overlapping(list(append_spans), restore_points()) < 1)
        ):
            with spanning(restores):
                restore(restorer, table.url, versions[n % 2][0]).collect()
            n += 1
            time.sleep(random.uniform(0, 0.5))  # restores at every phase of an append
        stop.set()
        thread.join(timeout=300)
    assert not errors, errors
    target = versions[(n - 1) % 2][1]
    seen = rows_per_gen(restorer, table.url)
    points = commit_points()
    late = {g for g, w in points.items() if w.start > restores[-1].end}
    early = {g for g, w in points.items() if w.end < restores[-1].start}
    assert all(c == rows for c in seen.values()), f"a generation shown in part: {seen}"
    assert target in seen and (1 - target) not in seen, f"not the last restore's target: {seen}"
    assert late <= seen.keys(), f"appends committed after the last restore lost: {late}"
    assert not early & seen.keys(), f"appends committed before the last restore kept: {early}"
    assert set(seen) - {target} <= set(appends), f"rows of no append: {seen}"
    # Appends that began before a restore's commit point and committed after it: serialized
    # after the restore, so kept by it.
    assert_overlaps(append_spans, restore_points(), RESTORE_OVERLAPS, "appends around a restore")


# --- a restore racing an overwrite, and VACUUM ------------------------------------------------


@pytest.mark.parametrize("any_table", ONE_STORE, indirect=True)
def test_a_restore_during_an_overwrite_wins_and_the_overwrite_fails_whole(
    sessions, any_table: TableRef
):
    """A slow overwrite (its task sleeps) is running when a restore to the first version
    commits: the overwrite must fail with a conflict naming the restore, and the table show
    the restore's target, none of the overwrite."""
    writer, restorer = sessions
    table = any_table
    rows = GENERATIONS.rows
    first, _ = two_versions(writer, table)
    outcome: list[BaseException | None] = []
    overwrite: list[Span] = []

    def slow_overwrite() -> None:
        slow = pause_at("id", 0, 8000)
        df = GENERATIONS.of(writer, 2).select(slow.alias("id"), "k", "gen")
        try:
            with spanning(overwrite):
                df.write.mode("overwrite").partitionBy("k").parquet(table.url)
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    thread = threading.Thread(target=slow_overwrite, daemon=True)
    with CommitWatch(table) as watch:
        pending_before = len([k for k in table.objects() if k.startswith("_txcommit/pending/")])
        thread.start()
        while len([k for k in table.objects() if k.startswith("_txcommit/pending/")]) == (
            pending_before
        ):
            assert thread.is_alive(), f"the overwrite ended before the restore: {outcome}"
            time.sleep(0.05)
        [done] = restore(restorer, table.url, first).collect()
        thread.join(timeout=300)
    assert_overlaps(overwrite, watch.points(), 1, "the overwrite around the restore")
    (error,) = outcome
    assert error is not None and "conflict" in str(error), f"the overwrite must lose: {error}"
    assert done["txn"] in str(error), "the conflict names the restore"
    assert rows_per_gen(restorer, table.url) == {0: rows}


@pytest.mark.parametrize("any_table", ONE_STORE, indirect=True)
def test_restores_beside_vacuum_with_its_horizon_keep_every_restored_file(
    sessions, any_table: TableRef
):
    """VACUUM (`RETAIN 1 HOURS`, no FORCE) runs in a loop while the table is restored back and
    forth between two versions whose files were removed minutes ago: VACUUM deletes only the
    garbage older than its horizon (what an overwrite removed two hours ago), never a file a
    restore re-adds, and each restore reads whole."""
    writer, restorer = sessions
    table = any_table
    rows = GENERATIONS.rows
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)
    (old,) = table.committed()
    GENERATIONS.of(writer, 1).write.mode("overwrite").partitionBy("k").parquet(table.url)
    # That overwrite committed two hours ago, as its driver's clock had it: generation 0's
    # files are garbage past the horizon.
    (key,) = [k for k in table.objects() if k.startswith("_txcommit/replace/")]
    (record,) = replace_records(table)
    record["committedAt"] -= 2 * HOUR_MS
    data = json.dumps(record).encode()
    table.write(key, data)
    table.write(f"_txcommit/commits/{record['txn']}.json", data)
    b = record["txn"]
    GENERATIONS.of(writer, 2).write.mode("overwrite").partitionBy("k").parquet(table.url)
    (c,) = set(table.committed()) - {old, b}
    old_files = {k for k in table.data_files() if txn_of(k) == old}
    stop = threading.Event()
    vacuums: list[Span] = []
    deleted: set[str] = set()

    def vacuum_in_a_loop() -> None:
        while not stop.is_set():
            with spanning(vacuums):
                found = vacuum(writer, table.url, retain_hours=1).collect()
            deleted.update(r["path"].split(f"{table.prefix or table.local}/", 1)[-1] for r in found)

    thread = threading.Thread(target=vacuum_in_a_loop, daemon=True)
    restores: list[Span] = []
    targets = [(b, 1), (c, 2)]
    with CommitWatch(table) as watch:
        thread.start()
        n = 0
        while n < 2 or (n < 8 and overlapping(list(vacuums), watch.points()) < 1):
            txn, _ = targets[n % 2]
            with spanning(restores):
                restore(restorer, table.url, txn).collect()
            n += 1
            assert rows_per_gen(restorer, table.url) == {targets[(n - 1) % 2][1]: rows}
        stop.set()
        thread.join(timeout=300)
    assert_overlaps(vacuums, watch.points(), 1, "VACUUMs around a restore's commit point")
    # (The pending markers of committed transactions go at any age: not data.)
    went = {p for p in deleted if is_data(p)}
    assert went <= old_files, f"VACUUM deleted more than the old garbage: {went - old_files}"
    assert old_files <= went, "the garbage past the horizon went"
    for txn in (b, c):
        assert {k for k in table.data_files() if txn_of(k) == txn}, f"{txn}'s files are kept"
