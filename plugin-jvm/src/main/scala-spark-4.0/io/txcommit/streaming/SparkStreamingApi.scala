package io.txcommit.streaming

import org.apache.spark.sql.execution.{streaming => checkpointing}
import org.apache.spark.sql.execution.{streaming => sinks}

/** The Structured Streaming classes txcommit extends, where this Spark line keeps them.
  * Spark 4.0 keeps these in org.apache.spark.sql.execution.streaming (4.1 moved them into .checkpointing and .sinks). */
private[txcommit] object SparkStreamingApi {
  type CheckpointFileManager = checkpointing.CheckpointFileManager
  val CheckpointFileManager: checkpointing.CheckpointFileManager.type = checkpointing.CheckpointFileManager
  type CancellableFSDataOutputStream = checkpointing.CheckpointFileManager.CancellableFSDataOutputStream
  type FileStreamSinkLog = sinks.FileStreamSinkLog
  val FileStreamSinkLog: sinks.FileStreamSinkLog.type = sinks.FileStreamSinkLog
  type SinkFileStatus = sinks.SinkFileStatus
  val SinkFileStatus: sinks.SinkFileStatus.type = sinks.SinkFileStatus
}
