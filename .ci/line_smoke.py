"""One Spark line's end-to-end smoke, run by `.ci/lines` with the python of a fresh venv that
holds only pyspark of that line (from the package index) and the txcommit wheel (not the
checkout): `txcommit server --store s3 --local` (a local S3 endpoint, moto) is started, and a Spark
Connect client does a transactional append, a failed job that leaves nothing, an overwrite, a
read, TXCOMMIT HISTORY, a streaming batch, one S3 write and a read of an overwrite committed
by a driver whose clock runs an hour ahead. First, a server given another line's plugin jar
must refuse to start, saying which Spark runs and which artifact to use. The server's
sessions are Hive-enabled, as many production ones are: the releases installed here (4.0.5,
4.1.4, 4.2.1, 4.3.0) run txcommit's log-first read rule in them too (4.0.0-4.0.2, 4.1.0-4.1.1
and 4.2.0 drop it: their reads are judged by the clock cut). Exits non-zero on the first
thing that is wrong.

    python line_smoke.py LINE WORKDIR
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def check(what: str, ok: bool, detail: object = "") -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {what}{f': {detail}' if detail != '' else ''}", flush=True)
    if not ok:
        raise SystemExit(f"line smoke: {what} failed ({detail})")


def main(line: str, work: Path) -> None:
    import txcommit

    # The wheel, not the checkout: the imported package lives in the venv.
    check(
        "txcommit comes from the installed wheel",
        "site-packages" in txcommit.__file__,
        txcommit.__file__,
    )
    txcommit_bin = Path(sys.executable).parent / "txcommit"
    refuses_another_lines_jar(line, txcommit_bin, work)
    port = free_port()
    log = work / "server.log"
    started = time.monotonic()
    server = subprocess.Popen(
        [
            str(txcommit_bin),
            "server",
            "--store",
            "s3",
            "--local",
            "--port",
            str(port),
            "--log-file",
            str(log),
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.catalogImplementation=hive",
            "--master",
            "local[2]",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    out: list[str] = []
    try:
        assert server.stdout is not None
        for text in server.stdout:
            out.append(text)
            if "ready at sc://" in text:
                break
        else:
            raise SystemExit(
                f"line smoke: the server exited ({server.wait()}):\n{''.join(out)}"
                f"\n{log.read_text()[-4000:] if log.exists() else ''}"
            )
        check("txcommit server started", True, f"{time.monotonic() - started:.0f}s")
        run_client(line, port, work)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def refuses_another_lines_jar(line: str, txcommit_bin: Path, work: Path) -> None:
    """The wheel's plugin jar of another line on this line's Spark: the server must not start
    (it would start, then fail the first query with a NoSuchMethodError)."""
    from pyspark import __version__ as running

    from txcommit.server import find_plugin_jar

    other = "4.3" if line != "4.3" else "4.0"
    jar = find_plugin_jar(other)
    log = work / "wrong-line.log"
    started = time.monotonic()
    run = subprocess.run(
        [
            str(txcommit_bin),
            "server",
            "--port",
            str(free_port()),
            "--log-file",
            str(log),
            "--conf",
            "spark.ui.enabled=false",
            "--master",
            "local[1]",
            "--timeout",
            "120",
        ],
        env={**os.environ, "TXCOMMIT_PLUGIN_JAR": str(jar)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = run.stdout + run.stderr + (log.read_text() if log.exists() else "")
    wanted = (
        f"this server runs Spark {running}",
        f"built for Spark {other}",
        str(jar),
        f"io.txcommit:txcommit-spark-{line}_2.13:",
    )
    missing = [w for w in wanted if w not in said]
    detail = f"missing {missing}: {said[-3000:]}" if missing else ""
    took = f"{time.monotonic() - started:.0f}s"
    check(
        f"the Spark {other} jar refuses to start on Spark {running}",
        run.returncode != 0 and not missing,
        detail or took,
    )


def run_client(line: str, port: int, work: Path) -> None:
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import txcommit

    spark = SparkSession.builder.remote(f"sc://localhost:{port}").getOrCreate()
    txcommit.enable(spark)  # this session's file writes are transactional
    check(f"the server runs Spark {line}", spark.version.startswith(line + "."), spark.version)
    table = (work / "events").as_uri()

    def history(path: str) -> list[Any]:
        """The committed transactions TXCOMMIT HISTORY lists (it also lists aborted ones)."""
        rows = spark.sql(f"TXCOMMIT HISTORY '{path}'").collect()
        return [r for r in rows if r.state == "committed"]

    spark.range(0, 100, numPartitions=2).write.mode("append").parquet(table)
    spark.range(100, 150, numPartitions=2).write.mode("append").parquet(table)
    check("two transactional appends are read back", spark.read.parquet(table).count() == 150)
    before = len(history(table))
    states = [r.state for r in spark.sql(f"TXCOMMIT HISTORY '{table}'").collect()]
    check("TXCOMMIT HISTORY lists both commits", before == 2, states)
    rows = sorted(r.rows for r in history(table) if r.rows is not None)
    check("TXCOMMIT HISTORY counts the rows of both appends", rows == [50, 100], rows)

    bad = F.raise_error(F.lit("bad record 999"))
    failing = spark.range(0, 1000, numPartitions=4).select(
        F.when(F.col("id") == 999, bad).otherwise(F.col("id")).alias("id")
    )
    try:
        failing.write.mode("append").parquet(table)
        check("a failing job fails", False)
    except PySparkException as e:
        check("a failing job fails", "bad record 999" in str(e), type(e).__name__)
    check("the failed job left nothing a reader sees", spark.read.parquet(table).count() == 150)
    check("the failed job left no commit", len(history(table)) == before)
    states = [r.state for r in spark.sql(f"TXCOMMIT HISTORY '{table}'").collect()]
    check("TXCOMMIT HISTORY shows the failed job aborted", "aborted" in states, states)

    spark.range(0, 10).write.mode("overwrite").parquet(table)
    check("an overwrite replaces the table", spark.read.parquet(table).count() == 10)
    check("TXCOMMIT HISTORY lists the overwrite", len(history(table)) == before + 1)

    # A streaming query's batch goes through the txcommit sink (its own commit protocol) and
    # its checkpoint through the txcommit checkpoint file manager (docs/streaming.md).
    for key, cls in (
        ("checkpointFileManagerClass", "TxCommitCheckpointFileManager"),
        ("commitProtocolClass", "TxCommitSinkProtocol"),
    ):
        spark.conf.set(f"spark.sql.streaming.{key}", f"io.txcommit.streaming.{cls}")
    incoming = work / "incoming"
    incoming.mkdir()
    (incoming / "part-0.json").write_text("".join(f'{{"id": {i}}}\n' for i in range(30)))
    sink = (work / "stream").as_uri()
    query = (
        spark.readStream.schema("id long")
        .json(incoming.as_uri())
        .writeStream.format("parquet")
        .option("checkpointLocation", (work / "checkpoint").as_uri())
        .trigger(availableNow=True)
        .start(sink)
    )
    query.awaitTermination(180)
    check(
        "a streaming batch is committed by the txcommit sink",
        len(history(sink)) == 1,
        query.exception() or "",
    )
    check("the streamed rows are read back once", spark.read.parquet(sink).count() == 30)

    # Another application's driver, its clock an hour ahead, overwrote a table: a Hive-enabled
    # session reads it at once.
    check(
        "the sessions are Hive-enabled", spark.conf.get("spark.sql.catalogImplementation") == "hive"
    )
    ahead = work / "ahead"
    spark.range(0, 100).write.parquet(ahead.as_uri())
    spark.range(0, 7).write.mode("overwrite").parquet(ahead.as_uri())
    hour_ahead = int(time.time() * 1000) + 3600 * 1000
    [replace] = (ahead / "_txcommit" / "replace").glob("*.json")
    fields = json.loads(replace.read_text())
    fields.update(committedAt=hour_ahead, appId="app-with-a-fast-clock")
    for record in (replace, ahead / "_txcommit" / "commits" / f"{fields['txn']}.json"):
        record.write_text(json.dumps(fields))
    # With a clock allowance of an hour the clock cut would keep the overwrite out (the first
    # write is this application's, dated by its own clock): read at once, it was read log first.
    spark.conf.set("spark.txcommit.read.maxClockSkewMs", str(3600 * 1000))
    seen = spark.read.parquet(ahead.as_uri()).count()
    check("an overwrite by a driver an hour ahead is read at once, log first", seen == 7, seen)
    # Where the rule does not run, the clock cut dates that commit by the store's clock: it is
    # read once the allowance has passed, not in an hour.
    spark.conf.set("spark.txcommit.read.logFirst", "false")
    spark.conf.set("spark.txcommit.read.maxClockSkewMs", "1000")
    time.sleep(1.5)
    seen = spark.read.parquet(ahead.as_uri()).count()
    check("and by the clock cut, once the clock allowance has passed", seen == 7, seen)
    for key in ("logFirst", "maxClockSkewMs"):
        spark.conf.unset(f"spark.txcommit.read.{key}")

    s3 = "s3a://txcommit/line-smoke"
    spark.range(0, 42, numPartitions=2).write.mode("append").parquet(s3)
    check("an S3 write (conditional put) is read back", spark.read.parquet(s3).count() == 42)
    check("TXCOMMIT HISTORY of the S3 table", len(history(s3)) == 1)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
