package io.txcommit.spark

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{SaveMode, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CommitRecord, LogLayout, RecordCodec}
import io.txcommit.testing.{DelayedRecordAdapter, PluginSessions}

/**
 * A batch job whose commit point's create ends with no answer (a timeout: the store may still
 * apply it) fails with "may have committed", and its abort must keep every file: when the
 * record lands after the job failed, it names files that must still be there, and readers then
 * show the job whole. An append (`commits/`) and an overwrite (`replace/`).
 */
class BatchAbortSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark: SparkSession = PluginSessions.builder("txcommit-batch-abort")
    .config("spark.txcommit.adapter.file", "local-delayed-record")
    .config(TxCommitConf.MaxClockSkewMs, "0")
    .config(TxCommitConf.CheckpointInterval, "0")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  /** Runs `write`, which must fail as a commit of unknown outcome; then lands the held record. */
  private def failsThenLands(write: => Unit): Unit = {
    DelayedRecordAdapter.arm()
    val failure = intercept[Exception](write)
    val chain = Iterator.iterate[Throwable](failure)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
    assert(chain.contains("may have committed"), chain)
    assert(DelayedRecordAdapter.land(), "the record's create was held back")
  }

  private def ids(path: String): Seq[Long] = {
    import spark.implicits._
    spark.read.parquet(path).select("id").as[Long].collect().sorted.toSeq
  }

  /** The late record names files that are all there, and no abort marker stands beside it. */
  private def keptWhole(table: String, record: CommitRecord): Unit = {
    val layout = LogLayout(new Path(table))
    val fs = layout.commitsDir.getFileSystem(new Configuration())
    assert(record.added.size == 4)
    val missing = record.added.map(f => new Path(new Path(table), f.path)).filterNot(fs.exists)
    assert(missing.isEmpty, s"the committed job names deleted files: $missing")
    assert(!fs.exists(layout.abortedRecord(record.txn)), "a committed job was marked aborted")
  }

  private def records(table: String, dir: LogLayout => Path): Seq[(FileStatus, Array[Byte])] = {
    val d = dir(LogLayout(new Path(table)))
    val fs = d.getFileSystem(new Configuration())
    fs.listStatus(d).toSeq.map(s => s -> fs.open(s.getPath).readAllBytes())
  }

  test("an append whose record lands after the job failed keeps its files; readers show it whole") {
    val table = Files.createTempDirectory("txcommit-batch-abort").resolve("t").toUri.toString
    spark.range(0, 10).write.parquet(table)
    failsThenLands(spark.range(100, 200, 1, 4).write.mode(SaveMode.Append).parquet(table))
    val committed = records(table, _.commitsDir).map { case (s, bytes) =>
      RecordCodec.decode(bytes, s.getPath.toString, s.getPath.getName.stripSuffix(".json"))
    }
    assert(committed.size == 2)
    keptWhole(table, committed.maxBy(_.committedAt))
    assert(ids(table) == (0L until 10L) ++ (100L until 200L))
    // The table goes on: the next append commits (and rolls the late commit's derived work forward).
    spark.range(300, 305).write.mode(SaveMode.Append).parquet(table)
    assert(ids(table) == (0L until 10L) ++ (100L until 200L) ++ (300L until 305L))
  }

  test("an overwrite whose replace record lands after the job failed keeps its files; readers show the new data only") {
    val table = Files.createTempDirectory("txcommit-batch-abort").resolve("t").toUri.toString
    spark.range(0, 10).write.parquet(table)
    failsThenLands(spark.range(100, 200, 1, 4).write.mode(SaveMode.Overwrite).parquet(table))
    val replaced = records(table, _.replaceDir)
    assert(replaced.size == 1, "the replacing commit's record landed")
    val (status, bytes) = replaced.head
    keptWhole(table, RecordCodec.decodeReplacement(bytes, status.getPath.toString, 1L))
    assert(ids(table) == (100L until 200L))
    spark.range(300, 305).write.mode(SaveMode.Append).parquet(table)
    assert(ids(table) == (100L until 200L) ++ (300L until 305L))
  }
}
