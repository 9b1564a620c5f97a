"""``txcommit bench-streaming``: store requests per micro-batch of Structured Streaming's
checkpoint file managers on S3, measured at the S3 endpoint.

It starts a local S3 endpoint (moto, which counts every request by operation and key) and one
Spark Connect server with txcommit and Hadoop's S3A connector, then runs the same stateful
query (rate source, windowed count with a watermark, parquet file sink) once per checkpoint
file manager: txcommit's (with the ``s3`` conditional-put adapter and with the
``s3-multipart`` adapter) and Spark's own FileContext- and FileSystem-based managers. After a
warm-up it counts the requests on checkpoint files (the checkpoint directory and the sink's
``_spark_metadata`` log, which Spark writes through the same manager) during ``--batches``
micro-batches, and prints requests per batch by operation. It is a measurement, not a test:
nothing is asserted.

Needs the server side install (``txcommit[server,local]``) and the S3 jars
(``txcommit jars --store s3``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from txcommit._console import markdown
from txcommit._names import (
    CHECKPOINT_FILE_MANAGER_CLASS,
    CHECKPOINT_FILE_MANAGER_CONF,
    adapter_conf,
)

MANAGERS: dict[str, tuple[str, str | None]] = {
    # name: (checkpointFileManagerClass, txcommit adapter for s3a or None)
    "txcommit-s3": (CHECKPOINT_FILE_MANAGER_CLASS, "s3"),
    "txcommit-s3-multipart": (CHECKPOINT_FILE_MANAGER_CLASS, "s3-multipart"),
    "spark-filecontext": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager",
        None,
    ),
    "spark-filesystem": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
        None,
    ),
}
BUCKET = "txcommit-bench"
COLUMNS = ("PUT", "GET", "HEAD", "LIST", "COPY", "DELETE", "MULTIPART")


@dataclass
class Result:
    manager: str
    batches: int
    counts: Counter[str]

    def per_batch(self, column: str) -> float:
        if column == "MULTIPART":
            n = sum(v for k, v in self.counts.items() if k.startswith("MULTIPART"))
        elif column == "DELETE":
            n = self.counts["DELETE"] + self.counts["DELETE_BULK"]
        else:
            n = self.counts[column]
        return n / self.batches

    @property
    def total(self) -> float:
        return sum(self.counts.values()) / self.batches


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="txcommit bench-streaming",
        description="Measure store requests per micro-batch of checkpoint file managers on S3 "
        "(a local moto endpoint that counts requests; prints a table).",
    )
    p.add_argument(
        "--batches",
        type=int,
        default=10,
        help="micro-batches measured per manager, after the warm-up (default 10)",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=3,
        help="micro-batches run before measuring, not counted (default 3)",
    )
    p.add_argument(
        "--rows-per-second",
        type=int,
        default=100,
        help="rows the rate source produces per second (default 100)",
    )
    p.add_argument(
        "--partitions",
        type=int,
        default=2,
        help="spark.sql.shuffle.partitions, i.e. state store partitions (default 2)",
    )
    p.add_argument(
        "--managers",
        default=",".join(MANAGERS),
        help=f"comma-separated managers to measure, of: {', '.join(MANAGERS)} (default: all)",
    )
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    return p


def _checkpoint_key(key: str, prefix: str) -> str | None:
    """The checkpoint area a request's key belongs to, or None for data and other keys."""
    if not key.startswith(prefix):
        return None
    rest = key[len(prefix) :]
    if rest == "ckpt" or rest.startswith("ckpt/"):
        return (rest.split("/") + [""])[1] or "ckpt"
    if rest.startswith("out/_spark_metadata"):
        return "_spark_metadata"
    return None


def _run_one(url: str, endpoint: str, name: str, args: argparse.Namespace) -> Result:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from txcommit_store_s3.devkit.emulator import fetch_requests

    cls, adapter = MANAGERS[name]
    prefix = f"bench/{name}-{int(time.time())}/"
    spark = SparkSession.builder.remote(url).create()
    try:
        spark.conf.set(CHECKPOINT_FILE_MANAGER_CONF, cls)
        spark.conf.set("spark.sql.shuffle.partitions", str(args.partitions))
        if adapter:
            spark.conf.set(adapter_conf("s3a"), adapter)
        rate = spark.readStream.format("rate").option("rowsPerSecond", args.rows_per_second).load()
        windows = (
            rate.withWatermark("timestamp", "1 second")
            .groupBy(F.window("timestamp", "2 seconds"))
            .agg(F.count("*").alias("n"))
        )
        query = (
            windows.writeStream.format("parquet")
            .outputMode("append")
            .option("checkpointLocation", f"s3a://{BUCKET}/{prefix}ckpt")
            .option("path", f"s3a://{BUCKET}/{prefix}out")
            .trigger(processingTime="1 second")
            .start()
        )

        def wait_batch(after: int) -> int:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                if query.exception() is not None:
                    raise RuntimeError(f"{name}: the query failed: {query.exception()}")
                progress = query.lastProgress
                if progress and progress["batchId"] > after:
                    return int(progress["batchId"])
                time.sleep(0.05)
            raise RuntimeError(f"{name}: no batch after {after} within 300 s")

        first = wait_batch(args.warmup - 1)
        start = fetch_requests(endpoint)["next"]
        last = wait_batch(first + args.batches - 1)
        log = fetch_requests(endpoint, since=start)
        query.stop()
    finally:
        spark.stop()
    counts: Counter[str] = Counter()
    for r in log["requests"]:
        key = r.get("prefix", "") if r["op"] == "LIST" else r["key"]
        if r["bucket"] == BUCKET and _checkpoint_key(key, prefix) is not None:
            counts[r["op"]] += 1
    return Result(name, last - first, counts)


def format_table(results: list[Result]) -> str:
    rows = [
        [r.manager, *(f"{r.per_batch(c):.1f}" for c in COLUMNS), f"{r.total:.1f}"] for r in results
    ]
    return markdown(
        ["manager", *COLUMNS, "total"], rows, right=[False] + [True] * (len(COLUMNS) + 1)
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names = [n.strip() for n in args.managers.split(",") if n.strip()]
    unknown = [n for n in names if n not in MANAGERS]
    if unknown:
        print(
            f"txcommit bench-streaming: unknown manager(s) {', '.join(unknown)}; choose from "
            f"{', '.join(MANAGERS)}",
            file=sys.stderr,
        )
        return 2
    if args.batches < 1 or args.warmup < 1:
        print(
            "txcommit bench-streaming: --batches and --warmup must be at least 1", file=sys.stderr
        )
        return 2

    from txcommit.server import ServerConfig, free_port, start
    from txcommit_store_s3 import s3a_confs
    from txcommit_store_s3.devkit.emulator import LocalS3

    s3 = LocalS3().start()
    results: list[Result] = []
    try:
        s3.create_bucket(BUCKET)
        config = ServerConfig(
            port=free_port(),
            master="local[2]",
            store="s3",
            confs=s3a_confs(s3.endpoint),
            die_with_parent=True,
            startup_timeout=300,
        )
        print(
            f"txcommit bench-streaming: local S3 at {s3.endpoint}; starting a Connect server",
            file=sys.stderr,
        )
        with start(config) as server:
            for name in names:
                print(f"txcommit bench-streaming: measuring {name} ...", file=sys.stderr)
                results.append(_run_one(server.url, s3.endpoint, name, args))
    finally:
        s3.stop()
    print(
        f"Store requests per micro-batch on checkpoint files (checkpoint directory and the "
        f"sink's _spark_metadata), S3 through S3A, {args.batches} batches, "
        f"{args.partitions} state partitions:\n"
    )
    print(format_table(results))
    if args.json:
        payload: list[dict[str, Any]] = [
            {"manager": r.manager, "batches": r.batches, "counts": dict(r.counts)} for r in results
        ]
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
