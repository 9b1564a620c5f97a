"""Every attack on every store, through real Spark jobs from a JVM-less client.

The protocol is the same on every store; the primitive under it differs (a file system's
rename, S3's conditional put or multipart complete, GCS's ``ifGenerationMatch=0``, Azure's
``If-None-Match: *``), and so do listings, clocks and retries. Each attack below runs on every
store it applies to, small enough for CI, and each asserts that the overlap it depends on
happened: a race whose sides never met fails, it does not pass. ``bash .ci/soak`` runs the same
tests with more rounds. docs/protocol.md ("What is not (yet) covered") has the attack × store
table these tests make true.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from txcommit._names import NEW_TABLE_READS_CONF
from txcommit.devkit.lossy_proxy import LossyProxy
from txcommit.devkit.testkit import store_test_kits
from txcommit.maintenance import vacuum

from support.jobs import SlowAppend
from support.races import (
    Generations,
    Span,
    assert_overlaps,
    clock,
    race,
    rows_per_gen,
    spanning,
    timed,
)
from support.scale import scaled
from support.servers import ServerProcess, new_session
from support.streams import assert_each_value_once, configure, rate_to_parquet, run_until_batch
from support.tables import TableRef, dynamic_overwrite, replace_records, txn_of
from support.waiting import wait_for

#: Every store with a test kit (the registry's, txcommit.stores).
EVERY_STORE = sorted(store_test_kits())
#: The stores whose kit can lose answers through a proxy in front of their emulator (S3's
#: emulator loses them itself: test_lost_answers).
FRONTED = [store for store, kit in store_test_kits().items() if kit.creates is not None]
GENERATIONS = Generations(parts=8, rows=400)
#: The reads (of each reader) that must have begun before a commit point and ended after it.
READ_OVERLAPS = scaled(2, 4)
#: The two kinds of table (docs/protocol.md, I32): log-only (what txcommit creates) on every
#: store, read by listing (what it adopts) on the local file system and S3.
BOTH_KINDS = [(s, "log") for s in EVERY_STORE] + [("local", "listing"), ("s3", "listing")]


@pytest.fixture
def open_session(server_of):
    """``open_session(table, other=False)``: a session for ``table`` on its store's server (or
    on another application's), closed at the end of the test."""
    opened = []

    def get(table: TableRef, *, other: bool = False):
        session = new_session(server_of(table.store, other=other).url)
        table.prepare(session)
        opened.append(session)
        return session

    yield get
    for session in opened:
        session.stop()


# --- readers: in the writer's application and in another one ------------------------------------


@pytest.mark.parametrize(("any_table", "reads"), BOTH_KINDS, indirect=["any_table"])
def test_readers_here_and_in_another_application_see_whole_generations_during_overwrites(
    any_table: TableRef, reads: str, open_session
):
    table = any_table
    writer, here, there = open_session(table), open_session(table), open_session(table, other=True)
    writer.conf.set(NEW_TABLE_READS_CONF, reads)
    for reader in (here, there):  # listing in a Spark job, as large tables are listed
        reader.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", "1")
    # Every commit also writes a checkpoint, so reads meet checkpoints published while they list.
    writer.conf.set("spark.txcommit.checkpoint.interval", "1")
    GENERATIONS.of(writer, 0).write.partitionBy("k").parquet(table.url)

    # Another application sees a commit once it is `maxClockSkewMs` old (I16): wait until it
    # sees the first generation (before that Spark cannot even infer a schema there).
    def there_sees_generation_0() -> bool:
        try:
            return rows_per_gen(there, table.url) == {0: GENERATIONS.rows}
        except Exception:
            return False

    wait_for(there_sees_generation_0, 60, "the other application to see the first commit")

    def write(gen: int) -> None:
        GENERATIONS.of(writer, gen).write.mode("overwrite").partitionBy("k").parquet(table.url)

    raced = race(
        write,
        scaled(3, 10),
        [lambda: rows_per_gen(here, table.url), lambda: rows_per_gen(there, table.url)],
        table,
        floor=READ_OVERLAPS,
    )
    for i, who in enumerate(("a reader in this application", "a reader in another application")):
        GENERATIONS.assert_whole(raced, i, one_generation=True, who=who)


# --- lost answers in a Spark job ----------------------------------------------------------------


def through_front(table: TableRef, front: LossyProxy) -> str:
    """``table``'s URL as a client behind ``front`` reaches it."""
    return store_test_kits()[table.store].through_front(table.url, front.host_port)


def creates(store: str, names: str) -> bytes:
    """A request that creates an object or file whose path ends in a match of ``names`` (a
    regular expression over the path, with `/`), and nothing else."""
    found = store_test_kits()[store].creates
    assert found is not None, f"the {store} test kit cannot name its create requests"
    return found(names)


#: The path of a commit record.
RECORD = r"_txcommit/commits/[0-9a-z]{16}\.json"


@pytest.mark.parametrize("any_table", FRONTED, indirect=True)
def test_an_append_whose_record_answer_was_lost_succeeds_and_commits_once(
    any_table: TableRef, open_session, front_of
):
    """The store created the record; its answer never came (test_lost_answers has S3). The
    client's retry meets its own record: the job must succeed and commit once."""
    table = any_table
    front: LossyProxy = front_of(table.store)
    url = through_front(table, front)
    spark = open_session(table)
    spark.range(10).write.mode("append").parquet(url)
    front.lose(creates(table.store, RECORD))
    spark.range(100_000).write.mode("append").parquet(url)  # must not report a failure
    lost = front.lost()
    assert [x for x in lost if "commits" in x], f"the record's answer was lost: {lost}"
    assert spark.read.parquet(url).count() == 100_010
    assert len(table.committed()) == 2


#: The path of a replacing commit's record.
REPLACE_RECORD = r"_txcommit/replace/[0-9]{20}\.json"


@pytest.mark.parametrize("any_table", FRONTED, indirect=True)
def test_an_overwrite_whose_replace_record_answer_was_lost_replaces_the_table_once(
    any_table: TableRef, open_session, front_of
):
    """The store created the overwrite's `replace/` record (its commit point); its answer never
    came (test_lost_answers has S3's write id). The client's retry meets the record: the job
    must succeed, publish one record, and remove the old rows, never its own."""
    table = any_table
    front: LossyProxy = front_of(table.store)
    url = through_front(table, front)
    spark = open_session(table)
    spark.range(10).write.mode("append").parquet(url)
    front.lose(creates(table.store, REPLACE_RECORD))
    spark.range(100, 1100).write.mode("overwrite").parquet(url)  # must not report a failure
    lost = front.lost()
    assert [x for x in lost if "replace" in x], f"the record's answer was lost: {lost}"
    assert sorted(r["id"] for r in spark.read.parquet(url).collect()) == list(range(100, 1100))
    assert len(replace_records(table)) == 1


@pytest.mark.parametrize("any_table", FRONTED, indirect=True)
def test_a_stream_whose_checkpoint_and_record_answers_were_lost_runs_on_exactly_once(
    any_table: TableRef, open_session, front_of
):
    """Offsets and commit log files of the checkpoint, and the sink's commit record, each lose
    one answer (test_lost_answers has S3); the query keeps running and every row lands once."""
    front: LossyProxy = front_of(any_table.store)
    ckpt, out = any_table.child("checkpoint"), any_table.child("out")
    spark = open_session(any_table)
    configure(spark, any_table.store)
    ckpt_url, out_url = through_front(ckpt, front), through_front(out, front)
    front.lose(
        creates(
            any_table.store,
            rf"(?:checkpoint/(?:offsets|commits)/1|out/{RECORD})",
        ),
        count=3,
    )
    query = rate_to_parquet(spark, ckpt_url, out_url)
    if store_test_kits()[any_table.store].one_connection:
        # One connection carries every call of the store's client (HDFS's to the NameNode):
        # losing it fails the calls in flight on it too (a checkpoint's `exists`, say), which
        # the client may not retry. Such a query fails; restarted from its checkpoint, as a
        # supervisor restarts it, it must go on exactly once.
        for _ in range(4):
            query = restarted_on_io_error(spark, query, ckpt_url, out_url)
    run_until_batch(query, 4)
    lost = front.lost()
    assert len(lost) == 3, f"three answers lost (else this test proved less): {lost}"
    assert_each_value_once(spark, out_url)


def restarted_on_io_error(spark, query, ckpt_url: str, out_url: str):
    """``query``, or once it failed on a lost connection, the same query started again."""
    deadline = time.monotonic() + 60
    while query.isActive and time.monotonic() < deadline:
        if query.lastProgress and query.lastProgress["batchId"] >= 4:
            return query
        time.sleep(0.3)
    error = query.exception()
    if error is None:
        return query
    assert "EOFException" in str(error) or "Connection reset" in str(error), error
    return rate_to_parquet(spark, ckpt_url, out_url)


# --- VACUUM with its horizon beside a running job ------------------------------------------------


@pytest.mark.parametrize(("any_table", "reads"), BOTH_KINDS, indirect=["any_table"])
def test_vacuum_with_a_real_horizon_beside_a_running_job_keeps_the_job_and_deletes_old_garbage(
    any_table: TableRef, reads: str, open_session
):
    """`VACUUM RETAIN 1 HOURS` (the smallest horizon without FORCE) while a job runs: the job
    shows life younger than the horizon, so VACUUM keeps its files and does not fence it; the
    job commits; what an overwrite removed two hours ago (by its committing driver's clock) is
    garbage and goes."""
    table = any_table
    spark = open_session(table)
    spark.conf.set(NEW_TABLE_READS_CONF, reads)
    spark.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide
    spark.range(100).write.parquet(table.url)
    (old,) = table.committed()
    spark.range(100, 150).write.mode("overwrite").parquet(table.url)
    # The overwrite was committed two hours ago, as its driver's clock had it.
    (key,) = [k for k in table.objects() if k.startswith("_txcommit/replace/")]
    (record,) = replace_records(table)
    record["committedAt"] -= 2 * 3600 * 1000
    data = json.dumps(record).encode()
    table.write(key, data)
    table.write(f"_txcommit/commits/{record['txn']}.json", data)
    old_files = {k for k in table.data_files() if txn_of(k) == old}
    assert old_files

    job = SlowAppend(spark, table, start=1000, seconds=15).start({old, record["txn"]})
    other = open_session(table)
    ran, rows = timed(lambda: vacuum(other, table.url, retain_hours=1).collect())
    deleted = {r["path"] for r in rows}
    error = job.join()
    # VACUUM ran while the job was running (else it proved nothing).
    assert_overlaps([job.span], [ran], 1, "a job beside VACUUM")
    assert error is None, f"the running job must commit: {error}"
    rel = {p.split(f"{table.prefix or table.local}/", 1)[-1] for p in deleted}
    assert old_files <= rel, f"the removed files past the horizon go: {sorted(rel)}"
    assert not [p for p in rel if txn_of(p) not in (None, old)], f"nothing else: {sorted(rel)}"
    ids = sorted(r["id"] for r in spark.read.parquet(table.url).collect())
    assert ids == list(range(100, 150)) + list(range(1000, 1100))


# --- a directory vanishing while an overwrite lists the table ----------------------------------


#: What the plugin logs when a directory disappears under a listing of a table.
VANISHED = "disappeared while it was listed"


@pytest.mark.parametrize("any_table", EVERY_STORE, indirect=True)
def test_overwrite_beside_a_vanishing_directory_removes_every_visible_file(
    any_table: TableRef, open_session, server_of
):
    """A plain writer's `_temporary/` (or Hive's staging, or a clean-up tool) comes and goes
    inside the table while each overwrite lists the table to name what it removes: every
    overwrite must remove every visible file, or fail. On the local file system, whose
    listing walks directory by directory, the directory must also have vanished under one of
    the listings; object stores list a prefix in one flat listing, where objects come and go."""
    table = any_table
    spark = open_session(table)
    server: ServerProcess = server_of(table.store)
    # A wide tree on the local file system, where a listing walks it directory by directory.
    parts = 100 if table.local is not None else 10
    Generations(parts, parts).of(spark, 0).write.partitionBy("k").parquet(table.url)
    vanished_before = server.log_count(VANISHED)
    stop = threading.Event()
    cycles: list[Span] = []  # each: from just before the directory appeared to once it was gone

    def churn() -> None:
        while not stop.is_set():
            began = clock()
            if table.local is not None:
                (table.local / "_temporary" / "0" / "_temporary" / "a").mkdir(
                    parents=True, exist_ok=True
                )
                shutil.rmtree(table.local / "_temporary", ignore_errors=True)
            else:
                table.write("_temporary/0/_temporary/a/part-0", b"x")
                if store_test_kits()[table.store].directories:
                    table.hdfs.rm(f"{table.root}/_temporary", recursive=True)
                else:
                    table.delete("_temporary/0/_temporary/a/part-0")
            cycles.append(Span(began, clock()))
            if table.local is None:
                # An object store's flat listing meets objects coming and going at any cadence:
                # a breath between cycles spares the emulator's core. (The local race with a
                # directory vanishing mid-walk lasts microseconds: no pause there.)
                stop.wait(0.02)

    def vanished() -> int:
        return server.log_count(VANISHED) - vanished_before

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    wrong = []
    overwrites: list[Span] = []
    try:
        wait_for(lambda: len(cycles) > 0, 30, "the directory to come and go")
        gen = 0
        # On the local file system more overwrites (up to 20) until the directory vanished under
        # one of their listings: on a loaded machine the churn thread may lose the race a while.
        while gen < scaled(4, 12) or (table.local is not None and vanished() == 0 and gen < 20):
            gen += 1
            gens = Generations(parts, parts + gen)
            with spanning(overwrites):
                gens.of(spark, gen).write.mode("overwrite").partitionBy("k").parquet(table.url)
            seen = rows_per_gen(spark, table.url)
            if seen != {gen: gens.rows}:
                wrong.append((gen, seen))
    finally:
        stop.set()
        thread.join()
    assert not wrong, f"overwrites that left part of the table behind (gen, rows per gen): {wrong}"
    # Every overwrite began before the directory appeared once and ended after it was gone.
    assert_overlaps(overwrites, cycles, len(overwrites), "overwrites beside the directory")
    if table.local is not None:
        assert vanished() > 0, f"the directory never vanished under a listing in {gen} overwrites"


# --- clocks an hour apart ------------------------------------------------------------------------


@pytest.mark.parametrize(("any_table", "reads"), BOTH_KINDS, indirect=["any_table"])
def test_a_replace_dated_an_hour_ahead_hides_no_later_overwrite(
    any_table: TableRef, reads: str, open_session
):
    """Another application's driver whose clock runs an hour ahead (or VACUUM's fence from
    another server) published a replacing commit; this session's own dynamic overwrite of k=1
    after it must be read at once, and with it what came before."""
    table = any_table
    spark = open_session(table)
    spark.conf.set(NEW_TABLE_READS_CONF, reads)
    spark.conf.set("spark.txcommit.checkpoint.interval", "1000")  # the records alone decide

    def write(n: int, k: str):
        return spark.range(n).selectExpr("id", f"cast({k} as int) as k").write.partitionBy("k")

    write(100, "id % 4").parquet(table.url)
    with dynamic_overwrite(spark):
        write(7, "2").mode("overwrite").parquet(table.url)
    # Dated ahead, as the other driver's clock had it (before any read met the table).
    [key] = [k for k in table.objects() if k.startswith("_txcommit/replace/")]
    [first] = replace_records(table)
    first["committedAt"] += 3600 * 1000
    first["appId"] = "app-with-a-fast-clock"
    data = json.dumps(first).encode()
    table.write(key, data)
    table.write(f"_txcommit/commits/{first['txn']}.json", data)
    with dynamic_overwrite(spark):
        write(5, "1").mode("overwrite").parquet(table.url)
    df = spark.read.parquet(table.url)
    by_k = {r["k"]: r["count"] for r in df.groupBy("k").count().collect()}
    assert by_k == {0: 25, 1: 5, 2: 7, 3: 25}, f"rows per k: {by_k}"
    assert replace_records(table)[0]["committedAt"] > time.time() * 1000


# --- two first writes racing, one inside the other --------------------------------------------

PAUSED = "at fault point 'job.afterNestingCheck'"


@pytest.mark.parametrize("any_table", EVERY_STORE, indirect=True)
def test_a_first_write_and_one_inside_it_racing_leave_one_table(
    any_table: TableRef, open_session, server_of, tmp_path: Path
):
    """Job A's setup finds no log on its path and stalls there (a long GC); meanwhile job B
    writes a table in A's partition directory `k=1`. A then goes on: it must not commit a
    table around B's (its second look, once its own log exists, refuses it before it writes
    data), and leave no log of its own behind."""
    table = any_table
    server: ServerProcess = server_of(table.store)
    a, b = open_session(table), open_session(table)
    a.conf.set("spark.txcommit.test.pauseAt", "job.afterNestingCheck")
    # A stalls until B's write is done (the file below), however long B takes on a busy machine.
    wake_a = tmp_path / "wake-job-a"
    a.conf.set("spark.txcommit.test.pauseMs", "300000")
    a.conf.set("spark.txcommit.test.resumeWhen", str(wake_a))
    paused_before = server.log_count(PAUSED)
    outcome: dict[str, BaseException | None] = {}

    a_ended: list[float] = []

    def job_a() -> None:
        try:
            a.range(1000).selectExpr("id", "id % 4 as k").write.partitionBy("k").parquet(table.url)
            outcome["a"] = None
        except BaseException as e:
            outcome["a"] = e
        finally:
            a_ended.append(clock())

    thread = threading.Thread(target=job_a, daemon=True)
    a_began = clock()
    thread.start()
    wait_for(
        lambda: server.log_count(PAUSED) > paused_before, 120, "job A to stall after its check"
    )
    try:
        b_ran, _ = timed(lambda: b.range(5).write.parquet(f"{table.url}/k=1"))
    finally:
        wake_a.touch()
    thread.join(timeout=300)
    # Job B ran while job A stalled (else the race never happened).
    assert_overlaps([Span(a_began, a_ended[0])], [b_ran], 1, "job A around job B")
    assert outcome["a"] is not None, "job A must not commit a table around job B's"
    assert "appeared while this job ran" in str(outcome["a"]), outcome["a"]
    assert not [k for k in table.objects() if k.startswith("_txcommit/")], "A left no log"
    assert [k for k in table.objects() if k.startswith("k=1/_txcommit/commits/")]
    assert b.read.parquet(f"{table.url}/k=1").count() == 5
