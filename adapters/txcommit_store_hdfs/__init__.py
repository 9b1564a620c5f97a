"""The ``hdfs`` store: Spark's own Hadoop client speaks HDFS (no jar); a one-machine HDFS
(MiniDFSCluster) runs for ``txcommit server --store hdfs`` unless ``--no-local-hdfs``."""

from __future__ import annotations

from typing import Any

from txcommit.adapters.plugin import Emulator, LocalEmulator, StorePlugin


def start_local_hdfs(config: Any) -> tuple[Emulator, dict[str, str]]:
    """Start a one-machine HDFS; the server reaches it by its hdfs:// URL, no conf needed."""
    from txcommit_store_hdfs.emulator import MiniHdfs

    return MiniHdfs().start(), {}


def _standalone(bucket: str, port: int | None) -> Emulator:
    """A MiniDFSCluster (``bucket`` does not apply: the file system is the cluster's)."""
    from txcommit_store_hdfs.emulator import MiniHdfs

    return MiniHdfs(port)


def _banner(hdfs: Any, config: Any) -> str:
    return f"local HDFS (MiniDFSCluster) at {hdfs.endpoint}/ (WebHDFS: {hdfs.webhdfs})"


HDFS = StorePlugin(
    name="hdfs",
    summary="starts a one-machine HDFS unless --no-local-hdfs",
    python_store="txcommit_store_hdfs.store:HdfsStore",
    emulator=LocalEmulator(
        option="local_hdfs",
        help="with --store hdfs: reach your cluster's NameNode through its Hadoop configuration",
        start=start_local_hdfs,
        banner=_banner,
        standalone=_standalone,
    ),
    options={"endpoint": ("hdfs",)},
)

#: The entry points of the txcommit.adapters group (store name -> descriptor above), read
#: without importing this module by the build (setup.py) and by a checkout (builtin_stores).
ENTRY_POINTS = {"hdfs": "HDFS"}
