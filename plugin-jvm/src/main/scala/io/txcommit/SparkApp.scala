package io.txcommit

import org.apache.spark.SparkEnv

/** The Spark application this JVM belongs to, as records, fences and checkpoints name it. */
object SparkApp {

  /** `spark.app.id` of this JVM's Spark application; None outside one (unit tests, tools). */
  def id: Option[String] = Option(SparkEnv.get).flatMap(_.conf.getOption("spark.app.id"))
}
