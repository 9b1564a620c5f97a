"""The transactions section of ``txcommit bench``: its sizes, its rows, its targets, its report."""

from __future__ import annotations

from typing import Any

import pytest

from txcommit.bench.main import build_parser, merge, sizes_from
from txcommit.bench.report import _notes_on_targets, render
from txcommit.bench.transactions import commit_row, reader_row
from txcommit.bench.transactions_report import transactions_targets

from support.bench import report_meta


def test_transactions_run_only_when_asked_for_with_the_same_files_in_every_case():
    assert sizes_from(build_parser().parse_args([])).transaction_tables == []
    assert sizes_from(build_parser().parse_args(["--quick"])).transaction_tables == []
    sizes = sizes_from(build_parser().parse_args(["--only", "transactions"]))
    assert sizes.transaction_tables == [2, 16] and sizes.transaction_files == 16
    assert sizes.transaction_undecided == [1, 4] and sizes.transaction_repeats == 5
    assert sizes.files == [] and sizes.read_txns == [] and sizes.seed_rows == 0
    sizes = sizes_from(
        build_parser().parse_args(
            ["--only", "transactions", "--transaction-tables", "3", "--transaction-files", "9",
             "--transaction-undecided", "2", "--repeats", "2"]
        )
    )  # fmt: skip
    assert (sizes.transaction_tables, sizes.transaction_files) == ([3], 9)
    assert (sizes.transaction_undecided, sizes.transaction_repeats) == ([2], 2)
    # 16 files cannot be split evenly over 3 tables: not the same data as the single table
    with pytest.raises(SystemExit, match="--transaction-tables 3: each must divide"):
        sizes_from(
            build_parser().parse_args(["--only", "transactions", "--transaction-tables", "3"])
        )


def _sample(total: float, commit: float, **more: Any) -> dict[str, Any]:
    return {"total_s": total, "commit_s": commit, "requests": [], **more}


def _commits(tx_total: float = 1.4, tx_commit: float = 0.3) -> list[dict[str, Any]]:
    put = {"op": "PUT", "key": "run/t/_txcommit/groups/g.json"}
    tx = [
        _sample(
            tx_total + d,
            tx_commit,
            begin_s=0.1,
            prepare_s=0.5,
            commit_client_s=tx_commit + 0.05,
            commit_requests=[put],
        )
        for d in (0.0, 5.0, -0.1)
    ]
    return [
        commit_row("s3", "single", 1, 16, [_sample(t, 0.2) for t in (1.0, 1.1, 0.9)]),
        commit_row("s3", "transaction", 2, 16, tx),
        commit_row("s3", "separate", 2, 16, [_sample(t, 0.4) for t in (1.3, 1.2, 1.35)]),
    ]


def test_a_commit_point_is_the_median_of_its_rounds():
    single, tx, apart = _commits()
    assert (single["total_s"], single["repeats"], single["rows"]) == (1.0, 3, 16_000)
    assert tx["total_s"] == 1.4, "one slow round does not move the median"
    assert tx["samples"]["total_s"] == [1.4, 6.4, 1.3]
    assert (tx["begin_s"], tx["prepare_s"], tx["commit_s"]) == (0.1, 0.5, 0.3)
    assert tx["commit_log_requests"] == {"PUT groups": 1}
    assert "begin_s" not in apart and "commit_requests" not in apart


def test_a_transaction_is_held_against_the_single_table_and_a_miss_says_why():
    (t,) = transactions_targets({"transactions": _commits(tx_commit=0.28)})
    assert t["target"].startswith("a transaction over 2 tables commits in <= 1.5x a single-table")
    assert t["held"] is True
    assert t["value"].startswith("1.40x (COMMIT 0.280 s vs the single write's job commit 0.200 s")
    assert "wall time, first write to COMMIT's answer, 1.40x (1.40 s vs 1.00 s)" in t["value"]
    assert "the same 2 appends without a transaction 1.30 s (1.08x)" in t["value"]
    (t,) = transactions_targets({"transactions": _commits(tx_total=1.6, tx_commit=0.32)})
    assert t["held"] is False
    assert "2 writes are 2 Spark jobs" in t["why"] and "+0.30 s over them" in t["why"]
    assert "1 requests, 0.5 per table" in t["why"] and "PUT groups 1" in t["why"]
    notes = "\n".join(_notes_on_targets({"transactions": _commits(tx_total=1.6, tx_commit=0.32)}))
    assert f"Missed, {t['target']}: {t['why']}" in notes


def _req(op: str, key: str) -> dict[str, Any]:
    return {"op": op, "key": key}


LISTS = [_req("LIST", f"run/t/_txcommit/{d}/") for d in ("commits", "checkpoints", "replace")]


def test_a_read_is_counted_against_the_control_table_by_operation_and_log_area():
    mine = [*LISTS, _req("GET", "run/t/_txcommit/commits/a.json")]
    mine += [
        _req("GET", "run/t/_txcommit/groups/g1.json"),
        _req("GET", "run/t/_txcommit/groups/g2.json"),
    ]
    theirs = [
        *LISTS,
        _req("GET", "run/c/_txcommit/commits/b.json"),
        _req("HEAD", "run/c/p.parquet"),
    ]
    r = reader_row(2, "undecided", 1, mine, theirs)
    assert r["extra"] == 1 and r["more"] == {"GET groups": 2} and r["fewer"] == {"HEAD data": 1}
    # which requests: their paths in the table (the run's directory cut off)
    assert r["more_paths"] == ["GET t/_txcommit/groups/g1.json", "GET t/_txcommit/groups/g2.json"]
    assert r["fewer_paths"] == ["HEAD c/p.parquet"]
    assert r["requests"] == {"GET": 3, "LIST": 3} and r["control_requests"]["HEAD"] == 1


def _reads(undecided_extra: int, again_extra: int) -> list[dict[str, Any]]:
    def phase(k: int, name: str, n: int) -> dict[str, Any]:
        groups = [_req("GET", f"run/t/_txcommit/groups/g{i}.json") for i in range(n)]
        return reader_row(k, name, 1, LISTS + groups, LISTS)

    return [
        phase(k, name, n)
        for k in (1, 4)
        for name, n in (
            ("none", 0),
            ("undecided", k * undecided_extra),
            ("undecided-again", k),
            ("decided-first", k),
            ("decided-again", again_extra),
        )
    ]  # fmt: skip


def test_a_reader_pays_at_most_one_request_per_undecided_transaction_and_none_again():
    held = {
        t["target"].split(" (")[0]: t for t in transactions_targets({"transactions": _reads(1, 0)})
    }
    per, again = held.values()
    assert per["target"].startswith("a reader pays at most 1 extra store request per undecided")
    assert per["held"] is True and per["value"].startswith("1 per undecided transaction at most")
    assert "4 undecided, undecided: +4 (GET groups 4)" in per["value"]
    assert again["held"] is True
    assert (
        "4 undecided, decided-first: +4 (GET groups 4); 4 undecided, decided-again: +0"
        in again["value"]
    )
    per, again = transactions_targets({"transactions": _reads(2, 1)})
    assert per["held"] is False and per["value"].startswith("2 per undecided transaction at most")
    assert "4 undecided, undecided: GET groups 8 more (GET t/_txcommit/groups/g0.json" in per["why"]
    assert again["held"] is False


def test_the_section_has_its_tables_and_merges_by_its_points():
    meta = report_meta()
    rows = _commits() + _reads(1, 0)
    text = render({"meta": meta, "transactions": rows}, [])
    assert "## Multi-table transactions" in text
    assert (
        "| s3 | transaction | 2 | 8 | 1.400 | 1.40x | 0.300 | 0.100 | 0.500 | PUT groups 1 |"
        in text
    )
    assert (
        "| 4 | undecided-again | 1 | GET 4, LIST 3 | LIST 3 | +4 | +1.00 | GET groups 4 | none |"
        in text
    )
    again = commit_row("s3", "single", 1, 16, [_sample(2.0, 0.2)])
    merged = merge({"meta": meta, "transactions": rows}, {"meta": {**meta, "date": "e"},
                                                           "transactions": [again]})  # fmt: skip
    points = [(r["case"], r.get("tables"), r["run"]) for r in merged["transactions"][:3]]
    assert points == [("single", 1, "B"), ("transaction", 2, "A"), ("separate", 2, "A")]
    assert len(merged["transactions"]) == len(rows)
    assert (
        merged["runs"][0]["covers"]
        == "transactions over 2 tables on s3, a reader meeting 1,4 undecided"
    )
