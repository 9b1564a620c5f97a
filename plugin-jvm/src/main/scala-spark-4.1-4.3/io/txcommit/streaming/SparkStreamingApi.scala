package io.txcommit.streaming

import org.apache.spark.sql.execution.streaming.{checkpointing, sinks}

/** The Structured Streaming classes txcommit extends, where this Spark line keeps them.
  * Spark 4.1 and later keep them in .checkpointing and .sinks (4.0 had them one package up). */
private[txcommit] object SparkStreamingApi {
  type CheckpointFileManager = checkpointing.CheckpointFileManager
  val CheckpointFileManager: checkpointing.CheckpointFileManager.type = checkpointing.CheckpointFileManager
  type CancellableFSDataOutputStream = checkpointing.CheckpointFileManager.CancellableFSDataOutputStream
  type FileStreamSinkLog = sinks.FileStreamSinkLog
  val FileStreamSinkLog: sinks.FileStreamSinkLog.type = sinks.FileStreamSinkLog
  type SinkFileStatus = sinks.SinkFileStatus
  val SinkFileStatus: sinks.SinkFileStatus.type = sinks.SinkFileStatus
}
