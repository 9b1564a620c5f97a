"""The sizes users grow into: one txcommit append of a very large number of files on S3 (moto
behind the latency model), written for real through Spark, and what a reader pays afterwards.

Measured per job: total time; job commit (Spark's timer, and txcommit's stages); the commit
record's size; the server JVM's heap before the job (after a full GC) and at its peak during
it, sampled by ``jstat`` every 250 ms (heap in use, uncollected garbage included, so the peak
overstates what the job kept); then a plan of the table (``spark.read.parquet(url)``, its
schema and ``inputFiles()``), the read filter off and on, in sessions that never read it.

Outside CI (a 100,000-file job takes tens of minutes on 2 cores):
``txcommit bench --only large --stores s3 --large-files 100000 --merge-into
docs/benchmarks/results.json``.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

from txcommit.bench.protocols import Protocol


class HeapSampler:
    """The heap in use of one JVM, from ``jstat -gc`` (survivors, eden and old, in MB).

    ``peak_mb`` counts uncollected garbage (eden fills until the next young collection, so it
    moves with the collector's sizing); ``live_peak_mb`` is the largest heap a collection left
    (survivors and old, sampled right after a collection): what the JVM held, the figure a heap
    limit must fit."""

    def __init__(self, pid: int, interval_ms: int = 250) -> None:
        self.pid = pid
        self.interval_ms = interval_ms
        self.peak_mb = 0.0
        self.live_peak_mb = 0.0

    @staticmethod
    def _used_mb(header: list[str], values: list[str]) -> float:
        row = dict(zip(header, values, strict=False))
        return sum(float(row[k]) for k in ("S0U", "S1U", "EU", "OU")) / 1024

    def now_mb(self, collect: bool = False) -> float:
        """The heap in use now; after a full GC first if ``collect``."""
        if collect:
            subprocess.run(["jcmd", str(self.pid), "GC.run"], capture_output=True, check=True)
        out = subprocess.run(
            ["jstat", "-gc", str(self.pid)], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        return self._used_mb(out[0].split(), out[1].split())

    @contextlib.contextmanager
    def sampling(self) -> Iterator[None]:
        """Samples the heap until the block ends; the largest sample is ``peak_mb``."""
        proc = subprocess.Popen(
            ["jstat", "-gc", str(self.pid), str(self.interval_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )

        def read() -> None:
            assert proc.stdout is not None
            header: list[str] = []
            collections: tuple[str, str] | None = None
            for line in proc.stdout:
                parts = line.split()
                if not parts:
                    continue
                if parts[0] == "S0C":
                    header = parts
                elif header:
                    self.peak_mb = max(self.peak_mb, self._used_mb(header, parts))
                    row = dict(zip(header, parts, strict=False))
                    counts = (row["YGC"], row["FGC"])
                    if collections is not None and counts != collections:
                        kept = sum(float(row[k]) for k in ("S0U", "S1U", "OU")) / 1024
                        self.live_peak_mb = max(self.live_peak_mb, kept)
                    collections = counts

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            yield
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            reader.join(timeout=30)


def large_job(bench: Any, proto: Protocol, files: int, sizes: Any) -> dict[str, Any]:
    """One append of ``files`` files on S3 through ``proto`` (txcommit): ``files / partitions``
    tasks, each writing one small file in each of ``sizes.large_partitions`` directories."""
    parts = max(1, min(files, sizes.large_partitions))
    tasks = max(1, files // parts)
    rows = tasks * parts * sizes.large_rows_per_file
    url = bench.url("s3", f"large-{proto.key}-{files}")

    def build(spark: Any) -> Any:
        from pyspark.sql import functions as F

        return spark.range(0, rows, 1, tasks).withColumn("p", F.col("id") % parts)

    heap = HeapSampler(bench.server.pid)
    before = heap.now_mb(collect=True)
    bench.say(f"  s3 {files} files  append  {proto.key} (heap before: {before:.0f} MB)")
    with heap.sampling():
        r: dict[str, Any] = bench.write(proto, "s3", url, "append", build, "p")
    r.update(files=tasks * parts, tasks=tasks, partitions=parts, rows=rows)
    r["heap_before_mb"] = round(before, 1)
    r["heap_peak_mb"] = round(heap.peak_mb, 1)
    r["heap_live_peak_mb"] = round(heap.live_peak_mb, 1)
    summary = bench._success("s3", url) or {}
    prefix = url.split("/", 3)[3]
    if summary.get("txn"):
        head = bench._client().head_object(
            Bucket=url.split("/")[2], Key=f"{prefix}/_txcommit/commits/{summary['txn']}.json"
        )
        r["record_bytes"] = int(head["ContentLength"])
    r["reader"] = _plans(bench, url)
    bench.say(
        f"        total {r['total_s']:.1f} s, commit {r['commit_s']} s, record "
        f"{r.get('record_bytes', 0):,} bytes, heap peak {r['heap_peak_mb']:.0f} MB; plans "
        + ", ".join(f"filter {k} {v['plan_s']:.2f} s" for k, v in r["reader"].items())
    )
    return r


def _plans(bench: Any, url: str) -> dict[str, dict[str, Any]]:
    """A plan of the table in a session that never read it, the read filter off then on."""
    from txcommit._names import READ_FILTER_CONF
    from txcommit.bench.reads import count_requests

    out: dict[str, dict[str, Any]] = {}
    for flt in ("off", "on"):
        spark = bench.session({READ_FILTER_CONF: "true" if flt == "on" else "false"})
        try:
            mark = bench._requests_mark()
            start = time.perf_counter()
            df = spark.read.parquet(url)
            df.schema  # noqa: B018 - forces the plan
            n = len(df.inputFiles())
            elapsed = time.perf_counter() - start
            ops, log = count_requests(bench._requests_since(mark))
        finally:
            spark.stop()
        out[flt] = {"plan_s": round(elapsed, 3), "files": n, "requests": ops, "log_requests": log}
    return out
