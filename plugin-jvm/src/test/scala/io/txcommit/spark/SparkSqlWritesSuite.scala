package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}

import org.apache.spark.sql.{AnalysisException, Row, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.UnsupportedWriteException
import io.txcommit.conf.TxCommitConf
import io.txcommit.testing.PluginSessions

/**
 * What Apache Spark's own SQL write suites (.ci/spark-suites) expect of a classic session with
 * txcommit on, as a user writes it through the catalog: bucketed overwrites, column DEFAULTs,
 * ALTER TABLE ADD COLUMNS, custom partition locations, overwriting a path that is a plain file,
 * and Spark's own argument errors.
 */
class SparkSqlWritesSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val home: JPath = Files.createTempDirectory("txcommit-spark-sql")
  private lazy val spark: SparkSession = PluginSessions.builder("txcommit-spark-sql")
    .config(TxCommitConf.MaxClockSkewMs, "0")
    .config("spark.sql.warehouse.dir", home.resolve("warehouse").toString)
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def rows(sql: String): Set[Row] = spark.sql(sql).collect().toSet

  private def tableDir(name: String): JPath = home.resolve("warehouse").resolve(name)

  private def dataFiles(dir: JPath): Seq[String] = {
    val all = Files.walk(dir)
    try scala.jdk.CollectionConverters.IteratorHasAsScala(all.iterator()).asScala.toSeq
        .filter(p =>
          Files.isRegularFile(p) && !dir.relativize(p).toString.startsWith("_") &&
            !p.getFileName.toString.startsWith(".") && !p.getFileName.toString.startsWith("_"))
        .map(p => dir.relativize(p).toString)
    finally all.close()
  }

  test("INSERT OVERWRITE into a bucketed table keeps the rows it wrote, and a second one replaces them") {
    spark.sql("CREATE TABLE bucketed (i BIGINT, j BIGINT) USING parquet CLUSTERED BY (i) INTO 4 BUCKETS")
    spark.sql("INSERT OVERWRITE TABLE bucketed SELECT id, id * 2 FROM range(200)")
    assert(spark.table("bucketed").count() == 200)
    // Spark names bucket files part-…-tid-<txn>-<attempt>_<bucket>.c000.snappy.parquet
    assert(dataFiles(tableDir("bucketed")).exists(_.matches(".*-tid-[0-9a-z]{16}-[0-9]+_0000[0-3]\\..*")),
      dataFiles(tableDir("bucketed")))
    spark.sql("INSERT OVERWRITE TABLE bucketed SELECT id, id * 3 FROM range(50)")
    assert(rows("SELECT sum(j), count(*) FROM bucketed") == Set(Row((0L until 50L).map(_ * 3).sum, 50L)))
    spark.sql("INSERT INTO bucketed SELECT id, 0 FROM range(10)")
    assert(spark.table("bucketed").count() == 60)
  }

  test("a table with column DEFAULTs takes a second INSERT") {
    spark.sql("CREATE TABLE defaults (i INT, s STRING DEFAULT 'abc', n BIGINT DEFAULT 42 + 1) USING parquet")
    spark.sql("INSERT INTO defaults VALUES (1, DEFAULT, DEFAULT)")
    spark.sql("INSERT INTO defaults (i, s) VALUES (2, 'x')")
    spark.sql("INSERT INTO defaults VALUES (3, 'y', 7)")
    assert(rows("SELECT * FROM defaults") == Set(Row(1, "abc", 43L), Row(2, "x", 43L), Row(3, "y", 7L)))
  }

  test("INSERT after ALTER TABLE ADD COLUMNS writes the new column") {
    spark.sql("CREATE TABLE altered (i INT) USING parquet")
    spark.sql("INSERT INTO altered VALUES (1)")
    spark.sql("ALTER TABLE altered ADD COLUMNS (s STRING)")
    spark.sql("INSERT INTO altered VALUES (2, 'x')")
    assert(rows("SELECT * FROM altered") == Set(Row(1, null), Row(2, "x")))
    // The catalog's schema is no license for a DataFrame write of a column it lacks.
    val e = intercept[Exception] {
      spark.range(1).selectExpr("cast(id as int) as i", "'y' as s", "1 as extra").write.mode("append")
        .parquet(tableDir("altered").toUri.toString)
    }
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(_.getMessage.contains("extra")), e)
  }

  test("a write into a custom partition location is refused before any Spark job runs, and nothing is written") {
    val elsewhere = home.resolve("elsewhere")
    spark.sql("CREATE TABLE located (i INT, k INT) USING parquet PARTITIONED BY (k)")
    spark.sql("INSERT INTO located VALUES (0, 0)")
    spark.sql(s"ALTER TABLE located ADD PARTITION (k=1) LOCATION '${elsewhere.toUri}'")
    val sc = spark.sparkContext
    // Job starts reach the status tracker through the listener bus, in order: once a marker job
    // run after the refused write shows, any job the write started would show too.
    def jobsOf(group: String): Int = sc.statusTracker.getJobIdsForGroup(group).length
    for ((insert, n) <- Seq(
        "INSERT INTO located PARTITION (k=1) SELECT 1", // static, into the custom location
        "INSERT OVERWRITE located PARTITION (k=1) SELECT 1",
        "INSERT INTO located SELECT 1, 1", // dynamic, landing in it
        "INSERT OVERWRITE located SELECT 1, 1" // dynamic partition overwrite
      ).zipWithIndex) {
      spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
      sc.setJobGroup(s"refused-$n", insert)
      val e =
        try intercept[Exception](spark.sql(insert))
        finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
      sc.setJobGroup(s"marker-$n", "marker")
      spark.range(1).count()
      sc.clearJobGroup()
      val deadline = System.nanoTime() + 30L * 1000 * 1000 * 1000
      while (jobsOf(s"marker-$n") == 0 && System.nanoTime() < deadline) Thread.sleep(10)
      assert(jobsOf(s"marker-$n") > 0)
      assert(jobsOf(s"refused-$n") == 0, s"$insert started a Spark job before it was refused")
      assert(e.isInstanceOf[UnsupportedWriteException], s"$insert: $e")
      assert(e.getMessage.contains("custom partition location") && e.getMessage.contains("elsewhere"), e.getMessage)
      assert(!Files.exists(elsewhere) || dataFiles(elsewhere).isEmpty, insert)
    }
    assert(rows("SELECT * FROM located") == Set(Row(0, 0)))
    // A write into the table's own partitions is a txcommit write as usual.
    spark.sql("INSERT INTO located PARTITION (k=2) SELECT 2")
    assert(rows("SELECT * FROM located") == Set(Row(0, 0), Row(2, 2)))
  }

  test("a partition located elsewhere inside the table directory is written, overwritten and read like any other") {
    spark.sql("CREATE TABLE inside (i INT, k INT) USING parquet PARTITIONED BY (k)")
    spark.sql("INSERT INTO inside VALUES (0, 0)")
    val moved = tableDir("inside").resolve("moved-k1")
    spark.sql(s"ALTER TABLE inside ADD PARTITION (k=1) LOCATION '${moved.toUri}'")
    spark.sql("INSERT INTO inside PARTITION (k=1) SELECT 1")
    spark.sql("INSERT INTO inside SELECT 2, 1")
    assert(rows("SELECT * FROM inside") == Set(Row(0, 0), Row(1, 1), Row(2, 1)))
    assert(dataFiles(moved).size == 2, dataFiles(moved))
    spark.sql("INSERT OVERWRITE inside PARTITION (k=1) SELECT 3")
    assert(rows("SELECT * FROM inside") == Set(Row(0, 0), Row(3, 1)))
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try spark.sql("INSERT OVERWRITE inside SELECT 4, 1")
    finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert(rows("SELECT * FROM inside") == Set(Row(0, 0), Row(4, 1)))
  }

  test("DROP TABLE right after a write waits for the write's row count, so the name can be created again") {
    // Holds Spark's listener queue at the write's job end: the count (heard at the write's end,
    // after it returned) stays pending until released.
    val release = new java.util.concurrent.CountDownLatch(1)
    val holding = new java.util.concurrent.atomic.AtomicBoolean(false)
    val stall = new org.apache.spark.scheduler.SparkListener {
      override def onJobEnd(jobEnd: org.apache.spark.scheduler.SparkListenerJobEnd): Unit =
        if (holding.getAndSet(false)) release.await(60, java.util.concurrent.TimeUnit.SECONDS)
    }
    spark.sql("CREATE TABLE dropped (i INT) USING parquet")
    spark.sparkContext.addSparkListener(stall)
    @volatile var failure: Option[Throwable] = None
    val drop = new Thread(() =>
      try spark.sql("DROP TABLE dropped")
      catch { case e: Throwable => failure = Some(e) })
    try {
      holding.set(true)
      spark.sql("INSERT INTO dropped VALUES (1)")
      drop.start()
      drop.join(1000)
      assert(drop.isAlive, "DROP TABLE went ahead while the write's row count was pending")
      assert(Files.exists(tableDir("dropped")))
    } finally {
      release.countDown()
      drop.join(30000)
      spark.sparkContext.removeSparkListener(stall)
    }
    assert(failure.isEmpty, failure)
    assert(!Files.exists(tableDir("dropped")))
    spark.sql("CREATE TABLE dropped (i INT) USING parquet")
    spark.sql("INSERT INTO dropped VALUES (2)")
    assert(rows("SELECT * FROM dropped") == Set(Row(2)))
  }

  test("overwriting a path that is a plain file replaces it with the table, as Spark's own protocol does") {
    val path = home.resolve("plain-file")
    Files.write(path, "not a table".getBytes("UTF-8"))
    spark.range(5).write.mode("overwrite").parquet(path.toUri.toString)
    assert(Files.isDirectory(path.resolve("_txcommit")))
    assert(spark.read.parquet(path.toUri.toString).count() == 5)
  }

  test("appending to a path that is a plain file fails at job setup naming the file") {
    val path = home.resolve("plain-file-append")
    Files.write(path, "keep me".getBytes("UTF-8"))
    val e = intercept[Exception](spark.range(5).write.mode("append").parquet(path.toUri.toString))
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).toSeq
    assert(messages.exists(m => m.contains("plain-file-append") && m.contains("is a file")), messages)
    assert(new String(Files.readAllBytes(path), "UTF-8") == "keep me")
  }

  test("Spark validates a read's arguments before txcommit's read rule looks at them") {
    val dir = home.resolve("read-args").toUri.toString
    spark.range(3).write.parquet(dir)
    val e = intercept[AnalysisException](spark.read.option("path", dir).parquet(""))
    assert(e.getMessage.contains("path"), e.getMessage)
    val both = intercept[AnalysisException](spark.read.option("path", dir).parquet(dir))
    assert(both.getMessage.contains("path"), both.getMessage)
  }
}
