package io.txcommit.spark

import java.nio.file.Files

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.TableVersions
import io.txcommit.read.{AsOfOption, LogFirstSnapshot}
import io.txcommit.testing.PluginSessions

/**
 * A read of a past snapshot lists the table's log, then its data. VACUUM can run in between:
 * it records its horizon, then deletes the files a later overwrite removed, files the snapshot
 * holds. The data listing then misses them, and the read must fail whole (as one that began
 * after VACUUM's record is refused), never show part of the snapshot, or none of it.
 *
 * The interleaving is made exact by taking the read's log-first snapshot (what the analyzer
 * rule takes before Spark lists) before VACUUM and handing it to the read after: a value a
 * read carries for `spark.txcommit.read.snapshot` is used as given.
 */
class PastSnapshotVacuumRaceSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-past-snapshot-race")
    .config(TxCommitConf.CheckpointInterval, "0")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  test("a past snapshot whose files VACUUM deleted after the read listed the log fails the read whole") {
    val url = Files.createTempDirectory("txcommit-past-race").resolve("t").toUri.toString.stripSuffix("/")
    spark.range(0, 40, 1, 4).write.parquet(url)
    val first = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().head.getAs[String]("txn")
    spark.range(100, 110).write.mode("overwrite").parquet(url)

    // The read lists the log (its snapshot as of the first version)...
    val asOf = AsOfOption(TableVersions.parseAsOf(first).get, TxCommitConf.AsOfOption)
    val snapshot = LogFirstSnapshot.forRoots(Seq(new Path(url)), spark.sessionState.newHadoopConf(), Some(asOf))
      .get.encode
    // ... VACUUM records its horizon and deletes what the overwrite removed ...
    val deleted = spark.sql(s"TXCOMMIT VACUUM '$url' RETAIN 0 HOURS FORCE").collect()
    assert(deleted.count(_.getAs[String]("path").contains("part-")) == 4, deleted.mkString("\n"))
    // ... and the read lists the data.
    val outcome = scala.util.Try(spark.read.schema("id LONG").option(TxCommitConf.AsOfOption, first)
        .option(TxCommitConf.SnapshotOption, snapshot).parquet(url).collect().length)
    assert(outcome.isFailure, s"the read showed ${outcome.getOrElse(0)} of the snapshot's 40 rows, and no error")
    assert(outcome.failed.get.getMessage.contains("VACUUM"), outcome.failed.get.getMessage)
    // A read that begins now is refused the same way.
    val now = intercept[Exception](spark.read.option(TxCommitConf.AsOfOption, first).parquet(url).collect())
    assert(now.getMessage.contains("VACUUM"), now.getMessage)
  }
}
