"""`txcommit bench` in small, in-process pieces (the full run is `txcommit bench`, the smoke run
`txcommit bench --quick` in CI): the latency model charges what it says per request and per
byte copied, the endpoint's request log feeds the request tables, and the report says which
targets hold and which are missed."""

from __future__ import annotations

from pathlib import Path

import pytest

from txcommit.bench.report import grouped, render, targets
from txcommit.bench.runner import is_data_key, summarise_requests
from txcommit.devkit.latency_model import MB, S3_COPY_MB_PER_S, S3_FIGURES, by_name, s3_model
from txcommit_store_s3 import DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

from support.bench import report_meta


def test_latency_model_delays_each_request_by_operation_and_copied_bytes():
    slept: list[float] = []
    model = s3_model(sleep=slept.append)
    figures = {op: ms / 1000 for op, ms, _ in S3_FIGURES}
    import boto3

    with LocalS3(latency=model) as s3:
        s3.create_bucket("bench-test")
        client = boto3.client(
            "s3",
            endpoint_url=s3.endpoint,
            region_name="us-east-1",
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_SECRET,
        )
        slept.clear()
        assert s3.front is not None
        mark = len(s3.front.log.entries)
        client.put_object(Bucket="bench-test", Key="t/part-00000-a.parquet", Body=b"x" * (2 * MB))
        client.copy_object(
            Bucket="bench-test",
            Key="t/part-00000-b.parquet",
            CopySource={"Bucket": "bench-test", "Key": "t/part-00000-a.parquet"},
        )
        client.head_object(Bucket="bench-test", Key="t/part-00000-b.parquet")
        client.delete_objects(
            Bucket="bench-test",
            Delete={"Objects": [{"Key": "t/part-00000-a.parquet"}, {"Key": "t/_temporary/x"}]},
        )
        entries = s3.front.log.since(mark)

    assert [e["op"] for e in entries] == ["PUT", "COPY", "HEAD", "DELETE_BULK"]
    copy_cost = figures["COPY"] + 2 / S3_COPY_MB_PER_S
    expected = [figures["PUT"], copy_cost, figures["HEAD"], figures["DELETE_BULK"]]
    assert slept == pytest.approx(expected)
    assert entries[1]["bytes"] == 2 * MB
    assert entries[3]["deleted"] == ["t/part-00000-a.parquet", "t/_temporary/x"]

    summary = summarise_requests(entries)
    assert summary["counts"] == {"COPY": 1, "DELETE_BULK": 1, "HEAD": 1, "PUT": 1}
    assert summary["bytes_copied"] == 2 * MB
    assert summary["data_copies"] == 1 and summary["data_deletes"] == 1
    assert grouped(summary["counts"])["DELETE"] == 1


def test_latency_model_scale_and_names():
    assert s3_model(scale=0.5).delay_s("PUT") == pytest.approx(s3_model().delay_s("PUT") / 2)
    assert by_name("none") is None
    with pytest.raises(ValueError, match="unknown latency model 'fast'.*none, s3"):
        by_name("fast")


def test_data_keys_are_part_files_outside_hidden_directories():
    assert is_data_key("run/t/p=1/part-00001-tid-abc-1-c000.snappy.parquet")
    assert not is_data_key("run/t/_temporary/0/part-00001.parquet")
    assert not is_data_key("run/t/__magic_job-1/part-00001.parquet.pending")
    assert not is_data_key("run/t/_SUCCESS")


def _write(proto: str, files: int, commit_s: float, total_s: float, **extra: object) -> dict:
    counts = extra.pop("counts", {"PUT": files})
    return {
        "protocol": proto,
        "label": proto,
        "store": "s3",
        "mode": "append",
        "files": files,
        "total_s": total_s,
        "commit_s": commit_s,
        "requests": {
            **summarise_requests([]),
            "counts": counts,
            "data_deletes": extra.pop("data_deletes", 0),
        },
        **extra,
    }


def test_report_says_which_targets_hold_and_which_are_missed():
    success = {"durationMs": 5, "stageDurationsMs": {}, "jobCommitRequests": {"PUT": 1}}
    results = {
        "meta": {
            "date": "d",
            "elapsed_s": 60,
            "machine": "m",
            "master": "local[4]",
            "hadoop_cloud": "h.jar",
            "quick": True,
            "sizes": {
                "partitions": 10,
                "overwrite_files": [10],
                "rows_per_file": 10,
                "seed_rows": 0,
                "seed_partitions": 1,
            },
        },
        "sweep": [
            _write("floor", 1000, 0.0, 10.0),
            _write("v1", 1000, 30.0, 60.0, counts={"PUT": 1000, "COPY": 2000}),
            _write("magic", 1000, 1.5, 12.0),  # only 1.5x the txcommit commit: missed
            _write("txcommit", 1000, 1.0, 10.5, txcommit=success),
            _write("txcommit", 10, 0.5, 1.0, txcommit=success),
            _write("txcommit-mp", 1000, 2.0, 11.0, data_deletes=3),  # deleted data: missed
            _write("txcommit", 10, 0.6, 1.2, mode="overwrite", txcommit=success),  # 1.2x: missed
        ],
        "read": [
            {
                "txns": 100,
                "state": "after vacuum",
                "filter": "on",
                "plan_s": 1.0,
                "files": 100,
                "requests": {},
            },
            {
                "txns": 100,
                "state": "after vacuum",
                "filter": "off",
                "plan_s": 0.95,
                "files": 100,
                "requests": {},
            },
        ],
    }
    held = {
        t["target"].split(" (")[0]: t["held"]
        for t in targets(results)
        if not t["target"].startswith("zero data")
    }
    assert held == {
        "job commit >= 10x faster than v1": True,
        "job commit >= 2x faster than magic": False,
        "total job time <= 0.8x the no-protocol floor": False,  # 10.5 s vs 10 s
        "total job time <= 1x the no-protocol floor": False,  # multipart: 11 s vs 10 s
        "requests per data file: at most PUT 1, no HEAD or LIST": True,  # 10 and 1000 files
        "overwrite <= 1.1x an append of the same size": False,  # 1.2 s vs 1.0 s
        "job commit time flat in the file count: slowest <= 2x fastest": True,  # 0.5 s, 1.0 s
        "job commit requests independent of file count": True,
        "filtered read plan <= 1.1x unfiltered after vacuum": True,
    }
    zero = [t for t in targets(results) if t["target"].startswith("zero data")]
    assert [t["held"] for t in zero] == [True, True, False, None], "no multipart overwrite"
    text = render(results, ["commit-time-s3.png"])
    overwrite = "| overwrite <= 1.1x an append of the same size (txcommit, s3, 10 files) |"
    assert overwrite + " **missed** | 1.20x" in text
    # A missed target says why, from the same rows: here the replacing commit's extra time.
    assert (
        "Missed, overwrite <= 1.1x an append of the same size (txcommit, s3, 10 files): "
        "the overwrite took +0.20 s, +0.10 s of it in the job commit" in text
    )
    missed = "| job commit >= 2x faster than magic (S3, 1000 files, append) | **missed** | 1.5x"
    assert missed in text
    assert "| v1 | 60.0 | 6.00x | 30.0 | 1000 | 2000 |" in text
    assert "![commit-time-s3.png](benchmarks/commit-time-s3.png)" in text


def test_targets_compare_rows_of_one_run_only():
    """Merged results hold rows of runs made under different loads: a ratio of two of them
    would measure the machine, not txcommit."""
    ok = {"durationMs": 5, "stageDurationsMs": {}, "jobCommitRequests": {"PUT": 1}}
    results = {
        "sweep": [
            _write("floor", 1000, 0.0, 10.0, run="A"),
            _write("txcommit", 1000, 0.1, 20.0, run="B", txcommit=ok),  # a busier run: not compared
            _write("floor", 1000, 0.0, 19.5, run="B"),
            _write("txcommit", 100, 0.1, 2.0, run="A", txcommit=ok),
            _write("txcommit", 100, 0.1, 9.0, run="B", mode="overwrite", txcommit=ok),
        ]
    }
    from txcommit.bench.report import floor_targets

    found = {t["target"]: (t["held"], t["value"]) for t in floor_targets(results)}
    floor = (
        "total job time <= 0.8x the no-protocol floor (txcommit conditional-put, S3, "
        "1000 files, append)"
    )
    assert found[floor] == (False, "1.03x (20.0 s vs 19.5 s)")
    assert not [t for t in found if t.startswith("overwrite")], "append and overwrite: two runs"


def test_requests_per_data_file_are_the_difference_of_two_sizes_of_one_run():
    """What one more file costs, read off two sizes of one run: the job's constant requests
    cancel out, and a probe or a HEAD per file shows as one per file."""
    from txcommit.bench.report import floor_targets

    def row(proto: str, files: int, counts: dict[str, int], run: str) -> dict:
        return _write(proto, files, 0.1, 1.0, counts=counts, run=run)

    results = {
        "sweep": [
            row("txcommit", 1000, {"PUT": 1003, "LIST": 5, "HEAD": 3}, "A"),
            row("txcommit", 10000, {"PUT": 10003, "LIST": 5, "HEAD": 3}, "A"),
            row("txcommit", 20000, {"PUT": 20003, "LIST": 20005, "HEAD": 3}, "B"),  # another run
            row(
                "txcommit-mp",
                1000,
                {
                    "MULTIPART_INITIATE": 1000,
                    "MULTIPART_PART": 1000,
                    "MULTIPART_COMPLETE": 1000,
                    "HEAD": 1002,
                },
                "A",
            ),
            row(
                "txcommit-mp",
                5000,
                {
                    "MULTIPART_INITIATE": 5000,
                    "MULTIPART_PART": 5000,
                    "MULTIPART_COMPLETE": 5000,
                    "HEAD": 5002,
                },
                "A",
            ),
        ]
    }
    found = {
        t["target"]: t
        for t in floor_targets(results)
        if t["target"].startswith("requests per data file")
    }
    put = found[
        "requests per data file: at most PUT 1, no HEAD or LIST (txcommit "
        "conditional-put, S3, the 1000 and 10000-file appends of one run)"
    ]
    assert put["held"] and put["value"] == "PUT 1.000"
    (mp,) = [t for k, t in found.items() if "multipart-complete" in k]
    assert mp["held"] is False and "HEAD 1.0" in mp["why"]


def test_a_few_requests_of_the_jobs_own_between_two_sizes_are_not_a_per_file_cost():
    """The job's own listings (a resent LIST, the clean-up of open uploads listing as the job
    returns) vary by a few between any two writes: four more LISTs over 9,000 more files are
    not a LIST per file, and the value shows them as counts rather than hiding them."""
    from txcommit.bench.report import floor_targets

    mpu = {"MULTIPART_INITIATE": 1, "MULTIPART_PART": 1, "MULTIPART_COMPLETE": 1}
    results = {
        "sweep": [
            _write(
                "txcommit-mp",
                n,
                0.1,
                1.0,
                run="J",
                counts={**{k: n for k in mpu}, "LIST": lists, "PUT": 4},
            )
            for n, lists in ((1000, 23), (10000, 27))
        ]
    }
    (mp,) = [t for t in floor_targets(results) if t["target"].startswith("requests per data")]
    assert mp["held"], mp
    own = "(the job's own: LIST +4)"
    assert mp["value"] == f"MPU complete 1.000, MPU init 1.000, MPU part 1.000 {own}"


def test_the_note_on_the_floor_says_which_side_makes_more_requests():
    """A txcommit faster than the floor is noise only if it makes more requests; making a
    quarter of them, it is expected, and the note says why totals still vary between runs."""
    from txcommit.bench.report import _notes_on_targets

    ok = {"durationMs": 5, "stageDurationsMs": {}, "jobCommitRequests": {"PUT": 1}}
    floor = _write("floor", 1000, 0.0, 70.0, counts={"PUT": 1000, "HEAD": 2000, "LIST": 1001})
    fewer = _write("txcommit", 1000, 1.0, 30.0, counts={"PUT": 1003, "LIST": 14}, txcommit=ok)
    more = _write("txcommit", 1000, 1.0, 60.0, counts={"PUT": 1003, "HEAD": 3004}, txcommit=ok)
    (note,) = [n for n in _notes_on_targets({"sweep": [floor, fewer]}) if "floor at" in n]
    assert "which makes fewer requests" not in note and "within one run only" in note
    (note,) = [n for n in _notes_on_targets({"sweep": [floor, more]}) if "floor at" in n]
    assert "which makes fewer requests" in note


def test_merge_replaces_the_rerun_points_and_names_each_rows_run():
    from txcommit.bench.main import merge
    from txcommit.bench.runner import leftover_txn

    meta = {
        "date": "d1",
        "elapsed_s": 600,
        "machine": "m",
        "master": "local[4]",
        "hadoop_cloud": "h.jar",
        "stores": ["s3"],
        "sizes": {
            "partitions": 10,
            "overwrite_files": [10],
            "rows_per_file": 10,
            "seed_rows": 0,
            "seed_partitions": 1,
        },
    }
    ok = {"txcommit": {"durationMs": 5, "stageDurationsMs": {}, "jobCommitRequests": {}}}
    earlier = {
        "meta": meta,
        "sweep": [_write("v1", 1000, 30.0, 60.0), _write("txcommit", 1000, 1.0, 10.0, **ok)],
        "seed": [],
        "read": [
            {
                "txns": 1,
                "state": "after cleanup",
                "filter": "on",
                "plan_s": 1.0,
                "files": 1,
                "requests": {},
            }
        ],
    }
    new = {
        "meta": {**meta, "date": "d2", "elapsed_s": 60},
        "sweep": [_write("txcommit", 1000, 0.5, 9.0, **ok)],
        "seed": [],
        "read": [],
    }
    merged = merge(earlier, new)
    assert [(r["protocol"], r["commit_s"], r["run"]) for r in merged["sweep"]] == [
        ("v1", 30.0, "A"),
        ("txcommit", 0.5, "B"),
    ]
    assert merged["read"][0]["run"] == "A", "no read cost re-run: the earlier one stays"
    assert [r["id"] for r in merged["runs"]] == ["A", "B"]
    text = render(merged, [])
    assert "Merged from 2 runs" in text and "| B | d2 | 1.0 |" in text
    assert text.count("| B |") == 2  # its row in the table of runs, and its sweep row
    txn = leftover_txn("zzzz0001", 1_700_000_000_000)
    assert len(txn) == 16 and int(txn[:8], 36) == 1_700_000_000_000


def test_a_large_job_has_its_commit_and_heap_targets_and_its_table():
    from txcommit.bench.report import large_targets

    job = _write(
        "txcommit",
        100_000,
        1.4,
        900.0,
        txcommit={
            "durationMs": 1400,
            "stageDurationsMs": {"publish-commit-record": 300},
            "jobCommitRequests": {"PUT": 1},
        },
    )
    job.update(
        heap_before_mb=300.0,
        heap_peak_mb=1100.0,
        record_bytes=9_000_000,
        reader={
            "on": {"plan_s": 30.0, "log_requests": {"GET commits": 1}},
            "off": {"plan_s": 25.0},
        },
    )
    found = {t["target"]: (t["held"], t["value"]) for t in large_targets({"large": [job]})}
    where = "(txcommit, S3, 100000 files, append)"
    assert found[f"job commit <= 2 s {where}"] == (True, "1.40 s")
    assert found[f"driver heap growth <= 500 MB {where}"] == (
        False,
        "+800 MB (300 MB before, 1100 MB at the peak)",
    )
    meta = report_meta()
    text = render({"meta": meta, "large": [job]}, [])
    assert "| 100000 | 900.0 | 1.400 | publish-commit-record 300 | 9,000,000 | 300 / 1100 |" in text


def test_a_large_commit_over_its_target_says_how_much_of_it_txcommits_stages_were():
    """Spark's timer covers all of commitJob; `_SUCCESS` times the stages up to the record.
    A miss says how much of the commit those stages took, so the rest has a name to look for."""
    from txcommit.bench.report import large_targets

    stages = {"collect-manifests": 1336, "check-schema": 499, "publish-commit-record": 511}
    job = _write(
        "txcommit",
        100_000,
        62.322,
        600.0,
        txcommit={"durationMs": 3000, "stageDurationsMs": stages, "jobCommitRequests": {"PUT": 1}},
    )
    job.update(heap_before_mb=129.0, heap_peak_mb=900.0, record_bytes=9_000_000)
    (commit,) = [t for t in large_targets({"large": [job]}) if t["target"].startswith("job commit")]
    assert commit["held"] is False
    assert "its stages up to the record took 2.35 s of the 62.32 s" in commit["why"]
    assert "the derived work after the record" in commit["why"]
    (heap,) = [t for t in large_targets({"large": [job]}) if t["target"].startswith("driver")]
    assert heap["held"] is False and "a commit record of 9.0 MB" in heap["why"]
    from txcommit.bench.report import _notes_on_targets

    assert f"- Missed, {commit['target']}: {commit['why']}" in _notes_on_targets({"large": [job]})


def test_the_heap_in_use_is_survivors_eden_and_old():
    from txcommit.bench.large import HeapSampler

    header = ["S0C", "S1C", "S0U", "S1U", "EC", "EU", "OC", "OU", "MC", "MU"]
    values = ["1024", "1024", "512", "0", "4096", "2048", "8192", "1536", "0", "0"]
    assert HeapSampler._used_mb(header, values) == (512 + 2048 + 1536) / 1024


def test_a_report_without_new_plots_shows_the_plots_drawn_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/benchmarks.md is rewritten by runs that merge one section and draw no plot: it
    must keep linking the plots in its assets directory."""
    from txcommit.bench import report
    from txcommit.bench.main import write_report

    shown: list[list[str]] = []

    def render(results: object, plots: list[str], assets: object, out: object) -> str:
        shown.append(plots)
        return ""

    monkeypatch.setattr(report, "render", render)
    assets = tmp_path / "benchmarks"
    assets.mkdir()
    (assets / "commit-time-s3.png").write_bytes(b"\x89PNG")
    write_report({}, tmp_path / "benchmarks.md", assets, plots=False)
    assert shown == [["commit-time-s3.png"]]
