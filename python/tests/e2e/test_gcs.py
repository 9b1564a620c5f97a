"""Google Cloud Storage on one machine: `txcommit server --store gcs --local` starts
fake-gcs-server beside the Connect server, and a JVM-less client writes gs:// tables through
Google's Cloud Storage connector and the gcs adapter. The store and checkpoint contracts on the
emulator, the 16-driver race, the probe and a lost answer are in
adapters/txcommit_store_gcs/jvm (GcsStoreSuites)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import pytest

import txcommit
from txcommit.adapters import open_store

from support.servers import READY_MARK, ServerProcess, new_session, server_python
from support.tables import check_cli_against_dataset

STARTED = re.compile(
    r"local GCS \(fake-gcs-server\) at http://127\.0\.0\.1:(\d+), bucket gs://txcommit/"
)


def test_server_store_gcs_appends_hides_a_failed_job_and_overwrites(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One server: two appends, a job that fails half way, an overwrite; Spark and the Python
    readers see exactly the committed transactions; each commit is one exclusive upload."""
    proc = ServerProcess(workdir / "gcs-quick-start", extra_args=["--store", "gcs", "--local"])
    proc.start()
    try:
        out = "".join(proc.output)
        found = STARTED.search(out)
        assert found and READY_MARK in out, out
        port = int(found.group(1))
        endpoint = f"http://127.0.0.1:{port}"
        url = "gs://txcommit/events"
        spark = new_session(proc.url)
        txcommit.enable(spark)

        spark.range(0, 1000, 1, 4).write.parquet(url)
        spark.range(1000, 1005).write.mode("append").parquet(url)
        assert spark.read.parquet(url).count() == 1005

        # Three of four tasks write their files, the last one fails every attempt.
        failing = spark.range(0, 4000, 1, 4).selectExpr(
            "if(id = 3999, raise_error('txcommit test: task fails'), id) AS id"
        )
        with pytest.raises(Exception, match="txcommit test: task fails"):
            failing.write.mode("append").parquet(url)
        assert spark.read.parquet(url).count() == 1005

        store = open_store(url, endpoint=endpoint)
        success = json.loads(store.read("_SUCCESS") or b"{}")
        # The schema guard lists commits/ and replace/; then the record is one PUT.
        assert success["jobCommitRequests"] == {"adapter": "gcs", "LIST": 2, "PUT": 1}, success
        aborted = store.list("_txcommit/aborted")
        assert len(aborted) == 1, "the failed job is recorded as aborted"

        spark.range(7).write.mode("overwrite").parquet(url)
        assert sorted(r.id for r in spark.read.parquet(url).collect()) == list(range(7))
        spark.stop()

        committed = [f for f in store.list("_txcommit/commits") if f.key.endswith(".json")]
        assert len(committed) == 3, committed  # two appends and the overwrite, not the failed job
        assert store.list("_txcommit/replace"), "the overwrite's replace/ record"
        assert not store.list("_txcommit/probe"), "the probe leaves nothing"
        table = txcommit.dataset(url, storage_options={"endpoint": endpoint}).to_table()
        assert sorted(table.column("id").to_pylist()) == list(range(7))
        states = check_cli_against_dataset(
            url, {"endpoint": endpoint}, "events", capsys, monkeypatch
        )
        assert states == {"committed": 3, "aborted": 1}, states
    finally:
        proc.stop()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the emulator stopped with the server"
    cli = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "jars", "--store", "gcs"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert cli.stdout.strip().endswith("gcs-connector-4.0.4-shaded.jar"), cli.stdout
