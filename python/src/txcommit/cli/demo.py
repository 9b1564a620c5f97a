"""``txcommit demo``: the DBIO paper's failure table, replayed live.

For Hadoop's commit algorithms v1 and v2 and for txcommit, on an embedded Spark Connect server
with the plugin (``local[*]``, the local file system):

1. the performance test: write ``--rows`` rows as 100 files (``repartition(100)``), timed;
2. the transactionality test: append 10,000 rows in 7 tasks where the task holding row 9999
   sleeps and then fails every time, so the job fails after the other tasks committed;
3. count how many rows of the failed job became visible.

Hadoop v2 leaks the rows of the tasks that committed; txcommit must show 0. Exit code 1 if
txcommit leaked anything.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from txcommit._names import COMMIT_PROTOCOL_CONF, PROTOCOL_CLASS
from txcommit.cli.render import text
from txcommit.client import connect
from txcommit.server import ServerConfig, free_port, start

PAPER_PROTOCOLS: list[tuple[str, str | None, str]] = [
    # (label, commit protocol class or None for Spark's default, Hadoop algorithm version)
    ("Hadoop commit v1", None, "1"),
    ("Hadoop commit v2", None, "2"),
    ("txcommit", PROTOCOL_CLASS, "1"),
]


@dataclass(frozen=True)
class Row:
    algorithm: str
    write_s: float
    failed_job_s: float
    leaked_rows: int


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="txcommit demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--rows",
        type=int,
        default=10_000_000,
        help="rows of the performance write (default: the DBIO paper's 10,000,000)",
    )
    p.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")
    p.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="where tables are written (default: a temporary directory, removed after)",
    )
    p.add_argument(
        "--fail-delay",
        type=float,
        default=5.0,
        help="seconds the failing task sleeps before it throws (default 5, as in the DBIO paper)",
    )
    return p


def run_paper_job(spark, workdir: Path, rows: int, fail_delay: float) -> list[Row]:  # noqa: ANN001
    delay = fail_delay

    def oops(i):  # noqa: ANN001, ANN202 - the DBIO paper's map: row 9999 sleeps, then fails
        if i == 9999:
            import time as _t

            _t.sleep(delay)
            raise RuntimeError("oops!")
        return i

    # Registered on the session, so it works from a pure client and from the full pyspark.
    from pyspark.sql.types import LongType

    spark.udf.register("txcommit_demo_oops", oops, LongType())

    results = []
    for label, protocol, version in PAPER_PROTOCOLS:
        path = str(workdir / label.replace(" ", "-").lower())
        if protocol:
            spark.conf.set(COMMIT_PROTOCOL_CONF, protocol)
        else:
            spark.conf.unset(COMMIT_PROTOCOL_CONF)
        algo = "mapreduce.fileoutputcommitter.algorithm.version"

        t0 = time.perf_counter()
        spark.range(rows).repartition(100).write.mode("append").option(algo, version).parquet(path)
        write_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        try:
            spark.range(10_000).repartition(7).selectExpr(
                "txcommit_demo_oops(id) AS id"
            ).write.option(algo, version).mode("append").parquet(path)
            raise SystemExit(f"the failing job of {label} did not fail: the demo is broken")
        except Exception as e:  # the job must fail, as in the DBIO paper
            if "oops" not in str(e):
                raise
        failed_s = time.perf_counter() - t0
        leaked = spark.read.parquet(path).count() - rows
        results.append(Row(label, write_s, failed_s, leaked))
        print(f"  {label}: done", file=sys.stderr)
    spark.conf.unset(COMMIT_PROTOCOL_CONF)
    return results


def render(rows: list[Row], n: int) -> str:
    header = (
        "algorithm",
        f"write {n:,} rows (s)",
        "failed job (s)",
        "rows of the failed job visible",
    )
    body = [
        (r.algorithm, f"{r.write_s:.1f}", f"{r.failed_job_s:.1f}", str(r.leaked_rows)) for r in rows
    ]
    return text(header, body, sep=" | ", rule=True, pad=True)


def main(argv: Sequence[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    owned = ns.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="txcommit-demo-")) if owned else ns.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    print(
        f"txcommit demo: starting a Spark Connect server with the plugin ({ns.master}) ...",
        file=sys.stderr,
    )
    config = ServerConfig(
        port=free_port(),
        master=ns.master,
        confs={"spark.sql.warehouse.dir": str(workdir / "warehouse")},
    )
    try:
        with start(config) as server:
            print(
                f"txcommit demo: server at {server.url}; replaying the DBIO paper's failure table",
                file=sys.stderr,
            )
            spark = connect(server.url)
            try:
                rows = run_paper_job(spark, workdir / "tables", ns.rows, ns.fail_delay)
            finally:
                spark.stop()
    finally:
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print("Appending to an existing table with a job whose last task keeps failing:")
    print()
    print(render(rows, ns.rows))
    print()
    txc = next(r for r in rows if r.algorithm == "txcommit")
    if txc.leaked_rows != 0:
        print(f"FAIL: txcommit let {txc.leaked_rows} rows of a failed job become visible")
        return 1
    print("txcommit: 0 rows of the failed job visible, previous rows intact.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
