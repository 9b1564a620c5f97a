package io.txcommit.spark

import java.nio.file.Files

import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.testing.{FastClock, PluginSessions}

/**
 * A Hive-enabled session on Spark 4.0.0-4.0.2 (this line's build): its Hive analyzer drops the
 * SQL extension's log-first rule, so a data-source read is judged by the read filter's clock
 * cut. That cut dates another application's commit by the store's clock: an overwrite by a
 * driver whose clock runs an hour ahead is read at once, not in an hour.
 */
class HiveSessionClockCutSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val home = Files.createTempDirectory("txcommit-hive-session")
  private lazy val spark = PluginSessions.hive("txcommit-hive-session", home)

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  test("a path read in a Hive session has no log-first snapshot and reads an overwrite dated an hour ahead at once") {
    val dir = home.resolve("t")
    val url = dir.toUri.toString.stripSuffix("/")
    spark.range(100).selectExpr("id", "cast(id % 4 as int) as k").write.partitionBy("k").parquet(url)
    spark.range(7).selectExpr("id", "cast(id % 4 as int) as k").write.mode("overwrite").partitionBy("k").parquet(url)
    FastClock.dateReplaceAnHourAhead(dir)
    val df = spark.read.parquet(url)
    val snapshot = df.queryExecution.analyzed.collectFirst { case l: LogicalRelation => l.relation }.collect {
      case r: HadoopFsRelation => r.options.get(TxCommitConf.SnapshotOption)
    }.flatten
    assert(snapshot.isEmpty, "this Hive session's analyzer ran no log-first rule")
    assert(df.count() == 7L)
  }
}
