package io.txcommit.streaming

/** Spark's test source for streams, where this Spark line keeps it. */
object SparkStreamingTestApi {
  type MemoryStream[A] = org.apache.spark.sql.execution.streaming.runtime.MemoryStream[A]
  val MemoryStream: org.apache.spark.sql.execution.streaming.runtime.MemoryStream.type =
    org.apache.spark.sql.execution.streaming.runtime.MemoryStream
}
