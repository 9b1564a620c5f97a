"""A table of a million data files (``txcommit bench --only bigtable``): its checkpoint written
for real through Spark, then planned by Spark and by the Python readers, on the modelled S3.

* The table is synthesised (:func:`txcommit.bench.synth.big_table`): a log-only txcommit table
  of ``commits`` appends of ``files_per_commit`` files each (default 1,000 x 1,000), each append
  writing one file per task in each of ``partitions`` directories ``p=<k>``, its commit records
  encoded with the project's own encoder. Only the data files of the first and the last append
  are objects: a plan from the log of a log-only table lists no data and opens one file (the
  footer schema inference reads), which the benchmark checks from the endpoint's request log
  (every request for a data key is counted, and a data key the store does not have fails the
  run). PUTting a million objects would take about 50 minutes at the rate of the read section's
  synthesis, and moto holds every object in the benchmark's memory.
* Checkpoint: ``TXCOMMIT CHECKPOINT '<url>'`` on a server started for it (a JVM that never read
  the table, after a checkpoint of a small table paid for loading the code): the JVM reads every
  commit record and writes the checkpoint covering them. Timed by the client.
* Plans: on another fresh server (after warm-up plans of two small tables), ``spark.read.
  parquet(url)``, its schema (the file index is built then) and ``inputFiles()`` (the million
  names shipped to the client), cold (first plan) then warm (``repeats`` more, median). Filter
  on only: an unfiltered listing would find only the few data objects there are.
* Python: in a fresh process, ``txcommit.dataset(url)`` and the number of its files, cold then
  warm (median); then one cold read again under cProfile (caches emptied) for what dominates.
* Heap: both servers run with ``spark.driver.memory`` = :data:`DRIVER_MEMORY`; ``jstat`` samples
  the heap in use (garbage included) during the checkpoint and the plans; after each, the heap
  after a full GC (what the JVM keeps: its caches of the decoded checkpoint), and after the plans
  the classes holding most of it (``jcmd GC.class_histogram``). ``jcmd Thread.print`` samples
  the busy threads' stacks for what dominates the cold plan and the checkpoint write.

Outside CI (the full size took 5 minutes on 2 cores at a low load, 17-19 at a load average of
11-20, most of it in the plans):
``txcommit bench --only bigtable --stores s3 --merge-into docs/benchmarks/results.json``.
"""

from __future__ import annotations

import cProfile
import multiprocessing
import os
import pstats
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from txcommit._names import READ_FILTER_CONF
from txcommit.bench.large import HeapSampler
from txcommit.bench.synth import big_table

if TYPE_CHECKING:
    from txcommit.bench.protocols import Protocol
    from txcommit.bench.reads import ReadBench, Table
    from txcommit.bench.runner import Bench, Sizes
    from txcommit.server import RunningServer

#: The section's servers' heap (``spark.driver.memory``): room above the 2 GB target, so a
#: miss is measured rather than an OutOfMemoryError.
DRIVER_MEMORY = "4g"
#: How often the busy threads' stacks are sampled (``jcmd Thread.print``), seconds.
STACK_INTERVAL_S = 1.0
#: Where a busy thread is, first match wins: (category, substrings of a frame, innermost frames
#: searched: 0 = the whole stack). The store's I/O is looked for near the top; the codecs
#: anywhere (Jackson's tree is built and written many frames below them).
STACK_CATEGORIES: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("store read (socket)", ("SocketInputStream", "socketRead", "NioSocketImpl.read"), 12),
    ("store write (socket)", ("SocketOutputStream", "socketWrite", "NioSocketImpl.write"), 12),
    ("checkpoint JSON decode", ("CheckpointCodec$.decode",), 0),
    ("checkpoint JSON encode", ("CheckpointCodec$.encode",), 0),
    ("record JSON decode", ("RecordCodec$.decode",), 0),
    ("Connect response (gRPC)", ("io.grpc", "com.google.protobuf"), 12),
    ("Spark file index", ("FileIndex", "PartitioningUtils"), 0),
)


def run(
    bench: Bench,
    tx: Protocol,
    sizes: Sizes,
    start_server: Callable[[str, dict[str, str]], RunningServer],
) -> dict[str, Any]:
    """The section: one row of measurements of one synthesised table."""
    from txcommit.bench.reads import ReadBench

    began = time.monotonic()
    commits, per = sizes.bigtable_commits, sizes.bigtable_files_per_commit
    rb = ReadBench(bench, tx, sizes, lambda name: start_server(name, {}))
    big = rb.table("txcommit", f"bigtable-{commits}x{per}", txns=commits)
    warm_tx = rb.table("txcommit", "bigtable-warmup-tx", txns=3)
    warm_plain = rb.table("plain", "bigtable-warmup-plain", dirs=3)
    row: dict[str, Any] = {
        "store": "s3",
        "commits": commits,
        "files_per_commit": per,
        "files": commits * per,
        "partitions": sizes.bigtable_partitions,
        "driver_memory": DRIVER_MEMORY,
    }
    body = rb.sample_parquet()
    row["synthesis"] = _synthesise(rb, big, body, commits, per, sizes.bigtable_partitions)
    rb.synthesise([warm_tx, warm_plain], body)
    confs = {"spark.driver.memory": DRIVER_MEMORY}
    # The machine's load (1-minute average) as each part starts: its figures move with it.
    row["load"] = {}
    server = start_server("bigtable-checkpoint", confs)
    row["load"]["checkpoint"] = round(os.getloadavg()[0], 1)
    row["checkpoint"] = _checkpoint(bench, tx, rb, big, warm_tx, server)
    server = start_server("bigtable-plans", confs)
    row["load"]["plans"] = round(os.getloadavg()[0], 1)
    row["spark"] = _plans(bench, rb, big, [warm_tx, warm_plain], server)
    row["load"]["python"] = round(os.getloadavg()[0], 1)
    row["python"] = _python(bench, big, commits * per, warm_tx, sizes.repeats)
    row["load"]["end"] = round(os.getloadavg()[0], 1)
    row["data_requests"] = _data_requests(
        row["checkpoint"].pop("entries") + row["spark"].pop("entries"), big
    )
    row["elapsed_s"] = round(time.monotonic() - began, 1)
    return row


# ---------------------------------------------------------------------- synthesis
def _synthesise(
    rb: ReadBench, t: Table, body: bytes, commits: int, per: int, dirs: int
) -> dict[str, Any]:
    """The table's log, and the data files of its first and last append, PUT unmetered."""
    start = int(time.time() * 1000) - 2 * 86_400_000 - commits * 1000
    began = time.monotonic()
    objects: list[tuple[str, bytes]] = []
    data: list[str] = []
    record_bytes = 0
    for i, (key, names, encoded) in enumerate(
        big_table(t.key, commits, per, dirs, len(body), start, seed=rb.bench.run_id)
    ):
        objects.append((key, encoded))
        if names:
            record_bytes += len(encoded)
        if i in (1, commits):  # the first and the last append (0 is the creation checkpoint)
            data += [f"{t.key}/{n}" for n in names]
    encoded_s = time.monotonic() - began
    objects += [(k, body) for k in data]
    rb.say(
        f"  bigtable: {commits} records ({record_bytes:,} bytes, encoded in {encoded_s:.1f} s) "
        f"and {len(data)} data files of {commits * per:,}"
    )
    began = time.monotonic()
    rb.upload(objects)
    put_s = time.monotonic() - began
    rb.say(f"        {len(objects)} PUTs in {put_s:.1f} s")
    return {
        "objects": len(objects),
        "data_objects": len(data),
        "record_bytes": record_bytes,
        "encode_s": round(encoded_s, 1),
        "put_s": round(put_s, 1),
    }


# ---------------------------------------------------------------------- the JVM
class StackSampler:
    """Where the busy threads of one JVM are, from ``jcmd Thread.print`` every
    :data:`STACK_INTERVAL_S`: per sample, each runnable thread with a frame of txcommit or of
    Spark SQL counts once, under the first category of :data:`STACK_CATEGORIES` its stack
    matches, else under its innermost txcommit frame (``other: ...``)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.counts: Counter[str] = Counter()
        self.samples = 0

    def classify(self, stack: str) -> str | None:
        if "java.lang.Thread.State: RUNNABLE" not in stack:
            return None
        if "io.txcommit" not in stack and "org.apache.spark.sql" not in stack:
            return None
        frames = [line.strip()[3:] for line in stack.splitlines() if line.strip().startswith("at ")]
        for name, needles, depth in STACK_CATEGORIES:
            if any(n in f for f in frames[: depth or None] for n in needles):
                return name
        own = next((f for f in frames if f.startswith("io.txcommit")), frames[0] if frames else "")
        return "other: " + own.split("(")[0]

    def sample(self) -> None:
        out = subprocess.run(
            ["jcmd", str(self.pid), "Thread.print"], capture_output=True, text=True, check=False
        ).stdout
        self.samples += 1
        for stack in out.split("\n\n"):
            category = self.classify(stack)
            if category is not None:
                self.counts[category] += 1

    @contextmanager
    def sampling(self) -> Iterator[None]:
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(STACK_INTERVAL_S):
                self.sample()

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=60)

    def summary(self, top: int = 6) -> dict[str, Any]:
        return {"samples": self.samples, "busy": dict(self.counts.most_common(top))}


def heap_histogram(pid: int, top: int = 8) -> list[dict[str, Any]]:
    """The classes holding most of a JVM's live heap (``jcmd GC.class_histogram``, which runs a
    full GC first): class, instances, MB."""
    out = subprocess.run(
        ["jcmd", str(pid), "GC.class_histogram"], capture_output=True, text=True, check=True
    ).stdout
    return parse_histogram(out, top)


def parse_histogram(text: str, top: int) -> list[dict[str, Any]]:
    """The ``top`` rows by bytes of a class histogram (`` num: instances bytes class``)."""
    rows: list[tuple[int, str, int]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].rstrip(":").isdigit():
            rows.append((int(parts[2]), parts[3], int(parts[1])))
    return [
        {"class": name, "instances": n, "mb": round(size / 2**20)}
        for size, name, n in sorted(rows, reverse=True)[:top]
    ]


def _checkpoint(
    bench: Bench, tx: Protocol, rb: ReadBench, big: Table, warm: Table, server: RunningServer
) -> dict[str, Any]:
    """``TXCOMMIT CHECKPOINT`` of the table on a fresh server, after one of a small table."""
    from txcommit.bench.runner import BUCKET
    from txcommit.maintenance import checkpoint

    try:
        spark = bench.session(tx.session_confs("s3"), server)
        try:
            checkpoint(spark, warm.url).collect()  # loads the checkpoint code: not measured
            heap, stacks = HeapSampler(server.pid), StackSampler(server.pid)
            before = heap.now_mb(collect=True)
            mark = bench._requests_mark()
            with heap.sampling(), stacks.sampling():
                start = time.perf_counter()
                got = checkpoint(spark, big.url).collect()[0].asDict()
                elapsed = time.perf_counter() - start
            entries = bench._requests_since(mark)
            after = heap.now_mb(collect=True)
        finally:
            spark.stop()
    finally:
        server.stop()
    listed = bench._client().list_objects_v2(
        Bucket=BUCKET, Prefix=f"{big.key}/_txcommit/checkpoints/"
    )
    newest = max(listed.get("Contents", []), key=lambda o: o["Key"], default=None)
    if not got.get("written") or newest is None:
        raise RuntimeError(f"TXCOMMIT CHECKPOINT '{big.url}' wrote nothing: {got}")
    from txcommit.bench.reads import count_requests

    ops, log = count_requests(entries)
    out = {
        "seconds": round(elapsed, 2),
        "bytes": int(newest["Size"]),
        "key": newest["Key"].rsplit("/", 1)[1],
        "result": {k: got.get(k) for k in ("checkpoint", "transactions", "files")},
        "heap_before_mb": round(before, 1),
        "heap_peak_mb": round(heap.peak_mb, 1),
        "heap_live_peak_mb": round(heap.live_peak_mb, 1),
        "heap_after_gc_mb": round(after, 1),
        "requests": ops,
        "log_requests": log,
        "profile": stacks.summary(),
        "entries": entries,
    }
    rb.say(
        f"  bigtable: checkpoint {out['key']} {out['bytes']:,} bytes in {elapsed:.1f} s; heap "
        f"{before:.0f} MB before, peak {heap.peak_mb:.0f} MB, {after:.0f} MB after GC; "
        f"{out['profile']}"
    )
    return out


def _plan_once(spark: Any, url: str) -> dict[str, Any]:
    start = time.perf_counter()
    df = spark.read.parquet(url)
    df.schema  # noqa: B018 - the plan: the file index is built, a footer read for the schema
    schema_s = time.perf_counter() - start
    files = len(df.inputFiles())
    return {"schema_s": schema_s, "plan_s": time.perf_counter() - start, "files": files}


def _plans(
    bench: Bench, rb: ReadBench, big: Table, warmups: list[Table], server: RunningServer
) -> dict[str, Any]:
    """Cold then warm plans of the table on a fresh server (filter on)."""
    from txcommit.bench.reads import count_requests

    try:
        spark = bench.session({READ_FILTER_CONF: "true"}, server)
        try:
            for t in warmups:
                for _ in range(2):
                    _plan_once(spark, t.url)
            heap, stacks = HeapSampler(server.pid), StackSampler(server.pid)
            before = heap.now_mb(collect=True)
            with heap.sampling():
                mark = bench._requests_mark()
                with stacks.sampling():
                    cold = _plan_once(spark, big.url)
                cold_entries = bench._requests_since(mark)
                warm: list[dict[str, Any]] = []
                warm_entries: list[dict[str, Any]] = []
                warm_stacks = StackSampler(server.pid)
                with warm_stacks.sampling():
                    for _ in range(rb.sizes.repeats):
                        mark = bench._requests_mark()
                        warm.append(_plan_once(spark, big.url))
                        last_warm = bench._requests_since(mark)  # each warm plan asks the same
                        warm_entries += last_warm
            after = heap.now_mb(collect=True)
            histogram = heap_histogram(server.pid)
        finally:
            spark.stop()
    finally:
        server.stop()
    entries = cold_entries + warm_entries
    expected = (big.txns or 0) * rb.sizes.bigtable_files_per_commit
    for p in [cold, *warm]:
        if p["files"] != expected:
            raise RuntimeError(
                f"planning {big.url} listed {p['files']} files, expected {expected}: the "
                "measurement is refused"
            )
    ops, log = count_requests(cold_entries)
    wops, wlog = count_requests(last_warm)
    out: dict[str, Any] = {
        "cold": {
            "plan_s": round(cold["plan_s"], 3),
            "schema_s": round(cold["schema_s"], 3),
            "files": cold["files"],
            "requests": ops,
            "log_requests": log,
            "profile": stacks.summary(),
        },
        "warm": {
            "plan_s": round(statistics.median(p["plan_s"] for p in warm), 3),
            "schema_s": round(statistics.median(p["schema_s"] for p in warm), 3),
            "samples": [round(p["plan_s"], 3) for p in warm],
            "files": warm[-1]["files"],
            "requests": wops,
            "log_requests": wlog,
            "profile": warm_stacks.summary(),
        },
        "heap_before_mb": round(before, 1),
        "heap_peak_mb": round(heap.peak_mb, 1),
        "heap_live_peak_mb": round(heap.live_peak_mb, 1),
        "heap_after_gc_mb": round(after, 1),
        "heap_histogram": histogram,
        "entries": entries,
    }
    rb.say(
        f"  bigtable: Spark plan cold {cold['plan_s']:.2f} s (schema {cold['schema_s']:.2f} s), "
        f"warm {out['warm']['plan_s']:.2f} s {out['warm']['samples']}; heap {before:.0f} MB "
        f"before, peak {heap.peak_mb:.0f} MB, {after:.0f} MB after GC; {out['cold']['profile']}; "
        f"live heap by class: {histogram}"
    )
    return out


def _data_requests(entries: list[dict[str, Any]], big: Table) -> dict[str, Any]:
    """Requests for the table's data keys (not its log) while the JVM checkpointed and planned:
    by operation, and any the store could not answer (a data file that is not an object),
    which refuses the measurement."""
    from txcommit.bench.reads import log_area

    data = [
        e for e in entries if (e.get("key") or "").startswith(big.key + "/") and log_area(e) is None
    ]
    missing = sorted({e["key"] for e in data if e.get("status") == 404})
    if missing:
        raise RuntimeError(
            f"the plans of {big.url} asked for {len(missing)} data files that are not objects "
            f"(first: {missing[0]}): synthesise them too"
        )
    return dict(sorted(Counter(e["op"] for e in data).items()))


# ---------------------------------------------------------------------- Python
def _python(
    bench: Bench, big: Table, big_files: int, warmup: Table, repeats: int
) -> dict[str, Any]:
    """The Python reader's plans, in a fresh process (the endpoint runs in this one), after
    two reads of a small table there (imports, the S3 client)."""
    from txcommit_store_s3 import DEFAULT_REGION, DUMMY_KEY, DUMMY_SECRET

    assert bench.s3 is not None
    options = {
        "endpoint": bench.s3.endpoint,
        "region": DEFAULT_REGION,
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
        "allow_http": True,
    }
    url, small = (t.url.replace("s3a://", "s3://", 1) for t in (big, warmup))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        out: dict[str, Any] = pool.submit(_python_reads, url, small, options, repeats).result()
    for temp in ("cold", "warm"):
        if out[temp]["files"] != big_files:
            raise RuntimeError(
                f"txcommit.dataset({url}) ({temp}) held {out[temp]['files']} files, expected "
                f"{big_files}: the measurement is refused"
            )
    bench.say(
        f"  bigtable: Python cold {out['cold']['plan_s']:.2f} s, warm {out['warm']['plan_s']:.2f} "
        f"s; peak RSS {out['max_rss_mb']:.0f} MB; profile {out['profile']}"
    )
    return out


#: Functions of the Python reader's cold plan reported from its profile (cumulative seconds).
PROFILED = (
    ("store reads (the checkpoint, listings)", "txcommit/adapters/base.py", "read"),
    ("json.loads", "json/__init__.py", "loads"),
    ("decode_checkpoint", "txcommit/table/checkpoints.py", "decode_checkpoint"),
    ("visible_files", "txcommit/table/view.py", "visible_files"),
    ("pyarrow.dataset.dataset", "pyarrow/dataset.py", "dataset"),
)


def _python_reads(url: str, warmup: str, options: dict[str, Any], repeats: int) -> dict[str, Any]:
    """In a worker process: ``txcommit.dataset(url)`` cold (after two of ``warmup``), then warm,
    then cold again under cProfile (the caches emptied)."""
    import resource

    import txcommit
    from txcommit.table import view

    def once(table: str = url) -> dict[str, Any]:
        start = time.perf_counter()
        ds = txcommit.dataset(table, storage_options=options)
        return {"plan_s": time.perf_counter() - start, "files": len(ds.files)}

    once(warmup)
    once(warmup)
    cold = once()
    warm = [once() for _ in range(repeats)]
    view.clear_caches()
    profiler = cProfile.Profile()
    profiler.enable()
    profiled = once()
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]  # no stubs for .stats
    found: dict[str, float] = {}
    for label, where, name in PROFILED:
        for (file, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.items():
            if func == name and file.endswith(where):
                found[label] = round(max(found.get(label, 0.0), ct), 2)
    return {
        "cold": {"plan_s": round(cold["plan_s"], 3), "files": cold["files"]},
        "warm": {
            "plan_s": round(statistics.median(w["plan_s"] for w in warm), 3),
            "samples": [round(w["plan_s"], 3) for w in warm],
            "files": warm[-1]["files"],
        },
        "profile": {"total_s": round(profiled["plan_s"], 2), **found},
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
