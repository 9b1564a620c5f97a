"""The read section of ``txcommit bench``: the synthesiser, request accounting, its report."""

from __future__ import annotations

from txcommit.bench.main import build_parser, merge, sizes_from
from txcommit.bench.reads import count_requests, log_area
from txcommit.bench.report import render, targets
from txcommit.bench.synth import SYNTH_WRITER, partitioned_table, plain_table, txcommit_table
from txcommit.table.checkpoints import decode_checkpoint
from txcommit.table.layout import LogLayout, txn_of_record_name
from txcommit.table.names import is_valid_txn, txn_of
from txcommit.table.records import decode_record

from support.bench import report_meta

BODY = b"PAR1 not really parquet PAR1"


def test_synthesised_txcommit_table_is_one_file_and_one_record_per_transaction():
    objects = dict(txcommit_table("run/t", 5, BODY, start_ms=1_700_000_000_000, seed="s"))
    data = {k: v for k, v in objects.items() if "/_txcommit/" not in k}
    records = {k: v for k, v in objects.items() if k.startswith("run/t/_txcommit/commits/")}
    assert len(data) == 5 and len(records) == 5 and len(objects) == 11
    # Log-only, as txcommit creates a table: checkpoint 1, covering nothing, says so.
    (key,) = [k for k in objects if "/_txcommit/checkpoints/" in k]
    first = decode_checkpoint(objects[key], key, 1)
    assert first.log_only and not first.committed
    adopted = dict(txcommit_table("run/t", 5, BODY, 1_700_000_000_000, seed="s", log_only=False))
    assert len(adopted) == 10 and not [k for k in adopted if "/checkpoints/" in k]
    assert all(v == BODY for v in data.values())
    txns = []
    for key, raw in records.items():
        txn = txn_of_record_name(key.rpartition("/")[2])
        assert txn is not None and key == LogLayout("run/t").commit_record(txn)
        record = decode_record(raw, key, txn)  # strict: what the JVM would accept
        assert record.operation == "append" and record.writer == SYNTH_WRITER
        assert record.committed_at > record.started_at
        (added,) = record.added
        assert added.size == len(BODY)
        assert f"run/t/{added.path}" in data, "the record names its data file"
        assert txn_of(added.path) == txn, "the file name carries the txn id"
        txns.append((record.started_at, txn))
    ordered = [t for _, t in sorted(txns)]
    assert ordered == sorted(ordered), "ids are time-ordered like real ones"
    assert all(is_valid_txn(t) for t in ordered) and len(set(ordered)) == 5


def test_synthesised_tables_differ_by_seed_and_name():
    a = [k for k, _ in txcommit_table("run/a", 3, BODY, 1_700_000_000_000, seed="s")]
    b = [k for k, _ in txcommit_table("run/b", 3, BODY, 1_700_000_000_000, seed="s")]
    c = [k for k, _ in txcommit_table("run/a", 3, BODY, 1_700_000_000_000, seed="t")]
    # Every object but the checkpoint (each table's is number 1) is named after its txn.
    names = [{k.rpartition("/")[2] for k in x if "/checkpoints/" not in k} for x in (a, b, c)]
    assert not names[0] & names[1] and not names[0] & names[2]


def test_synthesised_plain_table_has_one_file_per_directory_and_no_log():
    objects = list(plain_table("run/p", 4, BODY))
    keys = [k for k, _ in objects]
    assert [k.split("/")[2] for k in keys] == ["k=0", "k=1", "k=2", "k=3"]
    assert all("_txcommit" not in k and txn_of(k.rpartition("/")[2]) is None for k in keys)
    assert all(k.endswith(".snappy.parquet") and v == BODY for k, v in objects)


def test_synthesised_partitioned_table_is_one_write_of_one_file_per_directory():
    objects = dict(partitioned_table("run/p", 4, BODY, 1_700_000_000_000, seed="s"))
    data = sorted(k for k in objects if "/_txcommit/" not in k)
    assert [k.split("/")[2] for k in data] == ["k=0", "k=1", "k=2", "k=3"]
    (key,) = [k for k in objects if "/_txcommit/commits/" in k]
    txn = txn_of_record_name(key.rpartition("/")[2])
    assert txn is not None
    record = decode_record(objects[key], key, txn)
    assert sorted(f"run/p/{f.path}" for f in record.added) == data
    assert any("/_txcommit/checkpoints/" in k for k in objects), "log-only"


def test_log_requests_are_split_by_area():
    entries = [
        {"op": "HEAD", "key": "run/t/_txcommit"},
        {"op": "LIST", "key": "", "prefix": "run/t/_txcommit/"},
        {"op": "LIST", "key": "", "prefix": "run/t/_txcommit/replace/"},
        {"op": "GET", "key": "run/t/_txcommit/commits/abc.json"},
        {"op": "GET", "key": "run/t/_txcommit/checkpoints/00000000000000000001.json"},
        {"op": "LIST", "key": "", "prefix": "run/t/"},
        {"op": "GET", "key": "run/t/part-00000-tid-x-0-c000.snappy.parquet"},
    ]
    assert [log_area(e) for e in entries] == [
        "probe",
        "probe",
        "replace",
        "commits",
        "checkpoints",
        None,
        None,
    ]
    ops, log = count_requests(entries)
    assert ops == {"GET": 3, "HEAD": 1, "LIST": 3}
    assert log == {
        "GET checkpoints": 1,
        "GET commits": 1,
        "HEAD probe": 1,
        "LIST probe": 1,
        "LIST replace": 1,
    }


def _row(case, txns, dirs, ckpt, temp, filt, plan_s, requests, log=None, files=None, **extra):
    return {
        "case": case,
        "txns": txns,
        "dirs": dirs,
        "checkpoint": ckpt,
        "temp": temp,
        "filter": filt,
        "plan_s": plan_s,
        "samples": [plan_s] * (1 if temp == "cold" else 3),
        "files": files if files is not None else (txns or dirs),
        "requests": requests,
        "log_requests": log or {},
        **extra,
    }


def _results() -> dict:
    off = {"HEAD": 3, "LIST": 14}
    rows = []
    for n, cold_on in ((100, 0.4), (10000, 2.0)):
        log = {"GET checkpoints": 1, "LIST checkpoints": 1, "LIST commits": 1, "LIST replace": 1}
        rows += [
            _row("txcommit", n, 1, True, "cold", "off", 1.0, off),
            _row(
                "txcommit", n, 1, True, "cold", "on", cold_on, {"GET": 2, "HEAD": 1, "LIST": 4}, log
            ),
            _row("txcommit", n, 1, True, "warm", "off", 1.0, off),
            _row(
                "txcommit",
                n,
                1,
                True,
                "warm",
                "on",
                0.3,
                {"HEAD": 1, "LIST": 3},
                {"LIST checkpoints": 1, "LIST commits": 1, "LIST replace": 1},
            ),
        ]
    rows += [
        _row("txcommit", 10000, 1, False, "cold", "off", 1.0, off),
        _row(
            "txcommit",
            10000,
            1,
            False,
            "cold",
            "on",
            300.0,
            {"GET": 10000, **off},
            {"GET commits": 10000},
        ),
        _row("txcommit", 10000, 1, False, "warm", "off", 1.0, off),
        _row("txcommit", 10000, 1, False, "warm", "on", 0.5, off),
        _row("plain", None, 1000, False, "cold", "off", 1.0, off),
        _row("plain", None, 1000, False, "cold", "on", 1.01, off),
        _row("plain", None, 1000, False, "warm", "off", 1.0, off),
        _row("plain", None, 1000, False, "warm", "on", 1.03, {"HEAD": 3, "LIST": 15}),
        _row("listing", 1000, 1, False, "cold", "off", 1.0, off),
        _row("listing", 1000, 1, False, "cold", "on", 1.05, off),
        _row("listing", 1000, 1, False, "warm", "off", 1.0, off),
        _row("listing", 1000, 1, False, "warm", "on", 1.08, off),
        _row("partitioned", None, 1000, False, "cold", "off", 1.0, off),
        _row("partitioned", None, 1000, False, "cold", "on", 0.45, {"GET": 1, "LIST": 4}),
        _row("partitioned", None, 1000, False, "warm", "off", 1.0, off),
        _row(
            "partitioned",
            None,
            1000,
            False,
            "warm",
            "on",
            0.3,
            {"LIST": 3},
            {"LIST checkpoints": 1, "LIST commits": 1, "LIST replace": 1},
        ),
        _row(
            "partitioned",
            None,
            1000,
            False,
            "warm",
            "pruned-off",
            2.0,
            {"GET": 2, "LIST": 2},
            files=1,
        ),
        _row(
            "partitioned",
            None,
            1000,
            False,
            "warm",
            "pruned",
            0.6,
            {"GET": 2, "LIST": 3},
            {"LIST checkpoints": 1, "LIST commits": 1, "LIST replace": 1},
            files=1,
        ),
    ]
    return {
        "meta": report_meta(stores=["s3"], sizes={**report_meta()["sizes"], "repeats": 3}),
        "sweep": [],
        "seed": [],
        "read": rows,
        "read_info": {
            "checkpoint": "written",
            "repeats": 3,
            "server_start_s": [20.0, 21.0],
            "synthesis": {"objects": 20202, "seconds": 70.0},
        },
    }


def test_read_targets_say_held_or_missed_with_the_figures():
    found = {t["target"]: t for t in targets(_results())}
    big = found[
        "10,000 commits with a checkpoint (log-only): plan <= 0.5x the unfiltered listing, "
        "cold and warm"
    ]
    assert big["held"] is False and "cold 2.00x (2.000 s vs 1.000 s)" in big["value"], "cold 2x"
    log = [t for t in found.values() if t["target"].startswith("log requests per plan <= 4")]
    assert log[0]["held"] is True and "at 100, 10,000 commits" in log[0]["target"]
    part = found[
        "log-only table of 1000 partition directories: plan <= 0.5x the unfiltered "
        "listing, cold and warm"
    ]
    assert part["held"] is True
    plain = found[
        "plain table (1000 directories, no log): plan <= 1.02x the unfiltered listing, "
        "cold and warm"
    ]
    assert plain["held"] is False and "warm 1.03x" in plain["value"]
    extra = found["plain table: no extra request, cold and warm"]
    assert extra["held"] is False and "warm: +1 LIST" in extra["value"]
    listing = [t for t in found.values() if t["target"].startswith("a table read by listing")]
    assert listing[0]["held"] is True
    pruned = [t for t in found.values() if t["target"].startswith("partition pruning")]
    assert pruned[0]["held"] is True and "1 file read, 0 LIST of data" in pruned[0]["value"]


def test_the_time_travel_target_compares_a_read_as_of_now_with_the_read_of_now():
    results = _results()
    missing = {t["target"]: t for t in targets(results)}
    [absent] = [t for t in missing.values() if t["target"].startswith("a time-travel read")]
    assert absent["held"] is None, "not measured: no as-of plan"
    as_of = {"HEAD": 1, "LIST": 3}
    results["read"].append(_row("txcommit", 10000, 1, True, "warm", "as-of", 0.31, as_of))
    [held] = [t for t in targets(results) if t["target"].startswith("a time-travel read")]
    assert held["held"] is True and "0.310 s vs now 0.300 s (1.03x)" in held["value"]
    results["read"][-1] = _row(
        "txcommit", 10000, 1, True, "warm", "as-of", 0.3, {"HEAD": 1, "LIST": 4}
    )
    [more] = [t for t in targets(results) if t["target"].startswith("a time-travel read")]
    assert more["held"] is False, "one request more than the read of now"


def test_read_section_renders_txcommit_on_and_off_side_by_side():
    text = render(_results(), [])
    assert "### Log-only txcommit tables, with a checkpoint" in text
    assert "### Log-only txcommit tables, only their creation checkpoint" in text
    assert "### A plain Hive-style table (1000 directories, not written by txcommit)" in text
    assert "### A log-only txcommit table of 1000 partition directories" in text
    assert "### A txcommit table read by listing" in text
    assert "synthesised** with the project's own encoders" in text
    assert "| 10000 | cold | 2.000 | 1.000 | 2.00x | 4 / 14 | 1 / 3 | 2 / 0 |" in text
    assert "| pruned | warm | 0.600 | 2.000 | 0.30x | 3 / 2 | 0 / 0 | 2 / 2 |" in text


def test_a_read_only_run_merges_its_read_section_into_an_earlier_run():
    earlier = _results()
    earlier["read"] = [
        {
            "txns": 1,
            "state": "after vacuum",
            "filter": "on",
            "plan_s": 1.0,
            "files": 1,
            "requests": {},
        }
    ]
    earlier.pop("read_info")
    merged = merge(earlier, _results())
    assert {r["run"] for r in merged["read"]} == {"B"}
    assert merged["read_info"]["synthesis"]["objects"] == 20202
    covers = merged["runs"][1]["covers"]
    assert "read cost at 100,10000 transactions, a plain table of 1000 directories" in covers
    assert "a table of 1000 read by listing" in covers


def test_a_partial_read_run_replaces_only_the_points_it_measured():
    earlier = merge(_results(), _results())  # runs A and B
    new = _results()
    new["read"] = [r for r in new["read"] if r["case"] == "plain"]
    earlier["read_info"]["checkpoints"] = {"100": {"checkpoint": 1}}
    new["read_info"] = {"checkpoints": {"1": {"checkpoint": 1}}, "synthesis": {"objects": 1}}
    merged = merge(earlier, new)
    runs = {(r["case"], r["run"]) for r in merged["read"]}
    assert ("plain", "C") in runs and ("plain", "B") not in runs
    assert ("txcommit", "B") in runs and ("txcommit", "C") not in runs
    assert len(merged["read"]) == len(earlier["read"])
    assert set(merged["read_info"]["checkpoints"]) == {"1", "100"}
    assert merged["read_info"]["synthesis"] == earlier["read_info"]["synthesis"]
    assert [r["txns"] for r in merged["read"]] == [r["txns"] for r in earlier["read"]]


def test_only_read_runs_nothing_else():
    sizes = sizes_from(build_parser().parse_args(["--only", "read", "--quick"]))
    assert sizes.files == [] and sizes.seed_rows == 0
    assert sizes.read_txns == [1, 20] and sizes.read_partitions == 20
    sizes = sizes_from(build_parser().parse_args(["--only", "sweep"]))
    assert sizes.read_txns == [] and sizes.read_partitions == 0 and sizes.files


def test_the_listing_target_judges_the_table_with_its_checkpoint_and_shows_the_one_without():
    results = _results()
    off = {"LIST": 4}
    results["read"] = [r for r in results["read"] if r["case"] != "listing"] + [
        _row("listing", 1000, 1, False, "cold", "off", 1.0, off),
        _row(
            "listing",
            1000,
            1,
            False,
            "cold",
            "on",
            4.0,
            {"GET": 1000, **off},
            {"GET commits": 1000},
        ),
        _row("listing", 1000, 1, False, "warm", "off", 1.0, off),
        _row("listing", 1000, 1, False, "warm", "on", 1.0, off),
        _row("listing", 1000, 1, True, "cold", "off", 1.0, off),
        _row("listing", 1000, 1, True, "cold", "on", 1.05, off),
        _row("listing", 1000, 1, True, "warm", "off", 1.0, off),
        _row("listing", 1000, 1, True, "warm", "on", 1.02, off),
    ]
    listing = [t for t in targets(results) if t["target"].startswith("a table read by listing")]
    assert len(listing) == 1 and "with a checkpoint" in listing[0]["target"]
    assert listing[0]["held"] is True and "cold 1.05x" in listing[0]["value"]
    text = render(results, [])
    assert "| 1000 with a checkpoint | cold |" in text and "| 1000 | cold | 4.000 |" in text
    assert "Without a checkpoint" in text and "4.00x" in text
