"""The ``hdfs`` store: Spark's own Hadoop client speaks HDFS (no jar); from Python, WebHDFS."""

from __future__ import annotations

from importlib.resources import files

from txcommit.stores import StoreDescriptor

HDFS = StoreDescriptor(
    name="hdfs",
    summary="the cluster's HDFS through its Hadoop configuration; with --local, a one-machine "
    "HDFS (MiniDFSCluster)",
    declaration=files(__name__) / "hdfs.json",
    python_store="txcommit_store_hdfs.store:HdfsStore",
    emulator="txcommit_store_hdfs.devkit.emulator:LOCAL",
    testkit="txcommit_store_hdfs.devkit.testkit:KIT",
    options={"endpoint": ("hdfs",)},
)
