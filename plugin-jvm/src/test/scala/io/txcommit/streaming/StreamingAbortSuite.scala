package io.txcommit.streaming

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.StreamingQueryException
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{LogLayout, RecordCodec}
import io.txcommit.streaming.SparkStreamingTestApi.memoryStream
import io.txcommit.testing.DelayedRecordAdapter

/**
 * A micro-batch whose commit-record create ends with no answer (a timeout: the store may still
 * apply it) must keep its files: when the record lands after the batch failed, it names files
 * that must still be there, and Spark's replay of the batch adopts that commit.
 */
class StreamingAbortSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder().master("local[2]").appName("txcommit-streaming-abort")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.streaming.commitProtocolClass", classOf[TxCommitSinkProtocol].getName)
    .config("spark.txcommit.adapter.file", "local-delayed-record")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  test("a batch whose record publish has an unknown outcome keeps its files; the late record names files that exist") {
    import spark.implicits._
    val base = Files.createTempDirectory("txcommit-stream-abort")
    val sink = base.resolve("sink").toUri.toString
    val checkpoint = base.resolve("checkpoint").toUri.toString
    val input = memoryStream[Long](spark)(newLongEncoder)
    def start() = input.toDF().writeStream.format("parquet")
      .option("checkpointLocation", checkpoint).start(sink)

    input.addData(1L to 100L)
    DelayedRecordAdapter.arm()
    val failing = start()
    val failure = intercept[StreamingQueryException](failing.processAllAvailable())
    assert(failure.getMessage.contains("may have committed"), failure.getMessage)
    failing.stop()

    // The store applies the create it had timed out on: the batch is committed.
    assert(DelayedRecordAdapter.land(), "the record's create was held back")
    val layout = LogLayout(new Path(sink))
    val fs = layout.commitsDir.getFileSystem(new Configuration())
    val records = fs.listStatus(layout.commitsDir).toSeq.map { s =>
      RecordCodec.decode(fs.open(s.getPath).readAllBytes(), s.getPath.toString, s.getPath.getName.stripSuffix(".json"))
    }
    assert(records.size == 1)
    val missing = records.head.added.map(f => new Path(new Path(sink), f.path)).filterNot(fs.exists)
    assert(missing.isEmpty, s"the committed batch names deleted files: $missing")
    assert(!fs.exists(layout.abortedRecord(records.head.txn)), "a committed batch was marked aborted")

    // Spark replays the batch (its sink log lacks it) and adopts the landed commit: each row once.
    val replay = start()
    try replay.processAllAvailable()
    finally replay.stop()
    assert(spark.read.parquet(sink).as[Long].collect().sorted.toSeq == (1L to 100L))
  }
}
