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
        "total job time <= 1.05x the no-protocol floor": True,  # 10.5 s vs 10 s
        "total job time <= 1.3x the no-protocol floor": True,  # multipart: 11 s vs 10 s
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
        "total job time <= 1.05x the no-protocol floor (txcommit conditional-put, S3, "
        "1000 files, append)"
    )
    assert found[floor] == (True, "1.03x (20.0 s vs 19.5 s)")
    assert not [t for t in found if t.startswith("overwrite")], "append and overwrite: two runs"


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
