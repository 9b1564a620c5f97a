"""The read section of ``txcommit bench``: what planning ``spark.read.parquet(url)`` costs with
txcommit's read filter on and off, on the S3 latency model, cold and warm, with and without a
checkpoint, and on a plain Hive-style table that txcommit never wrote.

* Tables are synthesised object by object (:mod:`txcommit.bench.synth`, the project's own
  record encoder), uploaded with parallel PUTs while the latency model is switched off
  (nothing is measured then).
* COLD: the first plans of a table on a Connect server started for the measurement (a fresh
  JVM), after a warm-up on two other small tables (one txcommit, one plain) with the filter
  off and on, so the JVM's own start-up (class loading, JIT, the S3A client) is paid before:
  what is left is what a server that has never seen the table pays for it. The filter-off plan
  runs first (it reads no log, so it warms nothing the filter uses), then the filter-on plan
  (its caches of records, checkpoints and table roots have never seen the table).
* WARM: then ``repeats`` more plans of each, off and on alternately, in the same JVM; the
  median of each (fewer, at least one, once a table's warm plans took ``WARM_BUDGET_S``).
* Checkpoint: ``TXCOMMIT CHECKPOINT '<url>'`` on every txcommit table after the cold server
  without checkpoints stopped; then a second fresh server measures the tables again.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from txcommit._names import READ_FILTER_CONF
from txcommit.bench.read_report import AS_OF, PRUNED, PRUNED_OFF
from txcommit.bench.synth import partitioned_table, plain_table, txcommit_table

if TYPE_CHECKING:
    from txcommit.bench.protocols import Protocol
    from txcommit.bench.runner import Bench, Sizes
    from txcommit.server import RunningServer

#: Committed transactions of the table that gets uncommitted leftovers and a VACUUM.
LEFTOVER_TABLE_TXNS = 100
#: The warm-up tables of a fresh server: transactions and partition directories.
WARMUP_TXNS = 3
WARMUP_DIRS = 3
#: Warm plans of a table stop repeating (after the first pair) once they took this long: a
#: plan of a minute or more varies little against its length, and the default run must fit
#: its budget.
WARM_BUDGET_S = 60.0
#: Parallel PUTs while synthesising (per process).
UPLOAD_THREADS = 8
#: From this many objects on, synthesis uploads from this many worker processes, in chunks.
PROCESS_UPLOAD_MIN = 2000
UPLOAD_PROCESSES = 2
UPLOAD_CHUNK = 1000
#: The read option of a time-travel read.
AS_OF_OPTION = "txcommit.asOf"
#: The filter of a pruned plan of the partitioned table, and the "filter" of its rows.
PRUNE_FILTER = "k = 7"
#: Synthesised transactions committed this long before the run.
HISTORY_AGO_MS = 2 * 86_400_000


@dataclass(frozen=True)
class Table:
    """A synthesised table: ``kind`` "txcommit" (a log-only table txcommit created, ``txns``
    appends, one file each, in the table root), "listing" (the same records in a table txcommit
    adopted, read by listing), "partitioned" (a log-only table of one partitioned write, one file
    in each of ``dirs`` directories ``k=<i>``) or "plain" (one file in each of ``dirs``
    directories ``k=<i>``, no log)."""

    kind: str
    key: str
    txns: int | None
    dirs: int
    bucket: str

    @property
    def url(self) -> str:
        return f"s3a://{self.bucket}/{self.key}"

    @property
    def files(self) -> int:
        if self.kind in ("txcommit", "listing"):
            assert self.txns is not None  # every table of appends has its transaction count
            return self.txns
        return self.dirs


def log_area(entry: dict[str, Any]) -> str | None:
    """Which part of a txcommit log a request touched: the directory under ``_txcommit/``
    (``commits``, ``checkpoints``, ``replace``...), ``probe`` for the existence check of
    ``_txcommit`` itself (a HEAD of ``<dir>/_txcommit`` or a LIST of ``<dir>/_txcommit/``),
    None for a request outside any log."""
    path = entry.get("key") or entry.get("prefix") or ""
    parts = path.split("/")
    if "_txcommit" not in parts:
        return None
    rest = parts[parts.index("_txcommit") + 1 :]
    return rest[0] if len(rest) >= 2 and rest[0] else "probe"


def count_requests(entries: Iterable[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """(requests by operation, log requests by "<operation> <area>")."""
    ops: Counter[str] = Counter()
    log: Counter[str] = Counter()
    for e in entries:
        ops[e["op"]] += 1
        area = log_area(e)
        if area is not None:
            log[f"{e['op']} {area}"] += 1
    return dict(sorted(ops.items())), dict(sorted(log.items()))


class ReadBench:
    """Runs the read section against the bench's endpoint; ``start_server(name)`` starts a
    fresh Connect server configured like the bench's own (its log named after ``name``)."""

    def __init__(
        self,
        bench: Bench,
        txcommit: Protocol,
        sizes: Sizes,
        start_server: Callable[[str], RunningServer],
        progress: Callable[[list[dict[str, Any]], dict[str, Any]], None] | None = None,
    ) -> None:
        self.bench = bench
        self.txcommit = txcommit
        self.sizes = sizes
        self.start_server = start_server
        self.progress = progress or (lambda rows, info: None)
        self.say = bench.say
        self.info: dict[str, Any] = {}
        self.rows: list[dict[str, Any]] = []

    def table(self, kind: str, name: str, txns: int | None = None, dirs: int = 1) -> Table:
        from txcommit.bench.runner import BUCKET

        return Table(kind, f"{self.bench.run_id}/{name}", txns, dirs, BUCKET)

    # ------------------------------------------------------------------ the section
    def run(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        started = time.monotonic()
        sizes = self.sizes
        self.info["repeats"] = sizes.repeats
        self.info["no_checkpoint_max"] = sizes.read_no_checkpoint_max
        tx_tables = [self.table("txcommit", f"read-tx-{n}", txns=n) for n in sizes.read_txns]
        plain = (
            [self.table("plain", "read-plain", dirs=sizes.read_partitions)]
            if sizes.read_partitions > 0
            else []
        )
        partitioned = (
            [self.table("partitioned", "read-partitioned", dirs=sizes.read_partitions)]
            if sizes.read_partitions > 0
            else []
        )
        listing = (
            [self.table("listing", "read-listing", txns=sizes.read_listing_txns)]
            if sizes.read_listing_txns > 0
            else []
        )
        warmups = [
            self.table("txcommit", "read-warmup-tx", txns=WARMUP_TXNS),
            self.table("plain", "read-warmup-plain", dirs=WARMUP_DIRS),
        ]
        leftovers = (
            self.table("txcommit", "read-leftovers", txns=LEFTOVER_TABLE_TXNS)
            if sizes.read_leftovers
            else None
        )
        body = self.sample_parquet()
        extra = plain + partitioned + listing
        self.synthesise(tx_tables + extra + warmups + ([leftovers] if leftovers else []), body)
        bare = [t for t in tx_tables if (t.txns or 0) <= sizes.read_no_checkpoint_max]
        self.measure("cold-1", bare + extra, warmups, checkpoint=False)
        # the warm-up table gets one too: the cold plans with a checkpoint must not pay for
        # loading the JVM's checkpoint code
        # the table read by listing too: txcommit's appends leave automatic checkpoints
        if self.checkpoint_all(tx_tables + listing, warmups[:1]):
            self.measure("cold-2", tx_tables + listing, warmups, checkpoint=True)
        if leftovers is not None:
            self.add(self.leftovers(leftovers, body))
        self.info["elapsed_s"] = round(time.monotonic() - started, 1)
        return self.rows, self.info

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Keeps measured rows, and hands them to ``progress`` (an interrupted run keeps them)."""
        self.rows += rows
        self.progress(self.rows, self.info)

    # ------------------------------------------------------------------ synthesis
    def sample_parquet(self) -> bytes:
        """The bytes of one real Parquet file (100 longs, column ``id``) written through Spark
        with txcommit on the bench's server: every synthesised data file is a copy."""
        from txcommit.bench.runner import BUCKET, is_data_key

        table = self.table("txcommit", "read-sample", txns=1)
        spark = self.bench.session(self.txcommit.session_confs("s3"))
        try:
            spark.range(0, 100, 1, 1).write.mode("append").parquet(table.url)
        finally:
            spark.stop()
        listed = self.bench._client().list_objects_v2(Bucket=BUCKET, Prefix=table.key + "/")
        keys = [o["Key"] for o in listed.get("Contents", []) if is_data_key(o["Key"])]
        if not keys:
            raise RuntimeError(f"the sample write to {table.url} left no data file")
        body = self.bench._s3_get(keys[0])
        if not body:
            raise RuntimeError(f"cannot read the sample data file {keys[0]}")
        self.info["sample"] = {"key": keys[0], "bytes": len(body)}
        return body

    def synthesise(self, tables: list[Table], body: bytes) -> None:
        """Every object of ``tables``, PUT in parallel with the latency model off."""
        now = int(time.time() * 1000)
        objects: list[tuple[str, bytes]] = []
        for t in tables:
            start = now - HISTORY_AGO_MS - (t.txns or 0) * 1000
            if t.kind in ("txcommit", "listing"):
                objects += txcommit_table(
                    t.key,
                    t.txns or 0,
                    body,
                    start,
                    seed=self.bench.run_id,
                    log_only=t.kind == "txcommit",
                )
            elif t.kind == "partitioned":
                objects += partitioned_table(t.key, t.dirs, body, start, seed=self.bench.run_id)
            else:
                objects += plain_table(t.key, t.dirs, body)
        self.say(f"  read: synthesising {len(tables)} tables ({len(objects)} objects)")
        began = time.monotonic()
        self.upload(objects)
        elapsed = time.monotonic() - began
        self.say(f"        {len(objects)} PUTs in {elapsed:.1f} s")
        self.info["synthesis"] = {"objects": len(objects), "seconds": round(elapsed, 1)}

    def upload(self, objects: list[tuple[str, bytes]]) -> None:
        """PUTs ``objects`` in parallel with the latency model off. Many go through worker
        processes: the endpoint (moto) serves from this process, and a client in the same
        interpreter would compete with it for the GIL (about 1.4x slower)."""
        from txcommit.bench.runner import BUCKET

        assert self.bench.s3 is not None
        with self.bench.unmetered():
            if len(objects) < PROCESS_UPLOAD_MIN:
                _put_all(self.bench._client(), BUCKET, objects)
                return
            chunks = [objects[i : i + UPLOAD_CHUNK] for i in range(0, len(objects), UPLOAD_CHUNK)]
            context = multiprocessing.get_context("spawn")  # no fork of a threaded process
            with ProcessPoolExecutor(UPLOAD_PROCESSES, mp_context=context) as pool:
                done = sum(
                    pool.map(_put_chunk, repeat(self.bench.s3.endpoint), repeat(BUCKET), chunks)
                )
            if done != len(objects):
                raise RuntimeError(f"uploaded {done} of {len(objects)} objects")

    # ------------------------------------------------------------------ checkpoints
    def checkpoint_all(self, tables: list[Table], warmups: list[Table]) -> bool:
        """``TXCOMMIT CHECKPOINT`` on each table, then on each warm-up table (latency model
        off: setup, not measured); False, with the reason in ``info``, when this plugin build
        has no such statement."""
        from txcommit.bench.runner import BUCKET

        try:
            from txcommit.maintenance import checkpoint
        except ImportError:  # a txcommit without checkpoints
            self.info["checkpoint"] = "txcommit.maintenance.checkpoint does not exist"
            self.say(f"  read: no checkpoints: {self.info['checkpoint']}")
            return False
        spark = self.bench.session(self.txcommit.session_confs("s3"))
        written: dict[str, Any] = {}
        began = time.monotonic()
        try:
            with self.bench.unmetered():
                for t in tables + warmups:
                    try:
                        row = checkpoint(spark, t.url).collect()[0].asDict()
                    except Exception as e:
                        text = (str(e).splitlines() or [""])[0][:300]
                        unknown = "PARSE_SYNTAX_ERROR" in str(e) or "Parse" in type(e).__name__
                        if unknown and t is tables[0]:
                            self.info["checkpoint"] = f"TXCOMMIT CHECKPOINT failed: {text}"
                            self.say(f"  read: no checkpoints: {self.info['checkpoint']}")
                            return False
                        raise
                    listed = self.bench._client().list_objects_v2(
                        Bucket=BUCKET, Prefix=f"{t.key}/_txcommit/checkpoints/"
                    )
                    if not row.get("written") or not listed.get("KeyCount"):
                        raise RuntimeError(f"TXCOMMIT CHECKPOINT '{t.url}' wrote nothing: {row}")
                    if t in warmups:
                        continue
                    written[str(t.txns) if t.kind == "txcommit" else f"{t.kind} {t.txns}"] = {
                        "checkpoint": row.get("checkpoint"),
                        "transactions": row.get("transactions"),
                        "bytes": listed["Contents"][-1]["Size"],
                    }
                    self.say(f"  read: checkpoint of {t.txns} transactions: {written[str(t.txns)]}")
        finally:
            spark.stop()
        self.info["checkpoint"] = "written"
        self.info["checkpoints"] = written
        self.info["checkpoint_s"] = round(time.monotonic() - began, 1)
        return True

    # ------------------------------------------------------------------ cold and warm
    def measure(
        self, name: str, tables: list[Table], warmups: list[Table], *, checkpoint: bool
    ) -> None:
        """Cold then warm plans of each table on a fresh server (see the module's docstring)."""
        if not tables:
            return
        self.say(f"  read: starting a fresh server ({name}) for cold plans")
        began = time.monotonic()
        server = self.start_server(name)
        self.info.setdefault("server_start_s", []).append(round(time.monotonic() - began, 1))
        try:
            sessions = {
                f: self.bench.session({READ_FILTER_CONF: str(f == "on").lower()}, server)
                for f in ("off", "on")
            }
            try:
                for t in warmups:
                    for _ in range(2):
                        for f in ("off", "on"):
                            self.plan(sessions[f], t)
                for t in tables:
                    self.add(self.cold_and_warm(sessions, t, checkpoint))
            finally:
                for s in sessions.values():
                    s.stop()
        finally:
            server.stop()

    def cold_and_warm(
        self, sessions: dict[str, Any], t: Table, checkpoint: bool
    ) -> list[dict[str, Any]]:
        base = {"case": t.kind, "txns": t.txns, "dirs": t.dirs, "checkpoint": checkpoint}
        rows = []
        for f in ("off", "on"):
            elapsed, files, reqs = self.plan(sessions[f], t)
            rows.append(self.row(base, "cold", f, [elapsed], files, reqs))
        # A txcommit table is also read as of now by time (a time-travel read of the newest
        # version), in the filtered session: it must cost no more than the read of now; a
        # partitioned one also with a filter on its partition column.
        kinds: tuple[str, ...] = ("off", "on")
        if t.kind == "txcommit":
            kinds += (AS_OF,)
        if t.kind == "partitioned":
            kinds += (PRUNED_OFF, PRUNED)
        samples: dict[str, list[tuple[float, int, list[dict[str, Any]]]]] = {f: [] for f in kinds}
        as_of = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1))
        spent = 0.0
        for i in range(self.sizes.repeats):
            if i > 0 and spent > WARM_BUDGET_S:
                break  # long plans: their spread is small against their length
            for f in kinds:
                if f == AS_OF:
                    samples[f].append(self.plan(sessions["on"], t, as_of=as_of))
                elif f in (PRUNED, PRUNED_OFF):
                    session = sessions["on" if f == PRUNED else "off"]
                    samples[f].append(self.plan(session, t, where=PRUNE_FILTER))
                else:
                    samples[f].append(self.plan(sessions[f], t))
                spent += samples[f][-1][0]
        for f in kinds:
            last = samples[f][-1]
            rows.append(self.row(base, "warm", f, [s[0] for s in samples[f]], last[1], last[2]))
        what = f"{t.kind}, " + (f"{t.txns} txns" if t.txns is not None else f"{t.dirs} dirs")
        for r in rows:
            self.say(
                f"    {what:18} {'checkpoint' if checkpoint else '':10} {r['temp']:4} filter "
                f"{r['filter']:3}: {r['plan_s']:.3f} s, {r['files']} files, {r['requests']}"
            )
        for r in rows:
            expected = 1 if r["filter"] in (PRUNED, PRUNED_OFF) else t.files
            if r["files"] != expected:
                raise RuntimeError(
                    f"planning {t.url} (filter {r['filter']}, {r['temp']}) listed {r['files']} "
                    f"files, expected {expected}: the measurement is refused"
                )
        return rows

    @staticmethod
    def row(
        base: dict[str, Any],
        temp: str,
        filt: str,
        times: list[float],
        files: int,
        entries: list[dict[str, Any]],
    ) -> dict[str, Any]:
        ops, log = count_requests(entries)
        return {
            **base,
            "temp": temp,
            "filter": filt,
            "plan_s": round(statistics.median(times), 4),
            "samples": [round(x, 4) for x in times],
            "files": files,
            "requests": ops,
            "log_requests": log,
        }

    def plan(
        self, spark: Any, t: Table, as_of: str | None = None, where: str | None = None
    ) -> tuple[float, int, list[dict[str, Any]]]:
        """One plan: ``spark.read.parquet(url)`` (``as_of``: with ``txcommit.asOf``), its
        schema and ``inputFiles()``; (seconds, files, the requests the endpoint served
        meanwhile). ``where``: a read with that filter, planned and run (``inputFiles()`` does
        not prune): the distinct files its scan read, and every request of it, the data's GETs
        included."""
        mark = self.bench._requests_mark()
        start = time.perf_counter()
        reader = spark.read if as_of is None else spark.read.option(AS_OF_OPTION, as_of)
        df = reader.parquet(t.url)
        df.schema  # noqa: B018 - forces the plan (schema inference reads a footer)
        if where is None:
            files = len(df.inputFiles())
            elapsed = time.perf_counter() - start
            return elapsed, files, self.bench._requests_since(mark)
        read = df.where(where).select(F.input_file_name().alias("f")).distinct().collect()
        elapsed = time.perf_counter() - start
        return elapsed, len({r["f"] for r in read}), self.bench._requests_since(mark)

    # ------------------------------------------------------------------ leftovers and VACUUM
    def leftovers(self, t: Table, body: bytes) -> list[dict[str, Any]]:
        """Warm plans (on the bench's server) of a table plus 10 files of two transactions that
        never committed (ids an hour old), then after ``TXCOMMIT VACUUM ... RETAIN 0 HOURS
        FORCE`` removed them."""
        from txcommit.bench.runner import LEFTOVER_TXNS, LEFTOVERS_PER_TXN, leftover_txn
        from txcommit.maintenance import vacuum

        an_hour_ago = int(time.time() * 1000) - 3_600_000
        keys = [
            f"{t.key}/part-{i:05d}-tid-{leftover_txn(x, an_hour_ago)}-9{i:04d}-c000.snappy.parquet"
            for x in LEFTOVER_TXNS
            for i in range(LEFTOVERS_PER_TXN)
        ]
        self.upload([(k, body) for k in keys])
        admin = self.bench.session(self.txcommit.session_confs("s3"))
        sessions = {
            f: self.bench.session({READ_FILTER_CONF: str(f == "on").lower()}) for f in ("off", "on")
        }
        base = {"case": "leftovers", "txns": t.txns, "dirs": 1, "checkpoint": False}
        rows = []
        try:
            for state in ("with leftovers", "after vacuum"):
                if state == "after vacuum":
                    entries = vacuum(admin, t.url, retain_hours=0, force=True).collect()
                    left = [k for k in keys if self.bench._s3_get(k) is not None]
                    self.say(f"  read: VACUUM: {len(entries)} entries; leftovers left: {left}")
                    if left:
                        raise RuntimeError(f"VACUUM left {len(left)} leftovers: {left[:3]}")
                for f in ("off", "on"):
                    self.plan(sessions[f], t)  # warm-up
                samples: dict[str, list[Any]] = {"off": [], "on": []}
                for _ in range(self.sizes.repeats):
                    for f in ("off", "on"):
                        samples[f].append(self.plan(sessions[f], t))
                for f in ("off", "on"):
                    last = samples[f][-1]
                    r = self.row(
                        {**base, "state": state},
                        "warm",
                        f,
                        [s[0] for s in samples[f]],
                        last[1],
                        last[2],
                    )
                    self.say(
                        f"    leftovers {state:15} filter {f:3}: {r['plan_s']:.3f} s, "
                        f"{r['files']} files, {r['requests']}"
                    )
                    rows.append(r)
        finally:
            for s in [admin, *sessions.values()]:
                s.stop()
        return rows


def _put_all(client: Any, bucket: str, objects: list[tuple[str, bytes]]) -> None:
    def put(obj: tuple[str, bytes]) -> None:
        client.put_object(Bucket=bucket, Key=obj[0], Body=obj[1])

    with ThreadPoolExecutor(UPLOAD_THREADS) as pool:
        list(pool.map(put, objects))


_WORKER_CLIENT: dict[str, Any] = {}


def _put_chunk(endpoint: str, bucket: str, objects: list[tuple[str, bytes]]) -> int:
    """In a worker process: PUT ``objects`` to the endpoint (one boto3 client per process)."""
    if endpoint not in _WORKER_CLIENT:
        import boto3
        from botocore.config import Config

        from txcommit_store_s3 import DEFAULT_REGION, DUMMY_KEY, DUMMY_SECRET

        _WORKER_CLIENT[endpoint] = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=DEFAULT_REGION,
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_SECRET,
            config=Config(max_pool_connections=UPLOAD_THREADS),
        )
    _put_all(_WORKER_CLIENT[endpoint], bucket, objects)
    return len(objects)
