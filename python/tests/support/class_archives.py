"""Dumps the class-data archives the tests' Spark drivers start from (.ci/cds/java, run by
.ci/test before the tests): one server for each classpath the tests give a driver (Spark's own
for the local file system and HDFS; S3, GCS and Azure put their connectors before it), each
running a transactional write and a read, then stopped with SIGTERM so that its JVM writes the
classes it loaded into ``TXCOMMIT_CDS_DIR/dump/<classpath>.jsa`` as it exits; once every JVM
has exited the archives move to ``TXCOMMIT_CDS_DIR``, where drivers started from then on find
them (a rename: no JVM maps a half-written archive). Tests may run meanwhile: a driver with no
archive starts the usual way.

    TXCOMMIT_CDS_DUMP=1 TXCOMMIT_CDS_DIR=DIR JAVA_HOME=<a JDK with .ci/cds/java as bin/java> \
        python -m support.class_archives
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.servers import ServerProcess, with_test_jvm_opts
from support.stores import server_args

#: --store and the confs a server of that store needs to start; the dump writes to the local
#: file system only, so the endpoints are never reached.
FAMILIES: dict[str, dict[str, str]] = {
    "local": {},
    "s3": {"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9"},
    "gcs": {},
    "azure": {},
}


def dump(store: str, base: Path) -> str:
    from pyspark.sql import SparkSession

    server = ServerProcess(
        base / store,
        confs=FAMILIES[store],
        extra_args=server_args(store),
        env=with_test_jvm_opts(dict(os.environ)),
    ).start()
    assert server.jvm is not None
    start = time.monotonic()
    try:
        spark = SparkSession.builder.remote(server.url).create()
        table = str(base / store / "table")
        spark.range(100).selectExpr("id", "id % 2 as k").write.partitionBy("k").parquet(table)
        spark.range(10).selectExpr("id", "id % 2 as k").write.mode("append").partitionBy(
            "k"
        ).parquet(table)
        assert spark.read.parquet(table).count() == 110
        spark.stop()
        os.kill(server.jvm.pid, signal.SIGTERM)
        deadline = time.monotonic() + 120
        while Path(f"/proc/{server.jvm.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        server.stop()
    return f"{store}: {time.monotonic() - start:.0f}s"


def main() -> int:
    out = Path(os.environ["TXCOMMIT_CDS_DIR"])
    assert os.environ.get("TXCOMMIT_CDS_DUMP") == "1", "set TXCOMMIT_CDS_DUMP=1"
    (out / "dump").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(len(FAMILIES)) as pool:
        done = list(pool.map(lambda s: dump(s, Path(tmp)), FAMILIES))
    for archive in (out / "dump").glob("*.jsa"):
        archive.rename(out / archive.name)
    archives = sorted(p.name for p in out.glob("*.jsa"))
    print(f"class-data archives ({', '.join(done)}): {len(archives)} in {out}", flush=True)
    return 0 if len(archives) >= len(FAMILIES) else 1


if __name__ == "__main__":
    sys.exit(main())
