package io.txcommit.spark

import java.nio.file.Files

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.{FastClock, PluginSessions}

/**
 * A Hive SerDe table over a txcommit table (Spark's Hive support reads it through Hadoop's
 * input formats, with no SQL-extension hook) lists the log first too: the read filter lists the
 * logs of the input format's directories before it lists them, so a writer clock an hour ahead
 * hides nothing. Only the 4.3 build compiles this suite: the Maven lines' test classpath has no
 * Spark Hive support, and their Hive reads take the same input-format path.
 */
class HiveSerDeReadsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val home = Files.createTempDirectory("txcommit-hive-serde")
  private lazy val spark = PluginSessions.hive("txcommit-hive-serde", home)

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  test("a Hive text table over a table overwritten by a driver an hour ahead reads the overwrite at once") {
    val dir = home.resolve("t")
    val url = dir.toUri.toString.stripSuffix("/")
    spark.range(100).selectExpr("cast(id as string)").write.text(url)
    spark.range(7).selectExpr("cast(id as string)").write.mode("overwrite").text(url)
    FastClock.dateReplaceAnHourAhead(dir)
    spark.sql(s"CREATE TABLE serde (s STRING) STORED AS TEXTFILE LOCATION '$url'")
    try {
      val plan = spark.sql("SELECT * FROM serde").queryExecution.executedPlan.toString
      assert(plan.contains("Scan hive"), s"read as a Hive SerDe table: $plan")
      assert(spark.sql("SELECT count(*) FROM serde").head().getLong(0) == 7L)
      spark.range(3).selectExpr("cast(id as string)").write.mode("append").text(url)
      assert(spark.sql("SELECT count(*) FROM serde").head().getLong(0) == 10L, "and a later append at once")
    } finally spark.sql("DROP TABLE serde")
  }
}
