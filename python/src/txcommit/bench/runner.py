"""Runs the benchmark: one Connect server, one local S3 endpoint with the latency model, every
protocol side by side on the same data; returns plain results (JSON-able dicts).

Measurements, all taken the same way for every protocol:

* total job time: the client's wall clock around ``df.write...parquet(url)``;
* job commit time: Spark's own timer around ``FileCommitProtocol.commitJob`` (FileFormatWriter
  logs ``Write Job <id> committed. Elapsed time: <n> ms.`` for every protocol), read from the
  server log; for txcommit the ``_SUCCESS`` summary's stage timings are kept as well;
* store requests by type, executors included: the endpoint's request log over the write;
  bytes copied server-side; data objects deleted;
* read planning (:mod:`txcommit.bench.reads`): ``spark.read.parquet(url)`` + its schema +
  ``inputFiles()`` of synthesised tables, txcommit's read filter on and off, cold (a fresh
  server) and warm (median of ``repeats``), with and without a checkpoint.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from txcommit.bench.protocols import Protocol, label
from txcommit.paths import is_data_path
from txcommit.server import RunningServer
from txcommit_store_s3 import DEFAULT_REGION, DUMMY_KEY, DUMMY_SECRET
from txcommit_store_s3.devkit.emulator import LocalS3

COMMIT_LINE = re.compile(rb"Write Job \S+ committed\. Elapsed time: (\d+) ms")
BUCKET = "bench"
#: Random parts of transaction ids no job ever gets: their files are "uncommitted leftovers"
#: for the filter (the ids' time part is set an hour back, so VACUUM finds them old enough).
LEFTOVER_TXNS = ("zzzz0001", "zzzz0002")
LEFTOVERS_PER_TXN = 5


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


def leftover_txn(suffix: str, started_ms: int) -> str:
    """A txcommit transaction id (8 base-36 chars of its start time, 8 more) that no job has."""
    return _base36(started_ms).rjust(8, "0") + suffix


#: File counts above this are "large" (see Sizes.s3_large_protocols).
LARGE = 1000


@dataclass
class Sizes:
    """How big the run is; ``quick`` is the smoke run CI does."""

    #: The default fits the 35-minute budget on 2 cores: v1 alone needs ~12 min at 1000 files
    #: on the modelled S3; 5000 files (``--files 10,100,1000,5000``) adds ~5 min on S3.
    files: list[int] = field(default_factory=lambda: [10, 100, 1000])
    overwrite_files: list[int] = field(default_factory=lambda: [10])
    #: On S3, exactly LARGE files run only these protocols: the targets compare floor, v1,
    #: magic and txcommit there; v2 (~100 s) is left out of the default.
    s3_target_protocols: list[str] = field(
        default_factory=lambda: ["floor", "v1", "magic", "txcommit", "txcommit-mp"]
    )
    #: On S3, file counts above LARGE run only these protocols: v1 commits at ~0.65 s per
    #: file on the modelled S3 (5000 files: about an hour), which no 35-minute run can hold.
    s3_large_protocols: list[str] = field(default_factory=lambda: ["floor", "txcommit"])
    rows_per_file: int = 1000
    partitions: int = 10
    seed_rows: int = 10_000_000
    seed_partitions: int = 100
    #: Transactions of the synthesised txcommit tables of the read section.
    read_txns: list[int] = field(default_factory=lambda: [1, 100, 1000, 10000])
    #: Only the txcommit tables of at most this many transactions are also planned without a
    #: checkpoint: a cold plan without one reads every record, one GET after another (~40 ms
    #: each on the model: ~7 min at 10,000 transactions, which the default run cannot hold).
    read_no_checkpoint_max: int = 1000
    #: Partition directories of the plain Hive-style table of the read section, and of its
    #: log-only txcommit table written by one partitioned write (0: neither).
    read_partitions: int = 1000
    #: Transactions of the read section's txcommit table read by listing (one txcommit
    #: adopted: files written without txcommit visible; 0: none).
    read_listing_txns: int = 1000
    #: Whether the read section plans a table with uncommitted leftovers, then VACUUMs it.
    read_leftovers: bool = True
    repeats: int = 3
    #: File counts of the large section's appends (txcommit on S3); none unless asked for.
    large_files: list[int] = field(default_factory=list)
    #: Partition directories of a large job (each task writes one file in each).
    large_partitions: int = 100
    #: Rows per file of a large job: small files, so the job measures per-file costs.
    large_rows_per_file: int = 10
    #: The synthesised big table (the bigtable section; none unless asked for): appends, files
    #: per append, partition directories.
    bigtable_commits: int = 0
    bigtable_files_per_commit: int = 1000
    bigtable_partitions: int = 100
    #: The transactions section (none unless asked for): the table counts of its transactions,
    #: the files each commit point writes in all (split evenly over its tables), its rounds,
    #: and the counts of undecided transactions a reader meets.
    transaction_tables: list[int] = field(default_factory=list)
    transaction_files: int = 16
    transaction_repeats: int = 5
    transaction_undecided: list[int] = field(default_factory=lambda: [1, 4])

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            files=[10],
            overwrite_files=[10],
            rows_per_file=200,
            partitions=10,
            seed_rows=100_000,
            seed_partitions=10,
            read_txns=[1, 20],
            read_partitions=20,
            read_listing_txns=20,
            repeats=1,
        )


def is_data_key(key: str) -> bool:
    """A data file of a table: named part-*, a path Spark reads as data."""
    return key.rpartition("/")[2].startswith("part-") and is_data_path(key)


def summarise_requests(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by operation, bytes copied server-side, data objects copied and deleted."""
    counts = Counter(e["op"] for e in entries)
    copied = sum(
        int(e.get("bytes", 0)) for e in entries if e["op"] in ("COPY", "MULTIPART_PART_COPY")
    )
    data_deletes = sum(1 for e in entries if e["op"] == "DELETE" and is_data_key(e["key"]))
    data_deletes += sum(
        sum(1 for k in e.get("deleted", []) if is_data_key(k))
        for e in entries
        if e["op"] == "DELETE_BULK"
    )
    data_copies = sum(
        1 for e in entries if e["op"] in ("COPY", "MULTIPART_PART_COPY") and is_data_key(e["key"])
    )
    return {
        "counts": dict(sorted(counts.items())),
        "total": len(entries),
        "bytes_copied": copied,
        "data_copies": data_copies,
        "data_deletes": data_deletes,
    }


MAGIC_LINE = b"Using committer magic"
ALGORITHM_LINE = re.compile(rb"File Output Committer Algorithm version is (\d)")


def check_committer(proto: Protocol, store: str, log: bytes) -> None:
    """Refuse a measurement taken with another committer than the one it is labelled with
    (the server log says which committer each write used)."""
    magic = MAGIC_LINE in log
    versions = set(ALGORITHM_LINE.findall(log))
    if proto.key == "magic":
        ok = magic
    elif proto.key in ("v1", "v2"):
        ok = not magic and versions == {proto.key[1:].encode()}
    else:
        ok = not magic
    if not ok:
        raise RuntimeError(
            f"the {proto.key} write on {store} did not run the {proto.label} (magic committer "
            f"in the log: {magic}; FileOutputCommitter versions: {sorted(versions)}); "
            "the benchmark refuses to report it"
        )


class Bench:
    """The running pieces: server, endpoint, work directory, a log of progress."""

    def __init__(
        self,
        server: RunningServer,
        s3: LocalS3 | None,
        workdir: Path,
        run_id: str,
        say: Callable[[str], None] = print,
    ) -> None:
        self.server = server
        self.s3 = s3
        self.workdir = workdir
        self.run_id = run_id
        self.say = say
        self._boto: Any = None

    # ------------------------------------------------------------------ plumbing
    def session(self, confs: dict[str, str], server: RunningServer | None = None) -> Any:
        """A new Connect session on ``server`` (default: the bench's own) with ``confs``."""
        from pyspark.sql import SparkSession

        server = server or self.server
        if not server.alive():  # else the client retries for minutes before it gives up
            raise RuntimeError(
                f"the Connect server at {server.url} is no longer running (exit code "
                f"{server.process.poll()}; its log: {server.log_path})"
            )
        spark = SparkSession.builder.remote(server.url).create()
        for key, value in confs.items():
            spark.conf.set(key, value)
        return spark

    def url(self, store: str, name: str) -> str:
        if store == "local":
            return str(self.workdir / "tables" / self.run_id / name)
        return f"s3a://{BUCKET}/{self.run_id}/{name}"

    def _log_size(self) -> int:
        return self.server.log_path.stat().st_size

    def _log_since(self, since: int) -> bytes:
        with open(self.server.log_path, "rb") as f:
            f.seek(since)
            return f.read()

    def _commit_ms(self, since: int) -> int | None:
        found = COMMIT_LINE.findall(self._log_since(since))
        return int(found[-1]) if found else None

    def _requests_mark(self) -> int:
        return len(self.s3.front.log.entries) if self.s3 and self.s3.front else 0

    def _requests_since(self, mark: int) -> list[dict[str, Any]]:
        return self.s3.front.log.since(mark) if self.s3 and self.s3.front else []

    def _client(self) -> Any:
        """boto3 on the endpoint, for the benchmark's own reads and writes (outside windows)."""
        import boto3

        assert self.s3 is not None
        if self._boto is None:
            from botocore.config import Config

            self._boto = boto3.client(
                "s3",
                endpoint_url=self.s3.endpoint,
                region_name=DEFAULT_REGION,
                aws_access_key_id=DUMMY_KEY,
                aws_secret_access_key=DUMMY_SECRET,
                config=Config(max_pool_connections=32),  # parallel PUTs (reads.py)
            )
        return self._boto

    @contextlib.contextmanager
    def unmetered(self) -> Iterator[None]:
        """The endpoint without its latency model meanwhile: for setup that is not measured
        (synthesising tables), so it does not take minutes. Requests are still logged."""
        front = self.s3.front if self.s3 else None
        saved = front.latency if front else None
        if front:
            front.latency = None
        try:
            yield
        finally:
            if front:
                front.latency = saved

    def _s3_get(self, key: str) -> bytes | None:
        try:
            data: bytes = self._client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
        except self._client().exceptions.NoSuchKey:
            return None
        return data

    def _s3_put(self, key: str, data: bytes) -> None:
        self._client().put_object(Bucket=BUCKET, Key=key, Body=data)

    def _success(self, store: str, url: str) -> dict[str, Any] | None:
        if store == "local":
            path = Path(url) / "_SUCCESS"
            data = path.read_bytes() if path.exists() else None
        else:
            data = self._s3_get(url.split(f"s3a://{BUCKET}/", 1)[1] + "/_SUCCESS")
        try:
            parsed: dict[str, Any] = json.loads(data) if data else {}
        except ValueError:
            return None  # Hadoop's empty _SUCCESS
        return parsed or None

    # ------------------------------------------------------------------ one write
    def write(
        self,
        proto: Protocol,
        store: str,
        url: str,
        mode: str,
        build: Callable[[Any], Any],
        partition_by: str | None,
    ) -> dict[str, Any]:
        spark = self.session(proto.session_confs(store))
        try:
            writer = build(spark).write.mode(mode)
            for key, value in proto.write_options().items():
                writer = writer.option(key, value)
            if partition_by:
                writer = writer.partitionBy(partition_by)
            log_mark, req_mark = self._log_size(), self._requests_mark()
            start = time.perf_counter()
            writer.parquet(url)
            total = time.perf_counter() - start
            commit_ms = self._commit_ms(log_mark)
            check_committer(proto, store, self._log_since(log_mark))
            requests = summarise_requests(self._requests_since(req_mark))
        finally:
            spark.stop()
        result: dict[str, Any] = {
            "protocol": proto.key,
            "label": label(proto.key, store),
            "store": store,
            "mode": mode,
            "total_s": round(total, 3),
            "commit_s": None if commit_ms is None else commit_ms / 1000.0,
        }
        if store == "s3":
            result["requests"] = requests
        if proto.is_txcommit:
            summary = self._success(store, url) or {}
            result["txcommit"] = {
                "durationMs": summary.get("durationMs"),
                "stageDurationsMs": summary.get("stageDurationsMs"),
                "jobCommitRequests": summary.get("jobCommitRequests"),
            }
        return result

    # ------------------------------------------------------------------ workloads
    def sweep_point(
        self, protocols: list[Protocol], store: str, files: int, sizes: Sizes, overwrite: bool
    ) -> list[dict[str, Any]]:
        """``files`` output files: tasks x a fixed number of partition directories (so the
        sweep varies the file count alone), then (optionally) an overwrite of the same table
        with the same shape."""
        parts = max(1, min(files, sizes.partitions))
        tasks = max(1, files // parts)
        rows = tasks * parts * sizes.rows_per_file

        def build(spark: Any) -> Any:
            from pyspark.sql import functions as F

            return spark.range(0, rows, 1, tasks).withColumn("p", F.col("id") % parts)

        out = []
        for proto in protocols:
            if store not in proto.stores:
                continue
            if store == "s3" and files > LARGE and proto.key not in sizes.s3_large_protocols:
                self.say(
                    f"  {store:5} {files:5} files  skipped  {proto.key} (--s3-large-protocols)"
                )
                continue
            if store == "s3" and files == LARGE and proto.key not in sizes.s3_target_protocols:
                self.say(
                    f"  {store:5} {files:5} files  skipped  {proto.key} (--s3-target-protocols)"
                )
                continue
            url = self.url(store, f"sweep-{proto.key}-{files}")
            modes = ["append", "overwrite"] if overwrite else ["append"]
            for mode in modes:
                self.say(f"  {store:5} {files:5} files  {mode:9} {proto.key}")
                r = self.write(proto, store, url, mode, build, "p")
                r.update(files=tasks * parts, tasks=tasks, partitions=parts, rows=rows)
                self.say(f"        total {r['total_s']:.2f} s, commit {r['commit_s']} s")
                out.append(r)
        return out

    def paper_job(
        self, protocols: list[Protocol], store: str, sizes: Sizes
    ) -> list[dict[str, Any]]:
        """The DBIO paper's job: range(N).repartition(100).write.mode("append").parquet(...)."""

        def build(spark: Any) -> Any:
            return spark.range(sizes.seed_rows).repartition(sizes.seed_partitions)

        out = []
        for proto in protocols:
            if store not in proto.stores:
                continue
            self.say(f"  {store:5} seed {sizes.seed_rows} rows  {proto.key}")
            url = self.url(store, f"seed-{proto.key}")
            r = self.write(proto, store, url, "append", build, None)
            r.update(files=sizes.seed_partitions, rows=sizes.seed_rows)
            self.say(f"        total {r['total_s']:.2f} s, commit {r['commit_s']} s")
            out.append(r)
        return out

    def warm_up(self, protocols: list[Protocol], stores: list[str]) -> None:
        """One small untimed write per protocol and store: class loading, JIT, S3A clients."""
        for store in stores:
            for proto in protocols:
                if store in proto.stores:
                    self.write(
                        proto,
                        store,
                        self.url(store, f"warm-{proto.key}"),
                        "append",
                        lambda s: s.range(0, 1000, 1, 2),
                        None,
                    )
