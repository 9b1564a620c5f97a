package io.txcommit.streaming

import org.apache.spark.sql.{Encoder, SparkSession}

/** Spark's test source for streams, where this Spark line keeps it. */
object SparkStreamingTestApi {
  type MemoryStream[A] = org.apache.spark.sql.execution.streaming.MemoryStream[A]
  val MemoryStream: org.apache.spark.sql.execution.streaming.MemoryStream.type =
    org.apache.spark.sql.execution.streaming.MemoryStream

  /** A one-partition memory stream of the session (4.0 takes its SQLContext, 4.1 on the session). */
  def memoryStream[A](session: SparkSession)(implicit encoder: Encoder[A]): MemoryStream[A] =
    MemoryStream[A](1)(encoder, session.sqlContext)
}
