"""HDFS's bindings of txcommit's shared tests: how the end-to-end tests lay out a table on a
MiniHdfs (``TABLE_MAKERS``; its store contract runs end to end, in test_hdfs_python.py: the
MiniHdfs needs a JVM). Collected by ``support.tables.table_makers``, beside the fixtures every
store's tests share."""

from __future__ import annotations

import getpass
from pathlib import Path

import fsspec

from txcommit_store_hdfs.emulator import MiniHdfs

from support.tables import TableMaker, TableRef


def hdfs_table(store: str, name: str, workdir: Path, hdfs: MiniHdfs) -> TableRef:
    prefix = f"tables/{name}"
    webhdfs = fsspec.filesystem(
        "webhdfs", host="127.0.0.1", port=hdfs.http_port, user=getpass.getuser()
    )
    return TableRef(store, f"{hdfs.endpoint}/{prefix}", prefix=prefix, hdfs=webhdfs)


TABLE_MAKERS = {"hdfs": TableMaker("mini_hdfs", hdfs_table)}
