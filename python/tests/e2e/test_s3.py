"""S3 specifics, end to end on a real S3 endpoint (moto over HTTP) through Hadoop's S3A:
what a commit costs in store requests, an endpoint that lies about If-None-Match, credentials
kept out of logs, records and errors, and the one-machine quick start."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import txcommit
from txcommit_store_s3 import DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.s3 import LYING_BUCKET, TEST_BUCKET
from support.servers import READY_MARK, ServerProcess, new_session, server_python
from support.tables import TableRef, make_table, txn_of
from support.waiting import wait_for


def write(spark, table: TableRef, files: int) -> None:
    spark.range(0, 20_000, 1, files).write.mode("append").parquet(table.url)


def requests_during(local_s3: LocalS3, action) -> list[dict]:
    assert local_s3.front is not None
    start = len(local_s3.front.log.since(0))
    action()
    return local_s3.front.log.since(start)


def job_commit_requests(entries: list[dict], table: TableRef, txn: str) -> dict[str, int]:
    """The job commit's requests to ``table`` as the endpoint served them, by operation: those
    of transaction ``txn`` after the last request of a task (a data file written or read back,
    an upload's part, S3A's staging marker; the driver commits once every task has finished) up
    to the PUT of `_SUCCESS`, which ends the commit. (A write's derived work may still run
    after its `_SUCCESS`: the rows Spark counted, added to it.)"""
    mine = [e for e in entries if key_of(e).startswith(table.prefix + "/")]
    marker = f"/_txcommit/pending/{txn}.json"
    began = next(i for i, e in enumerate(mine) if e["key"].endswith(marker))
    end = next(
        i
        for i, e in enumerate(mine)
        if i > began and e["op"] == "PUT" and e["key"].endswith("/_SUCCESS")
    )
    tasks = [
        i
        for i, e in enumerate(mine[:end])
        if e["op"] != "MULTIPART_COMPLETE" and ("__magic" in e["key"] or "/part-" in e["key"])
    ]
    return dict(Counter(e["op"] for e in mine[max([began, *tasks]) + 1 : end]))


def key_of(entry: dict) -> str:
    """The key a request names (a LIST: its prefix), with a slash after it."""
    return f"{entry['key'] or entry.get('prefix', '')}/"


@pytest.mark.parametrize("store", ["s3", "s3-multipart"])
def test_commit_requests_do_not_grow_with_the_number_of_files(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """Counted at the endpoint: a job commit's requests are the same for 4 and 40 files, except
    one multipart completion per file in `s3-multipart` mode. The `_SUCCESS` summary's count
    is what the endpoint served, for a table's first write too: its second look for other
    tables (docs/protocol.md, I18) is made in job setup, before the tasks."""
    costs = {}
    for files in (4, 40):
        table = make_table(store, workdir, s3_client)
        table.prepare(spark)
        for first in (True, False):
            entries = requests_during(local_s3, lambda t=table, n=files: write(spark, t, n))
            served = job_commit_requests(entries, table, table.success()["txn"])
            counted = table.success()["jobCommitRequests"]
            summary = Counter({k: v for k, v in counted.items() if k != "adapter"})
            assert served == dict(summary), (first, served, summary)
        assert len(table.data_files()) == 2 * files
        costs[files] = served
    completes = {k: costs[k].pop("MULTIPART_COMPLETE", 0) for k in costs}
    assert completes == ({4: 4, 40: 40} if store == "s3-multipart" else {4: 0, 40: 0}), completes
    assert costs[4] == costs[40], costs
    # The schema guard lists commits/ and replace/; then the record is one PUT.
    assert costs[4] == {"LIST": 2, "PUT": 1}, costs


def test_conditional_put_job_copies_and_deletes_no_data_object(
    spark, workdir: Path, s3_client, local_s3: LocalS3
):
    """Measured at the endpoint, executors included: data files are PUT once where they stay."""
    table = make_table("s3", workdir, s3_client)
    table.prepare(spark)
    write(spark, table, 8)  # the first job also probes the bucket; measure a later one
    seen = requests_during(local_s3, lambda: write(spark, table, 8))
    mine = [r for r in seen if r["key"].startswith(table.prefix + "/")]
    data = [r for r in mine if txn_of(r["key"])]
    ops = {r["op"] for r in data}
    assert ops <= {
        "PUT",
        "HEAD",
        "GET",
        "MULTIPART_INITIATE",
        "MULTIPART_PART",
        "MULTIPART_COMPLETE",
    }, ops
    assert not [r for r in mine if r["op"] in ("COPY", "MULTIPART_PART_COPY")], "nothing copied"
    assert not [r for r in data if r["op"] in ("DELETE", "DELETE_BULK")], "no data deleted"
    assert sum(r["op"] == "PUT" for r in data) == 8, "each data file written once"
    assert spark.read.parquet(table.url).count() == 40_000


#: What one more data file costs, per adapter: one PUT; or the multipart upload the job
#: commit completes (start, one part, completion).
ONE_FILE = {
    "s3": Counter({"PUT": 1}),
    "s3-multipart": Counter(
        {"MULTIPART_INITIATE": 1, "MULTIPART_PART": 1, "MULTIPART_COMPLETE": 1}
    ),
}


@pytest.mark.parametrize("store", ["s3", "s3-multipart"])
def test_a_data_file_costs_one_put_and_no_probe(
    spark, store: str, workdir: Path, s3_client, local_s3: LocalS3
):
    """Measured at the endpoint, executors included: a data file is one PUT (or one multipart
    upload, completed by the job commit), with no probe before it (no two writes share a name)
    and no HEAD or read after it (its size is the bytes the writer sent, which S3
    acknowledged). 36 more files cost 36 times that and not one request more; each file's size
    in the record is the object's."""
    assert local_s3.front is not None
    log = local_s3.front.log
    table = make_table(store, workdir, s3_client)
    table.prepare(spark)
    # The clean-up of failed attempts lists after a job returned: not in the next job's count.
    spark.conf.set("spark.txcommit.commit.cleanupAttempts", "false")
    # About one commit in ten also writes a checkpoint (its records read, one PUT), chosen by
    # its txn id: a cost that does not depend on the job's files, in one count and not the other.
    spark.conf.set("spark.txcommit.checkpoint.interval", "0")

    def late(r: dict) -> bool:
        """Work a job does in the background after it returned, which may fall on either side
        of the job's end: Spark counts a write's rows then, and txcommit records them
        (_SUCCESS, rows/<txn>.json); with s3-multipart, the clean-up of open uploads (a listing
        of uploads, then of the markers of earlier versions)."""
        return (
            any(m in r["key"] for m in ("/_SUCCESS", "/_txcommit/rows/"))
            # The count's writer asks whether the commit's record is still there (a table
            # dropped meanwhile gets no count), before and after it writes.
            or (r["op"] == "HEAD" and "/_txcommit/commits/" in r["key"])
            or r["op"] == "MULTIPART_LIST"
            or "/__magic_job-" in r.get("prefix", "")
        )

    def settled(start: int) -> None:
        wait_for(
            lambda: {f"_txcommit/rows/{t}.json" for t in table.committed()} <= set(table.objects()),
            30,
            "the row count recorded",
        )
        if store == "s3-multipart":
            wait_for(
                lambda: any("/__magic_job-" in r.get("prefix", "") for r in log.since(start)),
                30,
                "the clean-up of the job's open uploads",
            )

    def measured(files: int) -> Counter:
        start = len(log.since(0))
        seen = requests_during(local_s3, lambda: write(spark, table, files))
        settled(start)
        return Counter(r["op"] for r in seen if r["status"] < 300 and not late(r))

    write(spark, table, 2)  # the first job also probes the bucket; measure later ones
    settled(0)
    costs = {files: measured(files) for files in (4, 40)}
    extra = costs[40] - costs[4]
    assert extra == Counter({op: 36 * n for op, n in ONE_FILE[store].items()}), costs
    assert not costs[4] - costs[40], costs
    listed = s3_client.list_objects_v2(Bucket=table.bucket, Prefix=table.prefix + "/")
    sizes = {o["Key"][len(table.prefix) + 1 :]: o["Size"] for o in listed["Contents"]}
    named = {f["path"]: f["size"] for rec in table.committed().values() for f in rec["added"]}
    assert len(named) == 46 and all(sizes[p] == n for p, n in named.items()), (named, sizes)
    assert not table.open_uploads()
    assert spark.read.parquet(table.url).count() == 60_000


def test_multipart_data_is_invisible_to_a_raw_listing_until_the_commit(
    spark, workdir: Path, s3_client, local_s3: LocalS3
):
    """While uploads are in flight, or done but not completed by the job commit, a raw listing
    of the table (boto3 here; any tool) shows no data file."""
    import threading

    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    table = make_table("s3-multipart", workdir, s3_client)
    table.prepare(spark)

    @F.udf(returnType=LongType(), useArrow=False)  # explicit: no lookup via the active session
    def slow_tail(i):
        import time

        if i >= 15_000 and i % 1000 == 0:  # the last tasks run well after the first finished
            time.sleep(0.5)
        return i

    assert local_s3.front is not None
    log = local_s3.front.log
    # (request-log length before the listing, after it, the data files it listed)
    listings: list[tuple[int, int, list[str]]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            before = len(log.since(0))
            files = table.data_files()
            listings.append((before, len(log.since(0)), files))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        spark.range(0, 20_000, 1, 4).select(slow_tail("id").alias("id")).write.parquet(table.url)
    finally:
        done.set()
        watcher.join()

    requests = log.since(0)
    mine = [(i, r) for i, r in enumerate(requests) if r["key"].startswith(table.prefix + "/")]
    first_part = min(i for i, r in mine if r["op"] == "MULTIPART_PART")
    first_complete = min(i for i, r in mine if r["op"] == "MULTIPART_COMPLETE")
    # The endpoint logs a request once it is done, so a completion may take effect before its
    # entry. A listing is surely in flight if it began after a part was logged and ended before
    # the last part the job sent ahead of its first completion was logged (the commit, and so
    # every completion, comes after that part's answer).
    last_part = max(i for i, r in mine if r["op"] == "MULTIPART_PART" and i < first_complete)
    in_flight = [files for start, end, files in listings if first_part < start and end <= last_part]
    assert len(in_flight) >= 3, "the table was listed while uploads were in flight"
    assert all(not files for files in in_flight), "no in-flight data file is ever listed"
    assert len(table.data_files()) == 4
    # The job returns before its clean-up (docs/protocol.md, I5), which then removes the
    # markers of the uploads; the uploads themselves were all completed by the commit.
    assert not table.open_uploads()
    wait_for(
        lambda: not [k for k in table.objects() if k.startswith("__magic")], 30, "markers removed"
    )
    assert spark.read.parquet(table.url).count() == 20_000


def test_an_endpoint_that_ignores_if_none_match_is_refused(spark, workdir: Path, lying_s3):
    url = f"s3a://{LYING_BUCKET}/liar-{workdir.name}"
    txcommit.enable(spark)
    with pytest.raises(Exception) as info:
        spark.range(10).write.parquet(url)
    message = str(info.value)
    assert lying_s3.endpoint in message and "If-None-Match" in message, message
    assert "spark.txcommit.s3.verifyConditionalPut=false" in message
    assert DUMMY_SECRET not in message
    keys = [r["key"] for r in lying_s3.front.log.since(0) if r["op"] == "PUT"]
    assert not [k for k in keys if txn_of(k)], "refused before any data file was written"
    # The user's explicit, documented choice to trust the endpoint anyway:
    spark.conf.set("spark.txcommit.s3.verifyConditionalPut", "false")
    spark.range(10).write.parquet(url)
    assert spark.read.parquet(url).count() == 10


@pytest.mark.parametrize("store", ["s3", "s3-multipart"])
def test_credentials_never_reach_logs_records_or_summaries(
    spark, server: ServerProcess, store: str, workdir: Path, s3_client
):
    any_table = make_table(store, workdir, s3_client)
    any_table.prepare(spark)
    spark.range(100).write.parquet(any_table.url)
    # The multipart adapter's pending summaries go in the background clean-up after the job
    # returned; read the table once they are gone, so every listed object is still there.
    wait_for(lambda: not [k for k in any_table.objects() if "__magic" in k], 60, "clean-up")
    for key in any_table.objects():
        data = any_table.read(key)
        assert data is not None and DUMMY_SECRET.encode() not in data, key
    log = re.search(r"\(log: (.+)\)", "".join(server.output))
    assert log, "the server prints where its log is"
    text = Path(log.group(1)).read_text(errors="replace")
    assert "fs.s3a.secret.key" in text, "the log does mention the conf..."
    assert DUMMY_SECRET not in text, "...but never its value"


def test_server_store_s3_quick_start(workdir: Path):
    """The README's one-machine S3 quick start: `txcommit server --store s3 --local` starts its
    own local S3 endpoint; a JVM-less client writes and reads s3a://txcommit/ through it."""
    proc = ServerProcess(workdir / "quick-start", extra_args=["--store", "s3", "--local"])
    proc.start()
    try:
        out = "".join(proc.output)
        assert "local S3 (moto) at http://127.0.0.1:" in out and READY_MARK in out
        spark = new_session(proc.url)
        txcommit.enable(spark)
        spark.range(1000).write.parquet("s3a://txcommit/quick")
        assert spark.read.parquet("s3a://txcommit/quick").count() == 1000
        spark.stop()
    finally:
        proc.stop()
    cli = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "jars", "--store", "s3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "hadoop-aws-3.5.0.jar" in cli.stdout and "bundle-" in cli.stdout
    assert TEST_BUCKET  # the shared endpoint is untouched by this server
