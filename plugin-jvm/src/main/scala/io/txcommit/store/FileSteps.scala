package io.txcommit.store

import scala.reflect.ClassTag

import org.apache.hadoop.conf.Configuration

/**
 * How a maintenance command runs one step per file over many files (VACUUM's deletes, a
 * restore's checks that the files it re-adds are still there): on the caller's thread
 * ([[FileSteps.Here]]), or as a Spark job (`io.txcommit.spark.SparkJobSteps`) whose tasks run
 * the steps beside one another on the executors, so that a Spark Connect client sees the job's
 * progress while a long run goes on.
 */
trait FileSteps {

  /**
   * `step` applied to every item, the results in the items' order. `step` gets the Hadoop conf
   * where it runs (an executor's copy of `conf`) and is called once per task, its result once
   * per item; it must be serializable. `description` names the work in Spark's UI.
   */
  def apply[A: ClassTag, B: ClassTag](description: String, items: Seq[A], conf: Configuration)(
      step: Configuration => A => B): Seq[B]
}

object FileSteps {

  /** Every step on the caller's thread, one after another. */
  object Here extends FileSteps {
    override def apply[A: ClassTag, B: ClassTag](description: String, items: Seq[A], conf: Configuration)(
        step: Configuration => A => B): Seq[B] =
      if (items.isEmpty) Nil else items.map(step(conf))
  }
}
