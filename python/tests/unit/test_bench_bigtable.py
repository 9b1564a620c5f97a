"""The bigtable section of ``txcommit bench``: its synthesised log, what it refuses, its report."""

from __future__ import annotations

from typing import Any

import pytest

from txcommit.bench.bigtable import StackSampler, _data_requests
from txcommit.bench.bigtable_report import bigtable_targets
from txcommit.bench.main import build_parser, merge, sizes_from
from txcommit.bench.reads import Table
from txcommit.bench.report import _notes_on_targets, render
from txcommit.bench.synth import big_table
from txcommit.table.checkpoints import decode_checkpoint
from txcommit.table.layout import LogLayout, txn_of_record_name
from txcommit.table.names import txn_of
from txcommit.table.records import decode_record

from support.bench import report_meta


def test_the_big_table_is_its_creation_checkpoint_then_one_record_per_append():
    out = list(big_table("run/big", 3, 20, 10, 887, 1_700_000_000_000, seed="s"))
    key, names, data = out[0]
    assert names == [] and decode_checkpoint(data, key, 1).log_only
    seen: set[str] = set()
    for key, names, data in out[1:]:
        txn = txn_of_record_name(key.rpartition("/")[2])
        assert txn is not None and key == LogLayout("run/big").commit_record(txn)
        record = decode_record(data, key, txn)  # strict: what the JVM accepts
        assert [f.path for f in record.added] == names and len(names) == 20
        assert {f.size for f in record.added} == {887}
        # two tasks, each one file in each of the 10 directories p=0 .. p=9
        assert sorted({n.split("/")[0] for n in names}) == sorted(f"p={k}" for k in range(10))
        assert all(txn_of(n.rpartition("/")[2]) == txn for n in names)
        seen |= set(names)
    assert len(seen) == 60, "every file of the table has its own name"


def test_bigtable_runs_only_when_asked_for_at_a_million_files():
    assert sizes_from(build_parser().parse_args([])).bigtable_commits == 0
    assert sizes_from(build_parser().parse_args(["--quick"])).bigtable_commits == 0
    sizes = sizes_from(build_parser().parse_args(["--only", "bigtable"]))
    assert (sizes.bigtable_commits, sizes.bigtable_files_per_commit) == (1000, 1000)
    assert sizes.files == [] and sizes.read_txns == [] and sizes.seed_rows == 0
    assert not sizes.large_files
    sizes = sizes_from(
        build_parser().parse_args(
            ["--only", "bigtable", "--bigtable-commits", "5", "--bigtable-files-per-commit", "7"]
        )
    )
    assert (sizes.bigtable_commits, sizes.bigtable_files_per_commit) == (5, 7)


def _stack(state: str, *frames: str) -> str:
    lines = [f'"worker" #1 prio=5\n   java.lang.Thread.State: {state}']
    return "\n".join(lines + [f"\tat {f}" for f in frames])


def test_a_busy_thread_is_counted_where_its_stack_is():
    s = StackSampler(0)
    decode = _stack(
        "RUNNABLE",
        "com.fasterxml.jackson.databind.node.ArrayNode.add(ArrayNode.java:1)",
        *["com.fasterxml.jackson.databind.deser.std.JsonNodeDeserializer.x(J.java:1)"] * 20,
        "io.txcommit.table.CheckpointCodec$.decode(CheckpointCodec.scala:49)",
    )
    assert s.classify(decode) == "checkpoint JSON decode"
    socket = _stack(
        "RUNNABLE",
        "sun.nio.ch.NioSocketImpl.read(NioSocketImpl.java:1)",
        "org.apache.hadoop.fs.s3a.S3AInputStream.read(S3AInputStream.java:1)",
        "io.txcommit.table.CheckpointStore.read(CheckpointStore.scala:1)",
    )
    assert s.classify(socket) == "store read (socket)"
    other = _stack("RUNNABLE", "io.txcommit.spark.ReadRules$.plan(ReadRules.scala:1)")
    assert s.classify(other) == "other: io.txcommit.spark.ReadRules$.plan"
    # waiting threads and threads of neither txcommit nor Spark SQL are not work
    assert s.classify(_stack("WAITING", "io.txcommit.x.Y.z(Y.scala:1)")) is None
    idle = _stack("RUNNABLE", "io.netty.channel.epoll.Native.epollWait(Native.java:1)")
    assert s.classify(idle) is None


def test_a_plan_that_asks_for_a_data_file_that_is_not_an_object_is_refused():
    big = Table("txcommit", "run/big", 2, 1, "bench")
    log = [
        {"op": "HEAD", "key": "run/big/_txcommit", "status": 404},  # the probe of the log
        {"op": "GET", "key": "run/big/_txcommit/checkpoints/2.json", "status": 200},
    ]
    ok = [{"op": "HEAD", "key": "run/big/p=0/part-00000-tid-x-0.parquet", "status": 200}]
    assert _data_requests(log + ok + ok, big) == {"HEAD": 2}
    missing = [{"op": "GET", "key": "run/big/p=3/part-00000-tid-y-0.parquet", "status": 404}]
    with pytest.raises(RuntimeError, match="p=3/part-00000-tid-y-0.parquet"):
        _data_requests(log + missing, big)


def _row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "store": "s3",
        "commits": 1000,
        "files_per_commit": 1000,
        "files": 1_000_000,
        "partitions": 100,
        "driver_memory": "4g",
        "synthesis": {"objects": 3001, "data_objects": 2000, "record_bytes": 100_000_000,
                      "encode_s": 20.0, "put_s": 30.0},
        "checkpoint": {
            "seconds": 12.5, "bytes": 105_000_000, "key": "2.json",
            "heap_before_mb": 120.0, "heap_peak_mb": 1500.0, "heap_after_gc_mb": 400.0,
            "requests": {"GET": 1001, "LIST": 3, "PUT": 1}, "log_requests": {},
            "profile": {"samples": 12, "busy": {"checkpoint JSON encode": 5}},
        },
        "spark": {
            "cold": {"plan_s": 20.0, "schema_s": 15.0, "files": 1_000_000,
                     "requests": {"GET": 2}, "log_requests": {"GET checkpoints": 1},
                     "profile": {"samples": 20, "busy": {"checkpoint JSON decode": 9}}},
            "warm": {"plan_s": 6.0, "schema_s": 3.0, "samples": [6.0, 6.1, 5.9],
                     "files": 1_000_000, "requests": {"LIST": 3}, "log_requests": {}},
            "heap_before_mb": 125.0, "heap_peak_mb": 2600.0, "heap_after_gc_mb": 900.0,
            "heap_histogram": [
                {"class": "[B", "instances": 21_000_000, "mb": 1376},
                {"class": "org.apache.hadoop.fs.FileStatus", "instances": 4_000_006, "mb": 305},
            ],
        },
        "python": {"cold": {"plan_s": 30.0, "files": 1_000_000},
                   "warm": {"plan_s": 9.0, "samples": [9.0], "files": 1_000_000},
                   "profile": {"total_s": 40.0, "json.loads": 4.0}, "max_rss_mb": 3000.0},
        "data_requests": {"GET": 1, "HEAD": 1},
        "elapsed_s": 900.0,
    }  # fmt: skip
    row.update(changes)
    return row


def test_each_target_of_the_big_table_is_held_or_missed_with_its_measurement():
    found = {t["target"].split(" (")[0]: t for t in bigtable_targets({"bigtable": [_row()]})}
    assert set(found) == {
        "cold plan <= 5 s",
        "warm plan <= 1 s",
        "checkpoint write <= 10 s",
        "driver heap <= 2 GB",
        "Python reader within 2x of Spark, cold and warm",
    }
    cold = found["cold plan <= 5 s"]
    assert cold["held"] is False
    assert cold["value"] == "20.00 s (to the schema 15.00 s, `inputFiles()` 5.00 s)"
    assert "105 MB JSON checkpoint" in cold["why"] and "checkpoint JSON decode 9" in cold["why"]
    assert found["checkpoint write <= 10 s"]["held"] is False
    assert "checkpoint JSON encode 5" in found["checkpoint write <= 10 s"]["why"]
    heap = found["driver heap <= 2 GB"]
    assert heap["held"] is False and heap["value"].startswith("peak in use 2600 MB")
    assert "after a full GC 900 MB" in heap["value"]
    # four plans made, four file lists kept: the histogram says so
    assert "4.0 `FileStatus` per file of the table after 4 plans" in heap["why"]
    assert "each plan's file list stays reachable" in heap["why"]
    shared = _row()
    shared["spark"]["heap_histogram"][1]["instances"] = 1_000_003
    (heap,) = [t for t in bigtable_targets({"bigtable": [shared]}) if "heap" in t["target"]]
    assert "1.0 `FileStatus` per file of the table after 4 plans of it: the plans" in heap["why"]
    py = found["Python reader within 2x of Spark, cold and warm"]
    assert py["held"] is True and py["value"].startswith("cold 1.50x (30.00 s vs 20.00 s)")
    # a miss is explained among the notes, with what dominated
    notes = "\n".join(_notes_on_targets({"bigtable": [_row()]}))
    assert f"Missed, {cold['target']}: {cold['why']}" in notes
    slow = _row(python={**_row()["python"], "warm": {"plan_s": 13.0, "samples": [13.0],
                                                     "files": 1_000_000}})  # fmt: skip
    (py,) = [t for t in bigtable_targets({"bigtable": [slow]}) if "Python" in t["target"]]
    assert py["held"] is False and "warm 2.17x" in py["value"]


def test_the_big_table_has_its_section_and_merges_by_its_size():
    meta = report_meta()
    text = render({"meta": meta, "bigtable": [_row()]}, [])
    assert "## A table of a million files (S3, synthesised log, checkpointed)" in text
    assert "| 1,000,000 | 1,000 x 1,000 | 105,000,000 | 12.50 | 20.00 (15.00) |" in text
    assert "Apache Iceberg" in text and "Delta Lake" in text
    earlier = {"meta": meta, "bigtable": [_row(), _row(commits=10, files=10_000)]}
    again = {"meta": {**meta, "date": "e"}, "bigtable": [_row(elapsed_s=1.0)]}
    merged = merge(earlier, again)
    assert [(r["commits"], r["elapsed_s"], r["run"]) for r in merged["bigtable"]] == [
        (1000, 1.0, "B"),
        (10, 900.0, "A"),
    ]
    assert "a synthesised table of 1,000,000 files" in merged["runs"][1]["covers"]


def test_the_live_heap_is_read_by_class_largest_first():
    from txcommit.bench.bigtable import parse_histogram

    text = """12345:
 num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:       2000000      104857600  [B (java.base@17.0.9)
   2:       1000000      314572800  org.apache.hadoop.fs.Path
   3:             5            100  java.lang.Object (java.base@17.0.9)
Total       3000005      419430500
"""
    assert parse_histogram(text, 2) == [
        {"class": "org.apache.hadoop.fs.Path", "instances": 1_000_000, "mb": 300},
        {"class": "[B", "instances": 2_000_000, "mb": 100},
    ]
