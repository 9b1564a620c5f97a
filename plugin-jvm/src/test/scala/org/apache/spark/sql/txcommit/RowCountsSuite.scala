package org.apache.spark.sql.txcommit

import java.nio.file.{Files, Path => JPath}
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean

import org.apache.hadoop.fs.Path
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.store.Adapters
import io.txcommit.testing.{ForwardingCommitStore, PluginSessions}

/**
 * Spark hands a write's row count to listeners only after the write has returned to its caller,
 * and listeners run on their own thread, as late as their queue lets them. A history read sent
 * right after a write, on the same driver, must still show the write's rows.
 */
class RowCountsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-rows", plugin = false).getOrCreate()

  /** Holds back every listener behind it in the shared queue at the end of a SQL execution, while armed. */
  private final class Stall extends SparkListener {
    val armed = new AtomicBoolean(false)
    @volatile var release = new CountDownLatch(1)
    def hold(): Unit = { release = new CountDownLatch(1); armed.set(true) }
    def let(): Unit = { armed.set(false); release.countDown() }
    override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
      case _: SparkListenerSQLExecutionEnd if armed.get => release.await(60, TimeUnit.SECONDS)
      case _ => ()
    }
  }

  // Added before any txcommit write on this context, so it runs ahead of the count listener.
  private lazy val stall = { val s = new Stall; spark.sparkContext.addSparkListener(s); s }

  override protected def beforeAll(): Unit = { super.beforeAll(); stall.armed.get; () }

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newTable(): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-rows").resolve("t")
    (dir, dir.toUri.toString)
  }

  /** The txn of a table's one commit. */
  private def onlyTxn(dir: JPath): String = {
    val records = Files.list(dir.resolve("_txcommit/commits"))
    try records.iterator().next().getFileName.toString.stripSuffix(".json")
    finally records.close()
  }

  private def deleteTree(dir: JPath): Unit =
    if (Files.exists(dir)) {
      val all = Files.walk(dir)
      try all.sorted(java.util.Comparator.reverseOrder()).forEach(p => Files.delete(p))
      finally all.close()
    }

  private def rowsInHistory(table: String): Seq[Any] =
    spark.sql(s"TXCOMMIT HISTORY '$table'").collect().toSeq.map(_.getAs[Any]("rows"))

  test("a history read right after a write on the same driver shows the write's rows, even when listeners lag") {
    val (_, table) = newTable()
    spark.range(10).write.parquet(table)
    assert(rowsInHistory(table) == Seq(10L))
    stall.hold()
    spark.range(100).write.mode("append").parquet(table)
    val releaser = new Thread(() => { Thread.sleep(1500); stall.let() })
    releaser.start()
    try assert(rowsInHistory(table).toSet == Set(10L, 100L))
    finally releaser.join()
  }

  test("a table deleted right after its write (DROP TABLE) stays deleted: its count is not written") {
    val (dir, table) = newTable()
    spark.range(10).write.parquet(table)
    stall.hold()
    try {
      spark.range(5).write.mode("append").parquet(table)
      deleteTree(dir) // as DROP TABLE deletes a managed table's directory, before the count is heard
    } finally stall.let()
    RowCounts.awaitRecorded(new Path(table), spark.sparkContext.hadoopConfiguration)
    assert(!Files.exists(dir), "the deleted table's directory came back")
  }

  test("a table deleted while its count is being written is not brought back, nor a table beside it") {
    val conf = spark.sparkContext.hadoopConfiguration

    /** A table of one commit whose count the listener has recorded: this test records it again. */
    def written(rows: Int): (JPath, String) = {
      val (dir, table) = newTable()
      spark.range(rows.toLong).write.parquet(table)
      RowCounts.awaitRecorded(new Path(table), conf)
      (dir, table)
    }
    val (dir, table) = written(10)
    val txn = onlyTxn(dir)
    val local = Adapters.open(new Path(table), conf)
    // The deletion lands between the check that the table is there and the count's write.
    val racing = new ForwardingCommitStore(local) {
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        if (target.getName == s"$txn.json" && target.getParent.getName == "rows") deleteTree(dir)
        super.createExclusive(target, bytes)
      }
    }
    RowCounts.record(new Path(table), txn, 10L, racing, conf)
    assert(!Files.exists(dir), "the deleted table's directory came back")
    // A table holding other files where the deleted one was: only what the count wrote goes.
    val (dir2, table2) = written(3)
    val txn2 = onlyTxn(dir2)
    val keep = dir2.resolve("kept.txt")
    val racing2 = new ForwardingCommitStore(Adapters.open(new Path(table2), conf)) {
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        if (target.getParent.getName == "rows") {
          deleteTree(dir2); Files.createDirectories(dir2); Files.write(keep, Array[Byte](1))
        }
        super.createExclusive(target, bytes)
      }
    }
    RowCounts.record(new Path(table2), txn2, 3L, racing2, conf)
    assert(Files.exists(keep))
    assert(!Files.exists(dir2.resolve("_txcommit")), "the count's own directories are taken back")
  }
}
