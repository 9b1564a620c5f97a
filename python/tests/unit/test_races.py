"""The race helper of the end-to-end tests (support/races.py) counts what raced and fails a
race whose sides never met, whatever its reads saw."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from support.races import (
    CommitWatch,
    Generations,
    Race,
    Span,
    assert_overlaps,
    clock,
    overlapping,
)
from support.tables import TableRef

TXN_A, TXN_B = "mwrb6d3zh3ckkd3q", "mwrb6d3zh3ckkd3r"


def test_an_operation_overlaps_a_commit_point_only_if_it_spans_the_whole_window() -> None:
    window = Span(10.0, 10.5)
    assert overlapping([Span(9.0, 11.0)], [window]) == 1
    # Began inside the window, or ended inside it: the commit may have been before or after.
    assert overlapping([Span(10.2, 12.0), Span(8.0, 10.2), Span(10.1, 10.4)], [window]) == 0
    # Each operation counts once, however many points it spans.
    assert overlapping([Span(0, 30)], [window, Span(20, 21)]) == 1


def test_reads_before_and_after_the_commits_saw_two_generations_and_still_fail() -> None:
    """What the helper accepted before: a read before the first commit (generation 0) and one
    after the last (generation 2) 'saw two generations' but met no commit."""
    gens = Generations(parts=2, rows=10)
    race = Race(
        reads=[[(Span(0, 1), {0: 10}), (Span(5, 6), {2: 10})]],
        writes=[Span(1.5, 2.5), Span(3, 4)],
        points=[Span(2, 2.1), Span(3.5, 3.6)],
        floor=1,
    )
    with pytest.raises(AssertionError, match="only 0 of 2 began before one of the 2 commit"):
        gens.assert_whole(race, 0, one_generation=True, who="the reader")
    raced = Race(race.reads + [[(Span(1.9, 3.7), {1: 10})]], race.writes, race.points, floor=1)
    gens.assert_whole(raced, 1, one_generation=True, who="a reader that met both")


def test_a_torn_read_fails_before_overlaps_are_counted() -> None:
    gens = Generations(parts=2, rows=10)
    race = Race([[(Span(0, 5), {0: 10, 1: 4})]], [Span(1, 2)], [Span(1.5, 1.6)], floor=1)
    with pytest.raises(AssertionError, match="part of a transaction"):
        gens.assert_whole(race, 0, one_generation=False, who="the reader")


def test_the_floor_is_stated_in_the_failure() -> None:
    with pytest.raises(AssertionError, match="needs at least 3 to have raced"):
        assert_overlaps([Span(0, 10)], [Span(1, 2)], 3, "jobs")


def record(table: Path, area: str, name: str, body: dict[str, object]) -> float:
    """Publishes a record as the local adapter does (written aside, then linked into place);
    returns when it appeared."""
    d = table / "_txcommit" / area
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".{name}.tmp"
    tmp.write_text(json.dumps(body))
    at = clock()
    tmp.rename(d / name)
    return at


def test_the_watch_dates_each_commit_point_from_the_store_and_skips_derived_copies(
    tmp_path: Path,
) -> None:
    table = TableRef("local", str(tmp_path), local=tmp_path)
    record(tmp_path, "commits", f"{TXN_A}.json", {"txn": TXN_A})  # before the race: no point
    moments: list[float] = []

    def writer() -> None:
        time.sleep(0.3)
        moments.append(record(tmp_path, "commits", f"{TXN_B}.json", {"txn": TXN_B}))
        time.sleep(0.3)
        replace = {"txn": "mwrb6d3zh3ckkd3s", "sequence": 1}
        moments.append(record(tmp_path, "replace", "00000000000000000001.json", replace))
        time.sleep(0.3)
        # The replacing commit's copy in commits/: derived work, no commit point.
        record(tmp_path, "commits", "mwrb6d3zh3ckkd3s.json", replace)
        time.sleep(0.3)

    with CommitWatch(table) as watch:
        t = threading.Thread(target=writer)
        t.start()
        t.join()
    points = watch.points()
    assert len(points) == 2, points
    for window, at in zip(points, moments, strict=True):
        assert window.start <= at <= window.end, (window, at)
        assert window.end - window.start < 0.3, "a window is about one listing interval wide"
    # A write's call narrows the window it holds.
    narrowed = watch.points([Span(moments[0] - 0.001, moments[0] + 0.001)])
    assert narrowed[0].end - narrowed[0].start <= 0.002 + 1e-9
