"""A job that is still running while a test acts beside it (VACUUM, a reader, a fence)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from txcommit.conformance.protocol import pause_at

from support.races import Span, clock
from support.tables import TableRef, txn_of
from support.waiting import wait_for

#: The keys showing that a task of a store wrote its output, where they are not its data
#: files: s3-multipart leaves each file as an open upload (its last part sent when the task's
#: writer closes it).
TASK_OUTPUT: dict[str, Callable[[TableRef], list[str]]] = {
    "s3-multipart": TableRef.open_uploads,
}


class SlowAppend:
    """An append of ids ``start`` to ``start + 99`` to ``table`` in two tasks, run in a thread:
    the first task writes its file at once, the second works on for ``seconds``."""

    def __init__(self, spark, table: TableRef, start: int, seconds: int) -> None:
        self.spark, self.table, self.start_id, self.seconds = spark, table, start, seconds
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._began = self._ended = 0.0

    def _run(self) -> None:
        # The second task's first row.
        slow = pause_at("id", self.start_id + 50, self.seconds * 1000)
        try:
            df = self.spark.range(self.start_id, self.start_id + 100, 1, 2).select(slow.alias("id"))
            df.write.mode("append").parquet(self.table.url)
        except BaseException as e:
            self.error = e
        finally:
            self._ended = clock()

    def start(self, known_txns: set[str]) -> SlowAppend:
        """Starts the job; returns once its first task has written its file (a transaction not
        in ``known_txns``), or on s3-multipart left its upload open."""
        self._began = clock()
        self._thread.start()

        def first_task_done() -> bool:
            keys = TASK_OUTPUT.get(self.table.store, TableRef.data_files)(self.table)
            return any(txn_of(k) not in (None, *known_txns) for k in keys)

        wait_for(first_task_done, 120, "the job's first task to write its file")
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def span(self) -> Span:
        """From the job's start to its end (once joined)."""
        assert not self.running, "the job is still running"
        return Span(self._began, self._ended)

    def join(self) -> BaseException | None:
        """Waits for the job; what it raised, if anything."""
        self._thread.join(timeout=300)
        assert not self._thread.is_alive(), "the job did not end within 300 s"
        return self.error
