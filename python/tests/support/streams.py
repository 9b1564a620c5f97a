"""Streaming queries under test: the per-session confs that put txcommit under them."""

from __future__ import annotations

MANAGER = "io.txcommit.streaming.TxCommitCheckpointFileManager"
SINK_PROTOCOL = "io.txcommit.streaming.TxCommitSinkProtocol"


def configure(spark, store: str) -> None:  # noqa: ANN001 - a Connect SparkSession
    """Per-session confs, as a JVM-less client sets them."""
    spark.conf.set("spark.sql.streaming.checkpointFileManagerClass", MANAGER)
    spark.conf.set("spark.sql.streaming.commitProtocolClass", SINK_PROTOCOL)
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    if store != "local":
        spark.conf.set("spark.txcommit.adapter.s3a", store)
