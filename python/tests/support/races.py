"""Races that prove they raced.

A concurrent test is only worth something if its sides met: a reader that read before the
first commit and after the last, and never while one landed, proves nothing about a read that
meets a commit. So every concurrent test times what it races on one clock
(``time.monotonic``, this process's), finds each commit point as the store showed it (the
moment its record appeared in a listing of the log: ``CommitWatch``), counts the operations
(reads, jobs, VACUUMs) that began before a commit point and ended after it, and fails below a
floor it states (``assert_overlaps``).

A commit point is known to lie in a window: after the last listing of the log that did not
show its record began, before the first listing that did ended, and inside the call of the
write that made it (when the test knows it). An operation overlapped it only if it began
before that window and ended after it, so a count is never too high.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pyspark.sql import functions as F

from support.tables import TableRef

T = TypeVar("T")

#: The clock of every span and commit window: this process's monotonic clock.
clock = time.monotonic

#: A commit point's record: `commits/<txn>.json` (an append) or `replace/<sequence>.json`.
COMMIT_RECORD = re.compile(r"_txcommit/(?:commits/[0-9a-z]{16}|replace/[0-9]{20})\.json")
#: VACUUM's horizon record, written before it deletes a file an overwrite removed: the point
#: from which past snapshots holding such files are refused.
VACUUM_RECORD = re.compile(r"_txcommit/vacuum/[0-9]{20}\.json")
#: A multi-table transaction's decision: the commit point of every table it wrote.
DECISION_RECORD = re.compile(r"_txcommit/groups/[0-9a-z]+\.json")
#: How often a CommitWatch lists the log (seconds): the width of a commit window, about.
WATCH_INTERVAL_S = 0.05


@dataclass(frozen=True)
class Span:
    """From ``start`` to ``end`` on ``clock``."""

    start: float
    end: float

    def spans(self, point: Span) -> bool:
        """Began before ``point`` (a window holding one moment) and ended after it."""
        return self.start < point.start and point.end < self.end

    def meets(self, other: Span) -> bool:
        return self.start <= other.end and other.start <= self.end


def timed(call: Callable[[], T]) -> tuple[Span, T]:
    """Runs ``call``; its span and its result."""
    start = clock()
    result = call()
    return Span(start, clock()), result


@contextmanager
def spanning(into: list[Span]) -> Iterator[None]:
    """Appends the span of the block (also when it raises) to ``into``."""
    start = clock()
    try:
        yield
    finally:
        into.append(Span(start, clock()))


def point(at: float | None = None) -> Span:
    """A moment this process saw happen (a kill sent, a file created): a window of no width."""
    now = clock() if at is None else at
    return Span(now, now)


def overlapping(operations: Iterable[Span], points: Iterable[Span]) -> int:
    """How many of ``operations`` began before one of ``points`` and ended after it."""
    points = list(points)
    return sum(any(op.spans(p) for p in points) for op in operations)


def assert_overlaps(
    operations: Sequence[Span], points: Sequence[Span], floor: int, what: str
) -> int:
    """At least ``floor`` of ``operations`` began before one of ``points`` (commit points, a
    kill, ...) and ended after it; else the race did not happen and the test fails. Returns the
    count (and notes it, see ``note``)."""
    n = overlapping(operations, points)
    note(what, n, floor, len(operations), len(points))
    assert n >= floor, (
        f"{what}: only {n} of {len(operations)} began before one of the {len(points)} commit "
        f"points and ended after it; this test needs at least {floor} to have raced. "
        + timeline(operations, points)
    )
    return n


def timeline(operations: Sequence[Span], points: Sequence[Span]) -> str:
    """The spans and the commit windows, in seconds from the first of them."""
    zero = min([s.start for s in [*operations, *points]], default=0.0)

    def show(spans: Sequence[Span]) -> str:
        return ", ".join(f"{s.start - zero:.2f}-{s.end - zero:.2f}" for s in spans)

    return f"Operations: [{show(operations)}]; commit points within: [{show(points)}]"


def note(what: str, count: int, floor: int, operations: int, points: int) -> None:
    """Appends an overlap count to the file ``TXCOMMIT_TEST_OVERLAP_LOG`` names, if set (one
    JSON object a line), so a run can report how hard each race raced."""
    path = os.environ.get("TXCOMMIT_TEST_OVERLAP_LOG")
    if not path:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    entry = {
        "test": test,
        "what": what,
        "overlaps": count,
        "floor": floor,
        "operations": operations,
        "points": points,
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


# --- commit points, as the store shows them --------------------------------------------------


@dataclass
class CommitWatch:
    """Lists ``table``'s log every WATCH_INTERVAL_S in a thread while in use (``with``), and
    dates each commit record that appears: the commit point lies between the start of the last
    listing without it and the end of the first listing with it. Records there before the
    watch began are not commit points of the race."""

    table: TableRef
    interval: float = WATCH_INTERVAL_S
    #: Also dates VACUUM's horizon records (`vacuum/`) as points.
    vacuums: bool = False
    #: Dates only multi-table transactions' decisions (`groups/<id>.json`) kept in this table.
    decisions: bool = False
    _before: set[str] = field(default_factory=set)
    _began: float = 0.0
    _seen: dict[str, Span] = field(default_factory=dict)
    _appends: dict[str, bool] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _error: list[BaseException] = field(default_factory=list)
    listings: int = 0

    def _list(self) -> set[str]:
        if self.decisions:
            return {k for k in self.table.log_records(("groups",)) if DECISION_RECORD.fullmatch(k)}
        if not self.vacuums:
            return {k for k in self.table.log_records() if COMMIT_RECORD.fullmatch(k)}
        found = self.table.log_records(("commits", "replace", "vacuum"))
        return {k for k in found if COMMIT_RECORD.fullmatch(k) or VACUUM_RECORD.fullmatch(k)}

    def __enter__(self) -> CommitWatch:
        self._began = clock()
        self._before = self._list()
        self._thread = threading.Thread(target=self._run, name="commit-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        last_start = self._began
        try:
            while True:
                stopping = self._stop.is_set()
                start = clock()
                found = self._list()
                end = clock()
                self.listings += 1
                for name in found - self._before - self._seen.keys():
                    self._seen[name] = Span(last_start, end)
                last_start = start
                if stopping:
                    return
                self._stop.wait(self.interval)
        except BaseException as e:
            self._error.append(e)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def windows(self) -> dict[str, Span]:
        """Each record that appeared (its name in the log) and the window its point lies in."""
        return dict(self._seen)

    def points(self, writes: Sequence[Span] = ()) -> list[Span]:
        """The window of each commit point seen, narrowed to the call of the write that holds
        it when exactly one of ``writes`` meets it. A `commits/` copy of a replacing commit's
        record (written after its `replace/` record, derived work) and a fence are no commit
        point of a write and are left out."""
        if self._error:
            raise self._error[0]
        out = []
        for name, window in sorted(dict(self._seen).items(), key=lambda kv: kv[1].start):
            if name.startswith("_txcommit/commits/") and not self._is_append(name):
                continue
            holding = [w for w in writes if w.meets(window)]
            if len(holding) == 1:
                w = holding[0]
                window = Span(max(window.start, w.start), min(window.end, w.end))
            out.append(window)
        return out

    def _is_append(self, name: str) -> bool:
        if name not in self._appends:  # records are never rewritten: read each once
            data = self.table.read(name)
            record: dict[str, Any] = json.loads(data) if data else {}
            self._appends[name] = (
                bool(record) and "sequence" not in record and (record.get("operation") != "fence")
            )
        return self._appends[name]


# --- readers racing a writer ------------------------------------------------------------------


@dataclass
class Race:
    """What a race saw: each reader's reads (span, what it returned), the writes' spans, the
    commit points the store showed, and the overlaps each reader must show (``floor``)."""

    reads: list[list[tuple[Span, Any]]]
    writes: list[Span]
    points: list[Span]
    floor: int

    @property
    def last(self) -> int:
        """The number of the last write (``write(1..last)`` ran)."""
        return len(self.writes)

    def seen(self, reader: int) -> list[Any]:
        return [value for _, value in self.reads[reader]]

    def assert_overlaps(self, reader: int, who: str) -> int:
        """At least ``floor`` reads of ``reader`` began before a commit point and ended after."""
        spans = [span for span, _ in self.reads[reader]]
        return assert_overlaps(spans, self.points, self.floor, f"{who}: reads")


def race(
    write: Callable[[int], None],
    commits: int,
    readers: list[Callable[[], T]],
    table: TableRef,
    *,
    floor: int,
    most: int | None = None,
    vacuums: bool = False,
) -> Race:
    """Runs ``write(1..)`` while each reader reads in a loop in its own thread, from before
    the first commit (once each reader has read once) until after the last, and a CommitWatch
    dates ``table``'s commit points; returns what each read saw, and when.

    It writes ``commits`` times, and on (up to ``most`` times, twice ``commits`` unless set)
    until each reader has ``floor`` reads that began before a commit point and ended after it:
    a loaded machine's slower reads meet fewer commits each. The test then asserts the floor
    (``Race.assert_overlaps``). With ``vacuums``, VACUUM's horizon records are points too."""
    most = 2 * commits if most is None else most
    reads: list[list[tuple[Span, Any]]] = [[] for _ in readers]
    writes: list[Span] = []
    errors: list[BaseException] = []
    done = threading.Event()
    warm = [threading.Event() for _ in readers]

    def loop(i: int) -> None:
        try:
            while True:
                last = done.is_set()
                reads[i].append(timed(readers[i]))
                warm[i].set()
                if last:
                    return
        except BaseException as e:
            errors.append(e)
        finally:
            warm[i].set()

    def raced_enough(watch: CommitWatch) -> bool:
        # The reads running at the last commit point end first, so they count.
        ends = [len(r) + 1 for r in reads]
        deadline = clock() + 300
        while (
            not errors
            and clock() < deadline
            and any(len(r) < n for r, n in zip(reads, ends, strict=True))
        ):
            time.sleep(0.05)
        points = watch.points(writes)
        return all(overlapping([s for s, _ in list(r)], points) >= floor for r in reads)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(readers))]
    with CommitWatch(table, vacuums=vacuums) as watch:
        for t in threads:
            t.start()
        try:
            # The first read of a session pays for its start (seconds): the writes begin once
            # every reader reads at its own pace.
            for w in warm:
                w.wait(timeout=300)
            gen = 0
            while not errors and (gen < commits or (gen < most and not raced_enough(watch))):
                gen += 1
                with spanning(writes):
                    write(gen)
        finally:
            done.set()
            for t in threads:
                t.join()
    if errors:
        raise errors[0]
    return Race(reads, writes, watch.points(writes), floor)


@dataclass(frozen=True)
class Generations:
    """Transactions of ``rows`` rows tagged ``gen``, spread over ``parts`` partitions of ``k``."""

    parts: int
    rows: int

    def of(self, spark, gen: int):
        return (
            spark.range(0, self.rows, 1, 4)
            .withColumn("k", (F.col("id") % self.parts).cast("int"))
            .withColumn("gen", F.lit(gen))
        )

    def assert_whole(self, race: Race, reader: int, *, one_generation: bool, who: str) -> None:
        """Every read of ``reader`` saw whole transactions (an overwrite: exactly one
        generation), and at least the race's floor of its reads began before a commit point
        and ended after it."""
        seen: list[dict[int, int]] = race.seen(reader)
        torn = [s for s in seen if any(n != self.rows for n in s.values()) or not s]
        assert not torn, f"{who}: reads that showed part of a transaction: {torn} (of {len(seen)})"
        if one_generation:
            mixed = [s for s in seen if len(s) != 1]
            assert not mixed, f"{who}: reads that showed two generations at once: {mixed}"
        race.assert_overlaps(reader, who)


def rows_per_gen(spark, url: str) -> dict[int, int]:
    return {r["gen"]: r["count"] for r in spark.read.parquet(url).groupBy("gen").count().collect()}


def beside(
    loops: list[Callable[[threading.Event], None]], work: Callable[[threading.Event], None]
) -> None:
    """Runs ``work`` while each of ``loops`` runs in a thread of its own. Each is given an event
    set once ``work`` is done (a loop returns soon after) or a loop failed (``work`` may stop
    early); the first error of a loop is raised again here, after every thread ended."""
    errors: list[BaseException] = []
    done = threading.Event()

    def run(loop: Callable[[threading.Event], None]) -> None:
        try:
            loop(done)
        except BaseException as e:
            errors.append(e)
            done.set()

    threads = [threading.Thread(target=run, args=(loop,)) for loop in loops]
    for t in threads:
        t.start()
    try:
        work(done)
    finally:
        done.set()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
