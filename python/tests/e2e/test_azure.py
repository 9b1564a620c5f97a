"""Azure Blob Storage on one machine: `txcommit server --store azure --local` starts Azurite
beside the Connect server, and a JVM-less client writes abfs:// tables through Hadoop's ABFS
with the `azure` adapter. The store and streaming checkpoint contracts on Azurite are in
adapters/txcommit_store_azure/jvm (AzureStoreContractSuite, AzureCheckpointManagerSuite,
AzureAdapterSuite)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import txcommit
from txcommit.conformance.protocol import fail_at
from txcommit_store_azure import EMULATOR_ACCOUNT, EMULATOR_KEY

from support.servers import READY_MARK, ServerProcess, new_session, server_python
from support.tables import check_cli_against_dataset, txn_of

STARTED = re.compile(
    r"local Azure Blob \(Azurite\) at (http://127\.0\.0\.1:(\d+)/devstoreaccount1), "
    r"container (abfs://txcommit@devstoreaccount1\.dfs\.core\.windows\.net/)"
)


@pytest.fixture(scope="module")
def azure_server(workdir: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(workdir / "azure-server", extra_args=["--store", "azure", "--local"])
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def started(proc: ServerProcess) -> re.Match[str]:
    found = STARTED.search("".join(proc.output))
    assert found and READY_MARK in "".join(proc.output), proc.log_tail()
    return found


def blobs(endpoint: str, prefix: str) -> dict[str, bytes]:
    """Every blob under ``prefix`` of the container, read straight from Azurite (not through
    txcommit), without ABFS's directory marker blobs."""
    from azure.storage.blob import BlobServiceClient

    client = BlobServiceClient(
        endpoint, credential={"account_name": EMULATOR_ACCOUNT, "account_key": EMULATOR_KEY}
    ).get_container_client("txcommit")
    return {
        b.name[len(prefix) + 1 :]: client.download_blob(b.name).readall()
        for b in client.list_blobs(name_starts_with=prefix + "/", include=["metadata"])
        if (b.metadata or {}).get("hdi_isfolder") != "true"
    }


def test_append_failure_and_overwrite_on_abfs(
    azure_server: ServerProcess,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An append, a job that fails half way (its rows stay hidden), an overwrite; Spark and the
    Python readers see the same rows, and each commit is one record in the container."""
    found = started(azure_server)
    endpoint, url = found.group(1), found.group(3) + "tables/events"
    spark = new_session(azure_server.url)
    txcommit.enable(spark)
    frame = spark.range(0, 1000, 1, 4).withColumn("k", F.col("id") % 3)
    frame.write.partitionBy("k").parquet(url)
    summary = json.loads(blobs(endpoint, "tables/events")["_SUCCESS"])
    cost = {k: v for k, v in summary["jobCommitRequests"].items() if k != "adapter"}
    assert summary["jobCommitRequests"]["adapter"] == "azure"
    # The schema guard lists commits/ and replace/; then the record is one Put Blob.
    assert cost == {"LIST": 2, "PUT": 1}, cost
    spark.range(1000, 1010).withColumn("k", F.lit(1)).write.mode("append").partitionBy("k").parquet(
        url
    )
    assert spark.read.parquet(url).count() == 1010

    boom = fail_at("id", 7, "injected task failure")
    failing = spark.range(0, 10, 1, 2).select(boom.alias("id")).withColumn("k", F.lit(2))
    with pytest.raises(Exception, match="injected task failure"):
        failing.write.mode("append").partitionBy("k").parquet(url)
    assert spark.read.parquet(url).count() == 1010, "the failed job's rows stay hidden"

    spark.range(5000, 5020).withColumn("k", F.lit(0)).write.mode("overwrite").partitionBy(
        "k"
    ).parquet(url)
    rows = sorted(r["id"] for r in spark.read.parquet(url).collect())
    assert rows == list(range(5000, 5020))
    spark.stop()

    stored = blobs(endpoint, "tables/events")
    records = [json.loads(v) for k, v in stored.items() if k.startswith("_txcommit/commits/")]
    assert len(records) == 3, sorted(stored)
    aborted = [k for k in stored if k.startswith("_txcommit/aborted/")]
    assert len(aborted) == 1, "the failed job left an abort marker"
    committed = {r["txn"] for r in records}
    old = [k for k in stored if txn_of(k) and not k.startswith("k=0/")]
    assert old and {txn_of(k) for k in old} <= committed, "overwritten files stay, hidden"

    options = {"endpoint": endpoint, "emulator": True}
    table = txcommit.dataset(url, storage_options=options).to_table()
    assert sorted(table["id"].to_pylist()) == list(range(5000, 5020))
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", EMULATOR_KEY)  # the CLI's credentials
    states = check_cli_against_dataset(url, options, "tables/events", capsys, monkeypatch)
    assert states == {"committed": 3, "aborted": 1}, states


def test_credentials_stay_out_of_the_log_and_azurite_stops_with_the_server(
    azure_server: ServerProcess,
) -> None:
    found = started(azure_server)
    log = re.search(r"\(log: (.+)\)", "".join(azure_server.output))
    assert log, "the server prints where its log is"
    text = Path(log.group(1)).read_text(errors="replace")
    assert "fs.azure.account.key." in text, "the log does mention the conf..."
    assert EMULATOR_KEY not in text, "...but never its value"
    azure_server.stop()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", int(found.group(2)))) != 0, "Azurite stopped too"
    cli = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "jars", "--store", "azure"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "hadoop-azure-3.5.0.jar" in cli.stdout and "HdrHistogram-2.1.12.jar" in cli.stdout
