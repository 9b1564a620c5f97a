"""HDFS's test kit: tables on a MiniDFSCluster, read raw over WebHDFS; a proxy in front of the
NameNode's RPC port loses the answer to a rename. Its store contract runs end to end
(test_hdfs_python.py): the cluster needs a JVM."""

from __future__ import annotations

import getpass
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

from txcommit.devkit.testkit import StoreTestKit
from txcommit_store_hdfs.devkit.emulator import MiniHdfs


def _server_spark_jars() -> Path | None:
    """The jars of the server side's pyspark (``TXCOMMIT_SERVER_PYTHON``): a client venv has
    none to run the cluster on."""
    python = os.environ.get("TXCOMMIT_SERVER_PYTHON")
    if not python:
        return None
    code = "import os, pyspark; print(os.path.dirname(pyspark.__file__))"
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip()) / "jars"


@pytest.fixture(scope="session")
def mini_hdfs() -> Iterator[MiniHdfs]:
    """A real NameNode and DataNode (MiniDFSCluster) in their own JVM, on loopback."""
    with MiniHdfs(spark_jars=_server_spark_jars()) as hdfs:
        yield hdfs


def _table(store: str, name: str, workdir: Path, hdfs: MiniHdfs) -> dict[str, Any]:
    prefix = f"tables/{name}"
    webhdfs = fsspec.filesystem(
        "webhdfs", host="127.0.0.1", port=hdfs.http_port, user=getpass.getuser()
    )
    return {"url": f"{hdfs.endpoint}/{prefix}", "prefix": prefix, "hdfs": webhdfs}


def _creates(names: str) -> bytes:
    # A Hadoop RPC call: its header (method, protocol), then its arguments (for a rename, the
    # temporary path and the target); never into the next call's header.
    return rb"rename2?\x12.org\.apache\.hadoop\.hdfs\.protocol\.ClientProtocol" + (
        rb"(?:(?!ClientProtocol).){0,2000}?/" + names.encode() + rb"(?![^\x00-\x1f])"
    )


KIT = StoreTestKit(
    fixture="mini_hdfs",
    table=_table,
    front_port=lambda hdfs: int(hdfs.port),
    # The NameNode's address is in the URL.
    through_front=lambda url, front: url.replace(url.split("/")[2], front, 1),
    creates=_creates,
    directories=True,
    # The HDFS client's one connection to the NameNode: Hadoop retries no call on it that a
    # lost answer failed, on a NameNode without HA.
    one_connection=True,
)
