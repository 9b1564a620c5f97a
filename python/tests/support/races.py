"""Readers racing a writer: each reader reads IN A LOOP while the writer commits in a loop, and
every read must show each transaction whole or not at all."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import functions as F


@dataclass(frozen=True)
class Generations:
    """Transactions of ``rows`` rows tagged ``gen``, spread over ``parts`` partitions of ``k``."""

    parts: int
    rows: int

    def of(self, spark, gen: int):  # noqa: ANN001, ANN201 - Connect session and DataFrame
        return (
            spark.range(0, self.rows, 1, 4)
            .withColumn("k", (F.col("id") % self.parts).cast("int"))
            .withColumn("gen", F.lit(gen))
        )

    def assert_whole(self, seen: list[dict[int, int]], one_generation: bool, who: str) -> None:
        """Every read saw whole transactions (an overwrite: exactly one generation), and the
        reads overlapped the commits (they saw more than one generation)."""
        torn = [s for s in seen if any(n != self.rows for n in s.values()) or not s]
        assert not torn, f"{who}: reads that showed part of a transaction: {torn} (of {len(seen)})"
        if one_generation:
            mixed = [s for s in seen if len(s) != 1]
            assert not mixed, f"{who}: reads that showed two generations at once: {mixed}"
        gens = {g for s in seen for g in s}
        assert len(gens) > 1, f"{who}: the reads never overlapped a commit ({len(seen)} reads)"


def rows_per_gen(spark, url: str) -> dict[int, int]:  # noqa: ANN001
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
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
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


def race(
    write: Callable[[int], None], commits: int, readers: list[Callable[[], dict[int, int]]]
) -> list[list[dict[int, int]]]:
    """Runs ``write(1..commits)`` while each reader reads in a loop in its own thread, from
    before the first commit until after the last; returns what each reader's reads saw."""
    seen: list[list[dict[int, int]]] = [[] for _ in readers]

    def reading(i: int) -> Callable[[threading.Event], None]:
        def loop(done: threading.Event) -> None:
            while True:
                last = done.is_set()
                seen[i].append(readers[i]())
                if last:
                    return

        return loop

    def writing(_: threading.Event) -> None:
        for gen in range(1, commits + 1):
            write(gen)

    beside([reading(i) for i in range(len(readers))], writing)
    return seen
