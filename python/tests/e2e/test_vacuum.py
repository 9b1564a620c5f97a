"""VACUUM, history and committed files from a JVM-less Connect client, on every store.

The table under test holds every kind of file a reader must not see (a failed attempt of a
committed txn, an old uncommitted txn, an old aborted one, a young uncommitted one, files
logically deleted by an overwrite, stale markers, S3A staging markers and, on S3, an open
multipart upload of a dead job) next to the committed data. VACUUM must delete exactly the
garbage past its horizon, and leave exactly what Spark with the filter reads.

VACUUM judges a transaction's age by the store's modification times of its files and pending
marker (a store's clock cannot be set back), so "old" here is a few seconds: the old garbage is
written, then the young files after a pause, and each VACUUM's horizon falls in the pause."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.errors import PySparkException
from pyspark.sql import functions as F

import txcommit
from txcommit.cli.log import main as log_main
from txcommit.conformance.protocol import fail_first_attempt_at
from txcommit.maintenance import HISTORY_COLUMNS, committed_files, history, restore, vacuum
from txcommit_store_s3.devkit.emulator import LocalS3

from support.jobs import SlowAppend
from support.races import assert_overlaps, timed
from support.servers import FAULTS_ALLOWED, ServerProcess, free_port, new_session, running
from support.tables import (
    FEATURE_STORES,
    TableRef,
    cli_history,
    dynamic_overwrite,
    make_table,
    parquet_bytes,
    reader_target,
    txn_of,
)

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
#: Seconds between the old garbage and the young files; each horizon falls in the middle.
PAUSE_S = 6.0


@dataclass
class GarbageTable:
    table: TableRef
    expected: set[str]
    young_file: str
    #: The store time in the middle of the pause (old garbage before, young files after).
    mid: float

    def retain_hours(self) -> float:
        """A horizon in the middle of the pause, for a VACUUM that starts now."""
        return (time.time() - self.mid) / 3600


def txn_started_hours_ago(hours: float, tail: str) -> str:
    """A transaction id whose embedded start time is `hours` ago (8 base-36 ms digits)."""
    n = int((time.time() - hours * 3600) * 1000)
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = _DIGITS[r] + digits
    return digits.rjust(8, "0") + tail


def plant(table: TableRef, src: str, txn: str, attempt: str | None = None) -> str:
    """A copy of data file `src` (real rows) under transaction `txn` (and task attempt)."""
    dst = re.sub(
        r"-tid-[0-9a-z]{16}-([0-9]+)", lambda m: f"-tid-{txn}-{attempt or m.group(1)}", src
    )
    assert dst != src
    data = table.read(src)
    assert data is not None
    table.write(dst, data)
    return dst


@pytest.fixture
def garbage_table(spark, any_table: TableRef, s3_client):
    """The table described in the module docstring; returns (table, expected garbage)."""
    table = any_table
    table.prepare(spark)
    df = spark.range(300, numPartitions=2).withColumn("k", (F.col("id") % 3).cast("int"))
    # The commit's clean-up of failed attempts runs in the background after the job returns: on
    # a busy machine it would delete the failed attempt planted below. Off for this write. And
    # no commit of this table writes a checkpoint (one in ten does, as its txn id decides),
    # which would make the creation's checkpoint garbage too.
    spark.conf.set("spark.txcommit.checkpoint.interval", "0")
    spark.conf.set("spark.txcommit.commit.cleanupAttempts", "false")
    try:
        df.write.partitionBy("k").parquet(table.url)
    finally:
        spark.conf.unset("spark.txcommit.commit.cleanupAttempts")
    (first,) = table.committed()
    src = sorted(k for k in table.data_files() if k.startswith("k=0/"))[0]
    old_txn = txn_started_hours_ago(72, "aaaaaaaa")
    aborted_txn = txn_started_hours_ago(50, "bbbbbbbb")
    young_txn = txn_started_hours_ago(0.1, "cccccccc")
    failed_attempt = plant(table, src, first, attempt="999999")
    old_file = plant(table, src, old_txn)
    aborted_file = plant(table, src, aborted_txn)
    table.write(f"_txcommit/pending/{old_txn}.json", b'{"state":"pending"}')
    table.write(f"_txcommit/aborted/{aborted_txn}.json", b'{"state":"aborted"}')
    magic = f"__magic_job-{old_txn}/1/__base/k=0/x.pending"
    table.write(magic, b"{}")
    upload_key = None
    if table.store != "local":
        upload_key = f"{table.prefix}/k=2/part-00009-tid-{old_txn}-7.c000.snappy.parquet"
        s3_client.create_multipart_upload(Bucket=table.bucket, Key=upload_key)
    mid = time.time() + PAUSE_S / 2
    time.sleep(PAUSE_S)
    young_file = plant(table, src, young_txn)
    table.write(f"_txcommit/pending/{young_txn}.json", b'{"state":"pending"}')
    # A dynamic overwrite of k=1: its old files are logically deleted now (young).
    with dynamic_overwrite(spark):
        spark.range(5).withColumn("k", F.lit(1)).write.mode("overwrite").partitionBy("k").parquet(
            table.url
        )
    spark.conf.unset("spark.txcommit.checkpoint.interval")
    committed_txns = set(table.committed())
    # Each write's row count is recorded just after its commit: let it land before the listing.
    assert table.row_counts(committed_txns) == {first: 300, (committed_txns - {first}).pop(): 5}
    expected = {
        failed_attempt,
        old_file,
        aborted_file,
        magic,
        f"_txcommit/pending/{old_txn}.json",
        f"_txcommit/aborted/{aborted_txn}.json",
        *(f"_txcommit/pending/{t}.json" for t in committed_txns),
    }
    if upload_key is not None:
        expected.add(upload_key[len(table.prefix) + 1 :])
    return GarbageTable(table, expected, young_file, mid)


def test_vacuum_deletes_exactly_the_garbage_past_the_horizon(
    spark, garbage_table: GarbageTable, server: ServerProcess
):
    g = garbage_table
    table, expected, young_file = g.table, g.expected, g.young_file
    rows_before = spark.read.parquet(table.url).count()
    assert rows_before == 200 + 5
    on_disk = set(table.objects())

    dry = vacuum(spark, table.url, retain_hours=g.retain_hours(), dry_run=True, force=True)
    dry_rows = dry.collect()
    assert {r["path"] for r in dry_rows} == expected
    assert not any(r["deleted"] for r in dry_rows) and set(table.objects()) == on_disk
    assert all(r["reason"] for r in dry_rows)

    # Runs here, once: a command, not a lazy query.
    result = vacuum(spark, table.url, retain_hours=g.retain_hours(), force=True)
    left = set(table.objects())
    done = result.collect()
    assert {r["path"] for r in done} == expected, "the rows of the one run that deleted"
    assert all(r["deleted"] for r in done)
    assert not (left & expected), "every listed item is gone"
    # Before deleting them, VACUUM fenced the two dead transactions (I19): a commit record that
    # commits nothing each, and for the one that may have been a replacing commit a replace/ one.
    # After deleting, it wrote a checkpoint of the log it left (I20).
    added = left - on_disk
    written = {k for k in added if k.startswith("_txcommit/checkpoints/")}
    assert len(written) == 1, added
    # The overwrite is younger than the horizon: nothing it replaced went, so no horizon is
    # recorded and every past snapshot still reads (I30; test_time_travel: one that is).
    assert not any(k.startswith("_txcommit/vacuum/") for k in added), added
    fences = added - written
    assert all(k.startswith(("_txcommit/commits/", "_txcommit/replace/")) for k in fences), fences
    assert len([k for k in fences if k.startswith("_txcommit/commits/")]) == 2, fences
    assert left - added == on_disk - expected, "nothing else was touched"
    assert young_file in left, "a young uncommitted txn may still be running: kept"
    assert not table.open_uploads()
    assert spark.read.parquet(table.url).count() == rows_before

    # A horizon below the safe minimum is refused unless forced.
    with pytest.raises(Exception, match="FORCE"):
        vacuum(spark, table.url, retain_hours=0).collect()
    forced = vacuum(spark, table.url, retain_hours=0, force=True).collect()
    removed = {f["path"] for r in table.committed().values() for f in r.get("removed", [])}
    young_marker = f"_txcommit/pending/{txn_of(young_file)}.json"
    deleted = {r["path"] for r in forced if r["kind"] != "checkpoint"}
    assert deleted == removed | {young_file, young_marker}
    # Checkpoints superseded by one published before the horizon go; newer ones stay.
    kept = [k for k in table.objects() if k.startswith("_txcommit/checkpoints/")]
    assert kept and all(r["path"] < min(kept) for r in forced if r["kind"] == "checkpoint")
    visible = {r["path"] for r in committed_files(spark, table.url).collect()}
    assert set(table.data_files()) == visible, "what is left is exactly what readers see"
    assert spark.read.parquet(table.url).count() == rows_before


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_history_lists_every_transaction(spark, garbage_table: GarbageTable):
    table, young_file = garbage_table.table, garbage_table.young_file
    df = history(spark, table.url)
    assert tuple(df.columns) == HISTORY_COLUMNS
    rows = {r["txn"]: r for r in df.collect()}
    committed = [r for r in rows.values() if r["state"] == "committed"]
    assert [r["operation"] for r in committed] == ["append", "overwrite-partitions"]
    append, overwrite = committed
    assert append["files"] == len(table.committed()[append["txn"]]["added"])
    assert append["sequence"] is None and append["rows"] == 300 and overwrite["rows"] == 5
    assert overwrite["sequence"] == 1 and overwrite["removedFiles"] > 0
    assert overwrite["removedBytes"] > 0 and overwrite["committedAt"] >= overwrite["startedAt"]
    states = {t: r["state"] for t, r in rows.items()}
    assert states[txn_of(young_file)] == "pending"
    assert sorted(states.values()).count("aborted") == 1


@pytest.mark.parametrize("any_table", ["local"], indirect=True)  # the CLI is store-agnostic
def test_cli_vacuum_dry_run_prints_a_table(garbage_table: GarbageTable, server: ServerProcess):
    table, expected = garbage_table.table, garbage_table.expected
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcommit.cli",
            "vacuum",
            table.url,
            "--remote",
            server.url,
            "--dry-run",
            "--force",
            "--retain-hours",
            f"{garbage_table.retain_hours():.8f}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stderr
    assert "would delete" in out.stdout and "reason" in out.stdout
    for path in expected:
        assert path in out.stdout
    assert set(table.objects()) >= expected, "a dry run deletes nothing"
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcommit.cli",
            "vacuum",
            table.url,
            "--remote",
            server.url,
            "--retain-hours",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1 and "FORCE" in bad.stderr


def test_vacuum_beside_a_running_job_fences_it_and_no_reader_sees_part_of_it(
    store_spark, any_table: TableRef, request: pytest.FixtureRequest
):
    """`VACUUM RETAIN 0 HOURS FORCE` while a job runs (its first task has written its file, the
    second is still working): VACUUM takes the job for dead, fences it and deletes its file.
    The job's commit must then lose to the fence and fail, and readers see none of it; without
    the fence it would commit a record naming a deleted file."""
    spark, table = store_spark, any_table
    table.prepare(spark)
    spark.range(100).write.parquet(table.url)
    (base,) = table.committed()

    job = SlowAppend(spark, table, start=100, seconds=25).start(known_txns={base})
    # On local files the data file exists from the moment the task opens it, and its mtime moves
    # while the task writes: a VACUUM in that moment rightly takes the job for alive. Let the
    # first task finish (the second works on for 25 s), so the job is silent past the horizon.
    time.sleep(2)
    other = new_session(
        request.getfixturevalue("server" if table.store == "local" else "cluster_server").url
    )
    try:
        ran, deleted = timed(lambda: vacuum(other, table.url, retain_hours=0, force=True).collect())
    finally:
        other.stop()
    # The job's written file (on s3-multipart: its upload, and its staging marker) went.
    assert any(txn_of(r["path"]) not in (None, base) for r in deleted), deleted
    error = job.join()
    assert_overlaps([job.span], [ran], 1, "a job beside VACUUM")
    assert error is not None, "the job must not commit"
    if table.store != "s3-multipart":
        assert "fenced by VACUUM" in str(error)
    # (On s3-multipart the job commit fails one step earlier: completing the aborted upload.)
    assert spark.read.parquet(table.url).count() == 100, "none of the fenced job"
    assert sorted(r["id"] for r in spark.read.parquet(table.url).collect()) == list(range(100))


#: Spark's Prometheus servlet on the driver's UI, as docs/operations.md configures it.
PROMETHEUS = {
    "spark.ui.enabled": "true",
    "spark.metrics.namespace": "txcommit_e2e",
    "spark.metrics.conf.*.sink.prometheusServlet.class": (
        "org.apache.spark.metrics.sink.PrometheusServlet"
    ),
    "spark.metrics.conf.*.sink.prometheusServlet.path": "/metrics/prometheus",
}


@pytest.fixture(scope="module")
def observed_server(workdir: Path) -> Iterator[tuple[ServerProcess, int]]:
    """A server that does not retry tasks (`local[2]`), serves its metrics to Prometheus (the
    driver UI's `/metrics/prometheus`) and deletes or checks even one file in a Spark job (whose
    progress its clients see), each of whose tasks first waits 600 ms, so that the job runs
    long: the server and its UI port."""
    ui = free_port()
    confs = {
        **PROMETHEUS,
        **FAULTS_ALLOWED,
        "spark.ui.port": str(ui),
        "spark.txcommit.maintenance.jobThreshold": "1",
        # Progress every 100 ms (default 2 s), and maintenance jobs of at least 600 ms: a
        # job shorter than the report interval may end before any report.
        "spark.connect.progress.reportInterval": "100ms",
        "spark.txcommit.test.pauseAt": "maintenance.task",
        "spark.txcommit.test.pauseMs": "600",
    }
    server = ServerProcess(workdir / "observed", master="local[2]", confs=confs)
    yield from ((s, ui) for s in running(server))


def scrape(ui_port: int) -> dict[str, float]:
    """txcommit's driver metrics as Prometheus scrapes them, by name (`commits_Count`, ...)."""
    with urllib.request.urlopen(f"http://localhost:{ui_port}/metrics/prometheus", timeout=30) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"metrics_txcommit_e2e_driver_txcommit_(\w+?)(?:\{[^}]*\})? (\S+)$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def test_a_job_vacuum_fenced_under_a_running_task_says_so_without_task_retries(
    observed_server: tuple[ServerProcess, int], workdir: Path
):
    """The same race on a server that does not retry tasks (`local[2]`): VACUUM deletes the
    file of the job's second task while it works. That task then finds its file gone; the job
    fails there, before any commit point, and must still say it was fenced (a scheduler
    retries a fence once and alerts), not that a file went missing."""
    server, ui = observed_server
    spark = new_session(server.url)
    txcommit.enable(spark)
    table = make_table("local", workdir)
    spark.range(100).write.parquet(table.url)
    (base,) = table.committed()
    before = scrape(ui)
    job = SlowAppend(spark, table, start=100, seconds=20).start(known_txns={base})
    time.sleep(2)  # the job is silent past a horizon of 0
    other = new_session(server.url)
    deleted = vacuum(other, table.url, retain_hours=0, force=True).collect()
    other.stop()
    assert any(txn_of(r["path"]) not in (None, base) for r in deleted), deleted
    error = job.join()
    assert isinstance(error, txcommit.FencedError), repr(error)[:3000]
    assert error.getCondition() == "TXCOMMIT_FENCED" and error.getSqlState() == "40000"
    assert "fenced by VACUUM" in str(error)
    assert spark.read.parquet(table.url).count() == 100, "none of the fenced job"
    after = scrape(ui)
    assert after["fences_Count"] - before["fences_Count"] == 1, "VACUUM fenced one transaction"
    assert after["fencedJobs_Count"] - before["fencedJobs_Count"] == 1, "one job met it"
    spark.stop()


def test_operators_scrape_commits_stages_reads_and_vacuum_from_prometheus(
    observed_server: tuple[ServerProcess, int], workdir: Path
):
    """The metrics of docs/operations.md, as Prometheus scrapes them from the driver: every
    commit counted and timed by stage, the log requests each read took, what VACUUM deleted."""
    server, ui = observed_server
    before = scrape(ui)
    names = {
        "commits_Count",
        "conflicts_Count",
        "stage_publish_commit_record_Count",
        "read_logRequests_Count",
        "vacuum_deletedFiles_Count",
    }
    assert names <= set(before), sorted(before)
    spark = new_session(server.url)
    txcommit.enable(spark)
    table = make_table("local", workdir)
    spark.range(10).write.parquet(table.url)
    spark.range(10).write.mode("append").parquet(table.url)
    assert spark.read.parquet(table.url).count() == 20
    bad = F.when(F.col("id") == 9, F.raise_error(F.lit("bad record 9"))).otherwise(F.col("id"))
    with pytest.raises(PySparkException, match="bad record 9"):  # its markers are garbage
        spark.range(0, 10, 1, 2).select(bad.alias("id")).write.mode("append").parquet(table.url)
    deleted = [
        r for r in vacuum(spark, table.url, retain_hours=0, force=True).collect() if r["deleted"]
    ]
    after = scrape(ui)
    spark.stop()
    assert after["commits_Count"] - before["commits_Count"] == 2
    assert (
        after["stage_publish_commit_record_Count"] - before["stage_publish_commit_record_Count"]
        == 2
    )
    assert after["read_logRequests_Count"] > before["read_logRequests_Count"], "the read counted"
    assert after["vacuum_deletedFiles_Count"] - before["vacuum_deletedFiles_Count"] == len(deleted)
    assert len(deleted) > 0


def test_vacuum_and_restore_report_their_progress_to_the_client(
    observed_server: tuple[ServerProcess, int], workdir: Path
):
    """Past `spark.txcommit.maintenance.jobThreshold` files (1 on this server), VACUUM deletes
    and RESTORE checks its files in a Spark job: the client's progress handler gets its tasks
    as they finish, and `txcommit vacuum --progress` draws them."""
    server, _ = observed_server
    spark = new_session(server.url)
    txcommit.enable(spark)
    table = make_table("local", workdir)
    # 250 files: the restore checks them in 3 tasks (100 a task) on 2 cores, so a report comes
    # while the third runs, after the first two finished.
    spark.range(0, 250, 1, 250).write.parquet(table.url)
    (first,) = table.committed()
    spark.range(5).write.mode("overwrite").parquet(table.url)
    ticks: list[tuple[int, int]] = []

    def seen(stages=None, inflight_tasks=0, operation_id=None, done=False):
        ticks.extend((s.num_tasks, s.num_completed_tasks) for s in stages or [])

    spark.registerProgressHandler(seen)
    (row,) = restore(spark, table.url, first).collect()
    assert row["restoredFiles"] == 250
    assert ticks and max(done for _, done in ticks) >= 1, "the restore's check reported its tasks"
    assert spark.read.parquet(table.url).count() == 250
    spark.clearProgressHandlers()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "txcommit.cli",
            "vacuum",
            table.url,
            "--remote",
            server.url,
            "--retain-hours",
            "0",
            "--force",
            "--progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert re.search(r"vacuuming .*: \d+ of \d+ task\(s\) done", run.stderr), run.stderr
    assert re.search(r"deleted [1-9]\d* item", run.stdout), run.stdout
    assert spark.read.parquet(table.url).count() == 250
    spark.stop()


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_a_removed_name_written_anew_is_another_file_shown_and_kept(
    spark, any_table: TableRef, local_s3: LocalS3
):
    """An overwrite removes `part-0.parquet`, written without txcommit; VACUUM deletes it; a
    plain writer writes `part-0.parquet` again. The new file is not the one the overwrite
    removed: Spark and the readers outside Spark show it, and VACUUM keeps it."""
    table = any_table
    table.prepare(spark)
    table.write("part-0.parquet", parquet_bytes([1, 2, 3]))
    first = time.time()
    spark.range(10, 15).write.mode("overwrite").parquet(table.url)
    assert sorted(r["id"] for r in spark.read.parquet(table.url).collect()) == list(range(10, 15))
    deleted = {r["path"] for r in vacuum(spark, table.url, retain_hours=0, force=True).collect()}
    assert "part-0.parquet" in deleted and table.read("part-0.parquet") is None

    while int(time.time()) == int(first):  # another second: the store's clock may keep seconds
        time.sleep(0.1)
    table.write("part-0.parquet", parquet_bytes([100, 101, 102]))
    expected = [*range(10, 15), 100, 101, 102]
    assert sorted(r["id"] for r in spark.read.parquet(table.url).collect()) == expected
    url, options = reader_target(table, local_s3)
    arrow = txcommit.dataset(url, storage_options=options).to_table()
    assert sorted(arrow["id"].to_pylist()) == expected

    deleted = {r["path"] for r in vacuum(spark, table.url, retain_hours=0, force=True).collect()}
    assert "part-0.parquet" not in deleted and table.read("part-0.parquet") is not None
    assert sorted(r["id"] for r in spark.read.parquet(table.url).collect()) == expected


@pytest.mark.parametrize("any_table", FEATURE_STORES, indirect=True)
def test_history_log_and_success_show_the_rows_spark_counted(
    spark, any_table: TableRef, local_s3: LocalS3, capsys, monkeypatch
):
    """Each committed write's rows, as Spark counted them (a retried task's rows once), are in
    TXCOMMIT HISTORY, `txcommit log` and `_SUCCESS`; a transaction Spark counted no rows for
    says so in the log instead of a bare dash."""
    table = any_table
    table.prepare(spark)
    first_attempt_fails = fail_first_attempt_at(170)
    df = spark.range(0, 240, 1, 3).select(first_attempt_fails("id").alias("id"))
    df.withColumn("k", (F.col("id") % 4).cast("int")).write.partitionBy("k").parquet(table.url)
    (append,) = table.committed()
    assert table.row_counts({append}) == {append: 240}
    assert table.success()["rows"] == 240 and table.success()["txn"] == append
    spark.range(7).withColumn("k", F.lit(9)).write.mode("overwrite").partitionBy("k").parquet(
        table.url
    )
    (overwrite,) = set(table.committed()) - {append}
    assert table.row_counts({overwrite}) == {overwrite: 7}
    assert table.success()["rows"] == 7
    # A transaction without a count (an older writer's, or a driver that died right after the
    # commit point): its count file is missing.
    table.delete(f"_txcommit/rows/{append}.json")
    rows = {r["txn"]: r["rows"] for r in history(spark, table.url).collect()}
    assert rows == {append: None, overwrite: 7}
    url, options = reader_target(table, local_s3)
    visible = {r["path"] for r in committed_files(spark, table.url).collect()}
    logged = cli_history(url, options, visible, capsys, monkeypatch)
    assert {r["txn"]: r["rows"] for r in logged} == {append: None, overwrite: 7}
    assert log_main([url, *(["--endpoint", options["endpoint"]] if options else [])]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "not counted" in next(line for line in lines if append in line)
    assert " 7 " in next(line for line in lines if overwrite in line)
