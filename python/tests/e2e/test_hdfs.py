"""HDFS on one machine: `txcommit server --store hdfs --local` starts a real NameNode and
DataNode (MiniDFSCluster) beside the Connect server. The fault tests on HDFS are in
test_faults.py; the store contract on a NameNode is in plugin-jvm (HdfsStoreContractSuite,
HdfsRenameSuite)."""

from __future__ import annotations

import getpass
import re
import socket
import subprocess
from pathlib import Path

import fsspec

import txcommit

from support.servers import READY_MARK, ServerProcess, new_session, server_python

STARTED = re.compile(
    r"local HDFS \(MiniDFSCluster\) at hdfs://127\.0\.0\.1:(\d+)/ "
    r"\(WebHDFS: http://127\.0\.0\.1:(\d+)/webhdfs/v1\)"
)


def test_server_store_hdfs_quick_start(workdir: Path) -> None:
    """A JVM-less client writes and appends to an hdfs:// table through the server; both
    commits are records on the NameNode; the mini cluster stops with the server."""
    proc = ServerProcess(workdir / "hdfs-quick-start", extra_args=["--store", "hdfs", "--local"])
    proc.start()
    try:
        out = "".join(proc.output)
        found = STARTED.search(out)
        assert found and READY_MARK in out, out
        nn_port, http_port = int(found.group(1)), int(found.group(2))
        url = f"hdfs://127.0.0.1:{nn_port}/quick"
        spark = new_session(proc.url)
        txcommit.enable(spark)
        spark.range(1000).write.parquet(url)
        spark.range(5).write.mode("append").parquet(url)
        assert spark.read.parquet(url).count() == 1005
        spark.stop()
        webhdfs = fsspec.filesystem(
            "webhdfs", host="127.0.0.1", port=http_port, user=getpass.getuser()
        )
        records = webhdfs.ls("/quick/_txcommit/commits", detail=False)
        assert len([r for r in records if r.endswith(".json")]) == 2, records
        assert not [r for r in records if r.rsplit("/", 1)[-1].startswith(".")], "no temp file"
    finally:
        proc.stop()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", nn_port)) != 0, "the NameNode stopped with the server"
    cli = subprocess.run(
        [server_python(), "-m", "txcommit.cli", "jars", "--store", "hdfs"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert cli.stdout == "" and "needs no jar" in cli.stderr
