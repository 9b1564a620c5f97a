"""Requests that took effect but whose answers were lost, on a real S3 endpoint.

The local S3 endpoint applies a matching request and then drops the connection without
answering (``txcommit local-s3 --lose-response``); S3A's SDK resends it, and the resend meets
what its first attempt created: for ``If-None-Match: *``, a 412 although the object is the
writer's own. Publishing must be idempotent: a job whose record landed is committed, once,
whatever the answers said (docs/protocol.md, I17).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import TEST_BUCKET
from support.scale import SOAK
from support.streams import assert_each_value_once, configure, rate_to_parquet, run_until_batch
from support.tables import WRITE_ID, TableRef, make_table, replace_records
from support.waiting import wait_for

S3_STORES = ["s3", "s3-multipart"]


def lose(local_s3: LocalS3, pattern: str, count: int = 1, fail_read_back: bool = False) -> None:
    assert local_s3.front is not None
    local_s3.front.lose.arm(pattern, count, fail_read_back)


def lost(local_s3: LocalS3) -> list[str]:
    return list(disarm(local_s3)["lost"])


def disarm(local_s3: LocalS3) -> dict[str, Any]:
    """The fault's state (what it lost and refused), then disarms what is left."""
    assert local_s3.front is not None
    state = local_s3.front.lose.state()
    local_s3.front.lose.arm("", 0)
    return state


def log_key(table: TableRef, area: str) -> str:
    return f"PUT {TEST_BUCKET}/{table.prefix}/_txcommit/{area}/"


@pytest.mark.parametrize("store", S3_STORES)
def test_an_append_whose_record_answer_was_lost_succeeds_and_commits_once(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    spark.range(10).write.mode("append").parquet(table.url)  # the bucket probe, done once
    lost(local_s3)
    lose(local_s3, log_key(table, "commits"))
    spark.range(100_000).write.mode("append").parquet(table.url)  # must not report a failure
    assert [k for k in lost(local_s3) if "/_txcommit/commits/" in k], "the fault was injected"
    assert spark.read.parquet(table.url).count() == 100_010
    assert len(table.committed()) == 2


@pytest.mark.parametrize("store", S3_STORES)
def test_a_write_id_run_whose_record_answer_was_lost_keeps_its_own_rows(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """The first run of a write id whose `replace/` record landed unanswered: its resend meets
    the record. Counting it as an earlier run of the write id would remove the job's own files."""
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    load = spark.range(1000).withColumn("k", F.col("id") % 4)
    load.limit(10).write.mode("append").parquet(table.url)  # the table's columns, as the load's
    lost(local_s3)
    lose(local_s3, log_key(table, "replace"))
    load.write.option(WRITE_ID, "load-2026-11-23").mode("append").parquet(table.url)
    assert [k for k in lost(local_s3) if "/_txcommit/replace/" in k], "the fault was injected"
    (record,) = replace_records(table)
    assert record["removed"] == [], "a first run removes nothing"
    assert spark.read.parquet(table.url).count() == 1010
    # A re-run of the same write id replaces the first run's rows, and only those.
    load.write.option(WRITE_ID, "load-2026-11-23").mode("append").parquet(table.url)
    assert spark.read.parquet(table.url).count() == 1010
    assert len(replace_records(table)) == 2


@pytest.mark.parametrize("store", S3_STORES)
def test_a_commit_whose_answer_and_read_back_failed_is_unknown_and_a_rerun_settles_it(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """The `replace/` record of a write-id run lands, its answer is lost, and every read of it
    fails (`--fail-read-back`): the job cannot tell whether it committed. The client gets
    CommitOutcomeUnknownError (40003), and the re-run the error advises, with the same write
    id, leaves the load's rows in the table exactly once."""
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    load = spark.range(1000).withColumn("k", F.col("id") % 4)
    load.limit(10).write.mode("append").parquet(table.url)  # the table's columns, as the load's
    lost(local_s3)
    lose(local_s3, log_key(table, "replace"), fail_read_back=True)
    with pytest.raises(txcommit.CommitOutcomeUnknownError) as caught:
        load.write.option(WRITE_ID, "load-7").mode("append").parquet(table.url)
    fault = disarm(local_s3)
    assert [k for k in fault["lost"] if "/_txcommit/replace/" in k], "the answer was lost"
    assert [k for k in fault["refused"] if "/_txcommit/replace/" in k], "the read-back failed"
    error = caught.value
    assert (error.getCondition(), error.getSqlState()) == (
        "TXCOMMIT_COMMIT_OUTCOME_UNKNOWN",
        "40003",
    )
    assert "same write id" in str(error)
    # It did land (the endpoint applied the request): the table holds the load once.
    assert spark.read.parquet(table.url).count() == 1010
    load.write.option(WRITE_ID, "load-7").mode("append").parquet(table.url)
    assert spark.read.parquet(table.url).count() == 1010, "the re-run replaced the first run"
    first, rerun = replace_records(table)
    assert first["writeId"] == rerun["writeId"] == "load-7"
    assert {r["path"] for r in rerun["removed"]} == {f["path"] for f in first["added"]}


#: The streaming query runs on the `s3` adapter in CI; the soak adds `s3-multipart` (a
#: micro-batch's record is published the same way on both).
STREAM_STORES = S3_STORES if SOAK else ["s3"]


@pytest.mark.parametrize("store", STREAM_STORES)
def test_a_stream_whose_checkpoint_and_record_answers_were_lost_runs_on_exactly_once(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """Offsets and commit log files of the checkpoint, and the sink's commit record, each lose
    one answer; the query keeps running and every row lands exactly once."""
    ckpt = make_table(store, workdir, s3_client)
    out = make_table(store, workdir, s3_client)
    out.prepare(spark)
    configure(spark, store)
    lost(local_s3)
    lose(
        local_s3,
        rf"PUT {TEST_BUCKET}/({ckpt.prefix}/(offsets|commits)/1|{out.prefix}/_txcommit/commits/)",
        count=3,
    )
    run_until_batch(rate_to_parquet(spark, ckpt.url, out.url), 4)
    answers = lost(local_s3)
    assert len(answers) == 3, answers
    assert_each_value_once(spark, out.url)


@pytest.mark.parametrize("store", ["s3-multipart"])  # the adapter that completes uploads
def test_a_job_whose_upload_completion_answer_was_lost_succeeds_and_commits_once(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """`s3-multipart` publishes a data file by completing its upload at job commit. S3 applied
    the completion; its answer was lost, and the SDK resends it to an upload that no longer
    exists. The job must commit, once, with every file whole."""
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    spark.range(10).write.mode("append").parquet(table.url)  # the bucket probe, done once
    lost(local_s3)
    lose(local_s3, rf"MULTIPART_COMPLETE {TEST_BUCKET}/{table.prefix}/part-")
    spark.range(100_000).repartition(4).write.mode("append").parquet(table.url)
    assert [k for k in lost(local_s3) if "/part-" in k], "the fault was injected"
    assert spark.read.parquet(table.url).count() == 100_010
    assert len(table.committed()) == 2
    assert not table.open_uploads()


#: The data requests whose answers are lost: a data file's PUT; a multipart upload's start (its
#: resend starts a second upload of the key, which must not stay open) and a part.
DATA_REQUESTS = {"s3": "PUT", "s3-multipart": "(MULTIPART_INITIATE|MULTIPART_PART)"}


@pytest.mark.parametrize("store", S3_STORES)
def test_data_files_whose_answers_were_lost_are_committed_whole_with_their_sizes(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """A data file's request lands but its answer is lost: S3A's client resends it. The task
    takes the file's size from the bytes its writer sent, without asking S3 (docs/protocol.md,
    I19), so what it names must be the object in place, whole: every named file exists with
    the size the record gives, every row is read once, and no upload is left open."""
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    df = spark.range(0, 30_000, 1, 6).withColumn("k", F.col("id") % 3)
    df.limit(10).write.mode("append").partitionBy("k").parquet(table.url)  # the bucket probe
    (first,) = table.committed()
    lost(local_s3)
    lose(local_s3, rf"{DATA_REQUESTS[store]} {TEST_BUCKET}/{table.prefix}/k=\d/part-", count=3)
    df.write.mode("append").partitionBy("k").parquet(table.url)
    assert len(lost(local_s3)) == 3, "the fault was injected"
    listed = s3_client.list_objects_v2(Bucket=table.bucket, Prefix=table.prefix + "/")
    sizes = {o["Key"][len(table.prefix) + 1 :]: o["Size"] for o in listed["Contents"]}
    (record,) = [r for t, r in table.committed().items() if t != first]
    named = {f["path"]: f["size"] for f in record["added"]}
    assert len(named) == 18 and all(sizes.get(p) == n for p, n in named.items()), (named, sizes)
    ids = [r["id"] for r in spark.read.parquet(table.url).collect()]
    assert sorted(ids) == sorted([*range(10), *range(30_000)])
    # The job's clean-up, after it returned, aborts the second uploads of resent starts.
    wait_for(lambda: not table.open_uploads(), 60, "no upload left open")
