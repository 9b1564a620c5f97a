package org.apache.spark.sql.txcommit

import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.PluginSessions

/**
 * Spark hands a write's row count to listeners only after the write has returned to its caller,
 * and listeners run on their own thread, as late as their queue lets them. A history read sent
 * right after a write, on the same driver, must still show the write's rows.
 */
class RowCountsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-rows", plugin = false).getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  /** Holds back every listener behind it in the shared queue at the end of a SQL execution, while armed. */
  private final class Stall extends SparkListener {
    val armed = new AtomicBoolean(false)
    val release = new CountDownLatch(1)
    override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
      case _: SparkListenerSQLExecutionEnd if armed.get => release.await(60, TimeUnit.SECONDS)
      case _ => ()
    }
  }

  private def rowsInHistory(table: String): Seq[Any] =
    spark.sql(s"TXCOMMIT HISTORY '$table'").collect().toSeq.map(_.getAs[Any]("rows"))

  test("a history read right after a write on the same driver shows the write's rows, even when listeners lag") {
    // Added before any txcommit write on this context, so it runs ahead of the count listener.
    val stall = new Stall
    spark.sparkContext.addSparkListener(stall)
    val table = Files.createTempDirectory("txcommit-rows").resolve("t").toUri.toString
    try {
      spark.range(10).write.parquet(table)
      assert(rowsInHistory(table) == Seq(10L))
      stall.armed.set(true)
      spark.range(100).write.mode("append").parquet(table)
      val releaser = new Thread(() => { Thread.sleep(1500); stall.armed.set(false); stall.release.countDown() })
      releaser.start()
      try assert(rowsInHistory(table).toSet == Set(10L, 100L))
      finally releaser.join()
    } finally spark.sparkContext.removeSparkListener(stall)
  }
}
