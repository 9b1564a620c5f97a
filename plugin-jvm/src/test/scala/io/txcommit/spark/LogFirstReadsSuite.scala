package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}

import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.{FastClock, PluginSessions}

import io.txcommit.conf.TxCommitConf

/**
 * The SQL extension's log-first reads through Spark itself: DataFrame reads and SQL on files
 * get the snapshot before Spark lists (and with listing on executors), a real table whose
 * name looks like SQL on a file is left alone, and a writer clock an hour ahead hides nothing.
 */
class LogFirstReadsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-log-first")
    .config(TxCommitConf.MaxClockSkewMs, "0")
    // No checkpoints: one published now would carry the overwrite past the clock cut.
    .config(TxCommitConf.CheckpointInterval, "0")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newTable(): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-log-first").resolve("t")
    (dir, dir.toUri.toString.stripSuffix("/"))
  }

  /** 100 rows over k = 0..3, then a whole-table overwrite of 7 rows by a driver an hour ahead. */
  private def overwrittenAheadOfTime(): (JPath, String) = {
    val (dir, url) = newTable()
    spark.range(100).selectExpr("id", "cast(id % 4 as int) as k").write.partitionBy("k").parquet(url)
    spark.range(7).selectExpr("id", "cast(id % 4 as int) as k").write.mode("overwrite").partitionBy("k").parquet(url)
    FastClock.dateReplaceAnHourAhead(dir)
    (dir, url)
  }

  /** 10 rows written by Spark's own commit protocol: no `_txcommit/` anywhere. */
  private def writeWithoutTxCommit(url: String): Unit = {
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try spark.range(10).write.parquet(url)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
  }

  private def snapshotOptionOf(df: org.apache.spark.sql.DataFrame): Option[String] =
    df.queryExecution.analyzed.collectFirst { case l: LogicalRelation => l.relation }.collect {
      case r: HadoopFsRelation => r.options.get(TxCommitConf.SnapshotOption)
    }.flatten

  test("a DataFrame read sees an overwrite committed by a driver whose clock is an hour ahead") {
    val (_, url) = overwrittenAheadOfTime()
    val df = spark.read.parquet(url)
    assert(df.count() == 7)
    assert(snapshotOptionOf(df).exists(_.nonEmpty), "the read carries its log-first snapshot")
  }

  test("SQL on a file does too, and so does a read listed on executors") {
    val (_, url) = overwrittenAheadOfTime()
    assert(spark.sql(s"SELECT * FROM parquet.`$url`").count() == 7)
    assert(spark.sql(s"SELECT * FROM parquet.`$url/k=1`").count() == 2)
    val key = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    spark.conf.set(key, "1")
    try assert(spark.read.parquet(s"$url/k=1", s"$url/k=2", s"$url/k=3").count() == 5)
    finally spark.conf.unset(key)
  }

  test("an RDD read through a Hadoop input format lists the log first: a writer an hour ahead hides nothing") {
    val (dir, url) = newTable()
    spark.range(100).selectExpr("cast(id as string)").write.text(url)
    spark.range(7).selectExpr("cast(id as string)").write.mode("overwrite").text(url)
    FastClock.dateReplaceAnHourAhead(dir)
    val sc = spark.sparkContext
    assert(sc.textFile(url).count() == 7, "the old API (HadoopRDD) reads the overwrite at once")
    assert(sc.newAPIHadoopFile(url, classOf[org.apache.hadoop.mapreduce.lib.input.TextInputFormat],
        classOf[org.apache.hadoop.io.LongWritable], classOf[org.apache.hadoop.io.Text]).count() == 7,
      "so does the new API (NewHadoopRDD)")
    // A commit after the input format listed is not in that listing's snapshot, and is in the next.
    val rdd = sc.textFile(url)
    assert(rdd.partitions.nonEmpty && rdd.count() == 7)
    spark.range(3).selectExpr("cast(id as string)").write.mode("append").text(url)
    assert(rdd.count() == 7 && sc.textFile(url).count() == 10)
  }

  test("a read of a directory without a log carries an empty snapshot and reads every file") {
    val (dir, url) = newTable()
    writeWithoutTxCommit(url)
    assert(!Files.exists(dir.resolve("_txcommit")))
    val df = spark.read.parquet(url)
    assert(df.count() == 10 && snapshotOptionOf(df).contains(""))
  }

  test("a real table named like SQL on a file is not taken for one") {
    spark.sql("CREATE DATABASE IF NOT EXISTS parquet")
    try {
      spark.sql("CREATE TABLE parquet.x (id BIGINT) USING parquet")
      spark.sql("INSERT INTO parquet.x VALUES (1), (2)")
      assert(spark.sql("SELECT * FROM parquet.x").collect().map(_.getLong(0)).toSet == Set(1L, 2L))
    } finally spark.sql("DROP DATABASE parquet CASCADE")
  }

  test("reads no log-first snapshot reaches take another application's commit at the store's time") {
    // A writer driver's clock an hour ahead delays nothing where the read has no snapshot: with
    // log-first reads off, through a glob, and in the streaming file source's listing.
    val (_, url) = overwrittenAheadOfTime()
    spark.conf.set(TxCommitConf.LogFirst, "false")
    try {
      val df = spark.read.parquet(url)
      assert(snapshotOptionOf(df).isEmpty)
      assert(df.count() == 7, "log-first reads off")
    } finally spark.conf.unset(TxCommitConf.LogFirst)
    assert(spark.read.parquet(s"$url/k=*").count() == 7, "a glob")
    val q = spark.readStream.schema("id BIGINT, k INT").parquet(url).writeStream.format("memory")
      .queryName("overwritten_ahead").trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start()
    try {
      q.awaitTermination()
      assert(spark.table("overwritten_ahead").count() == 7, "the streaming file source")
    } finally q.stop()
  }

  test("a read's snapshot is fixed when it is analysed: a later commit is not in it") {
    val (_, url) = newTable()
    spark.range(10).selectExpr("id", "cast(id % 2 as int) as k").write.partitionBy("k").parquet(url)
    val df = spark.read.parquet(url)
    spark.range(10).selectExpr("id", "cast(id % 2 as int) as k").write.mode("append").partitionBy("k").parquet(url)
    assert(df.count() == 10)
    assert(spark.read.parquet(url).count() == 20)
  }

  /** A catalog table over an overwritten-ahead-of-time table; partitions in the catalog if `tracked`. */
  private def catalogTable(name: String, partitioned: Boolean, tracked: Boolean,
      over: Option[String] = None): String = {
    val url = over.getOrElse(overwrittenAheadOfTime()._2)
    spark.sql(s"DROP TABLE IF EXISTS $name")
    val schema = "(id BIGINT, k INT) USING parquet" + (if (partitioned) " PARTITIONED BY (k)" else "")
    val manage = "spark.sql.hive.manageFilesourcePartitions"
    spark.conf.set(manage, tracked.toString)
    try spark.sql(s"CREATE TABLE $name $schema LOCATION '${if (partitioned) url else url + "/k=1"}'")
    finally spark.conf.unset(manage)
    if (tracked) spark.sql(s"MSCK REPAIR TABLE $name")
    url
  }

  private def snapshotIndexOf(df: org.apache.spark.sql.DataFrame): Boolean =
    df.queryExecution.optimizedPlan.collectFirst { case l: LogicalRelation => l.relation }.exists {
      case r: HadoopFsRelation => r.location.isInstanceOf[org.apache.spark.sql.txcommit.LogFileIndex]
      case _ => false
    }

  test("a catalog table whose partitions the catalog tracks is read log-first, pruned partitions too") {
    catalogTable("tracked", partitioned = true, tracked = true)
    try {
      val df = spark.table("tracked")
      assert(df.count() == 7, "the overwrite dated an hour ahead is read at once")
      assert(snapshotIndexOf(df), "the catalog table is planned from its snapshot, not listed by Spark")
      assert(spark.sql("SELECT * FROM default.tracked WHERE k = 1").count() == 2)
      assert(spark.sql("SELECT * FROM spark_catalog.default.tracked WHERE k IN (2, 3)").count() == 3)
    } finally spark.sql("DROP TABLE tracked")
  }

  test("a catalog table without tracked partitions, and one not partitioned, are read log-first") {
    catalogTable("untracked", partitioned = true, tracked = false)
    catalogTable("flat", partitioned = false, tracked = false)
    try {
      assert(spark.table("untracked").count() == 7)
      assert(snapshotOptionOf(spark.table("untracked")).exists(_.nonEmpty))
      // k=1 of the table: 25 rows before the overwrite, 2 after it.
      assert(spark.sql("SELECT * FROM flat").count() == 2)
    } finally {
      spark.sql("DROP TABLE untracked")
      spark.sql("DROP TABLE flat")
    }
  }

  test("every query of a catalog table reads the log anew: a commit after the first query is in the next") {
    val url = catalogTable("grows", partitioned = true, tracked = true)
    catalogTable("grows_flat", partitioned = false, tracked = false, over = Some(url))
    try {
      assert(spark.table("grows").count() == 7 && spark.table("grows_flat").count() == 2)
      // Spark caches a catalog table's relation and, with it, its listing: without the snapshot
      // these reads would keep showing the first query's files.
      spark.range(4).selectExpr("id", "cast(1 as int) as k").write.mode("append").partitionBy("k").parquet(url)
      assert(spark.table("grows").count() == 11)
      assert(spark.table("grows_flat").count() == 6)
    } finally {
      spark.sql("DROP TABLE grows")
      spark.sql("DROP TABLE grows_flat")
    }
  }

  test("a temporary view and a table that is not a txcommit table read as Spark reads them") {
    val (_, url) = newTable()
    writeWithoutTxCommit(url)
    spark.sql(s"CREATE TABLE plain (id BIGINT) USING parquet LOCATION '$url'")
    try {
      spark.table("plain").createOrReplaceTempView("plain_view")
      assert(spark.table("plain").count() == 10 && spark.table("plain_view").count() == 10)
      assert(snapshotOptionOf(spark.table("plain")).contains(""))
    } finally spark.sql("DROP TABLE plain")
  }
}
