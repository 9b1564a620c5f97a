package io.txcommit.spark

import scala.reflect.ClassTag

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration

import io.txcommit.store.FileSteps

/**
 * [[FileSteps]] as a Spark job once there are at least `threshold` items
 * (`spark.txcommit.maintenance.jobThreshold`, default 1,000): tasks of at most
 * [[SparkJobSteps.PerTask]] items each, at most [[SparkJobSteps.MaxTasks]] tasks. The job runs in
 * the command's SQL execution, so a Spark Connect client gets its progress (stages, tasks done)
 * as it does a query's: pyspark's progress bar, `spark.registerProgressHandler`, and
 * `txcommit vacuum`'s progress line. Fewer items run on the driver, as before.
 */
final class SparkJobSteps(spark: SparkSession, threshold: Int) extends FileSteps {
  override def apply[A: ClassTag, B: ClassTag](description: String, items: Seq[A], conf: Configuration)(
      step: Configuration => A => B): Seq[B] =
    if (items.size < threshold) FileSteps.Here(description, items, conf)(step)
    else {
      val sc = spark.sparkContext
      val shared = new SerializableConfiguration(conf)
      val tasks = math.min(SparkJobSteps.MaxTasks, (items.size + SparkJobSteps.PerTask - 1) / SparkJobSteps.PerTask)
      val before = sc.getLocalProperty("spark.job.description")
      sc.setJobDescription(description)
      try sc.parallelize(items, tasks).mapPartitions { it =>
          io.txcommit.fault.HaltPoint.maybeHalt(shared.value, io.txcommit.fault.HaltPoint.MaintenanceTask)
          val run = step(shared.value)
          it.map(run)
        }.collect().toSeq
      finally sc.setJobDescription(before)
    }
}

object SparkJobSteps {
  val PerTask = 100
  val MaxTasks = 1000

  /** The session's conf: how many items make a job (0 or less: never). */
  val ThresholdConf = "spark.txcommit.maintenance.jobThreshold"
  val DefaultThreshold = 1000

  def of(spark: SparkSession): FileSteps = {
    val threshold =
      spark.sessionState.conf.getConf(org.apache.spark.sql.txcommit.TxCommitSQLConf.MAINTENANCE_JOB_THRESHOLD)
    if (threshold <= 0) FileSteps.Here else new SparkJobSteps(spark, threshold)
  }
}
