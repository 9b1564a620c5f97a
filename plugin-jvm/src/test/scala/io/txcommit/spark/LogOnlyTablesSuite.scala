package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.txcommit.LogFileIndex
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.MaintenanceException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointCodec, ReadMode}
import io.txcommit.testing.{ListingCountingFileSystem, PluginSessions}

/**
 * Log-only tables (docs/protocol.md, I32) through Spark: a table txcommit creates is one, its
 * reads never list its data (partitions pruned in memory), a file written without txcommit into
 * it is invisible to every reader until a command commits it; a table txcommit adopts is read by
 * listing; `TXCOMMIT ALTER ... SET ('reads' = ...)` moves a table from one to the other with no
 * row vanishing or showing twice.
 */
class LogOnlyTablesSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.immediate("txcommit-log-only", countListings = true).getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newDir(): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-log-only").resolve("t")
    (dir, dir.toUri.toString.stripSuffix("/"))
  }

  /** 100 rows over k = 0..3, written by txcommit into a new directory. */
  private def created(): (JPath, String) = {
    val (dir, url) = newDir()
    spark.range(100).selectExpr("id", "cast(id % 4 as int) as k").write.partitionBy("k").parquet(url)
    (dir, url)
  }

  /** A Parquet file of `n` rows (id, no k) written by Spark's own commit protocol, copied to `at`. */
  private def plainFile(at: JPath, n: Int, from: Long = 1000L): Unit = {
    val (tmp, tmpUrl) = newDir()
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try spark.range(from, from + n).coalesce(1).write.parquet(tmpUrl)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
    val written = Files.list(tmp).iterator().asScala.find(_.getFileName.toString.endsWith(".parquet")).get
    Files.createDirectories(at.getParent)
    Files.copy(written, at)
  }

  private def modeOf(dir: JPath): Option[String] = {
    val cps = Files.list(dir.resolve("_txcommit/checkpoints")).iterator().asScala.toSeq.sortBy(_.getFileName.toString)
    cps.lastOption.map { p =>
      val n = p.getFileName.toString.stripSuffix(".json").toLong
      CheckpointCodec.decode(Files.readAllBytes(p), p.toString, n).reads.getOrElse(ReadMode.Listing)
    }
  }

  private def alter(url: String, mode: String): Seq[(String, String)] =
    spark.sql(s"TXCOMMIT ALTER '$url' SET ('reads' = '$mode')").collect().toSeq.map(r =>
      r.getString(0) -> r.getString(1))

  private def dataListings(url: String)(read: => Any): Int = {
    val p = new Path(url)
    ListingCountingFileSystem.watch(p)
    read
    ListingCountingFileSystem.dataListings(p)
  }

  private def filesRead(df: DataFrame): Long = {
    df.collect()
    df.queryExecution.executedPlan.collect { case s: FileSourceScanExec => s.metrics("numFiles").value }.sum
  }

  test("a table txcommit creates is log-only: every read plans from its log, lists no data, prunes in memory") {
    val (dir, url) = created()
    assert(modeOf(dir).contains(ReadMode.Log), "checkpoint 1, written before the first commit, says log")
    assert(dataListings(url)(assert(spark.read.parquet(url).count() == 100)) == 0, "a DataFrame read")
    assert(dataListings(url)(assert(spark.sql(s"SELECT * FROM parquet.`$url`").count() == 100)) == 0, "SQL on a file")
    assert(dataListings(url)(assert(spark.read.parquet(s"$url/k=1").count() == 25)) == 0, "a partition directory")
    // A JVM that has not met the table lists the root once to find its log, and nothing below.
    io.txcommit.read.TableLogReader.Roots.clear()
    val p = new Path(url)
    ListingCountingFileSystem.watch(p)
    assert(spark.read.parquet(url).count() == 100)
    assert(
      ListingCountingFileSystem.listingsByDir(p).keySet.filterNot(_.contains("_txcommit")) ==
        Set(p.toUri.getPath), "a table this JVM does not know yet: one listing of its root")
    assert(dataListings(url)(assert(spark.read.parquet(url).count() == 100)) == 0, "then none")
    val all = spark.read.parquet(url)
    val pruned = spark.read.parquet(url).where("k = 1")
    assert(dataListings(url)(assert(filesRead(pruned) * 4 == filesRead(all))) == 0,
      "a filter on the partition column reads only that partition's files, and lists nothing")
    spark.sql(s"CREATE TABLE log_only_tracked (id BIGINT, k INT) USING parquet PARTITIONED BY (k) LOCATION '$url'")
    spark.sql(s"CREATE TABLE log_only_flat (id BIGINT) USING parquet LOCATION '$url/k=2'")
    try {
      spark.sql("MSCK REPAIR TABLE log_only_tracked")
      assert(dataListings(url) {
          assert(spark.table("log_only_tracked").count() == 100)
          assert(spark.sql("SELECT * FROM log_only_tracked WHERE k = 3").count() == 25)
          assert(spark.table("log_only_flat").count() == 25)
        } == 0, "catalog tables")
    } finally {
      spark.sql("DROP TABLE log_only_tracked")
      spark.sql("DROP TABLE log_only_flat")
    }
  }

  test("plans of an unchanged log-only table share one file list; a commit, or the table written anew, gets its own") {
    val (dir, url) = created()
    def indexed(path: String = url) = spark.read.parquet(path).queryExecution.analyzed.collectFirst {
      case l: LogicalRelation => l.relation
    }.collect { case r: HadoopFsRelation => r.location }.collect { case i: LogFileIndex => i }.get
    val (a, b) = (indexed(), indexed())
    assert(a.files.nonEmpty && (a.files eq b.files) && a.leafFiles.eq(b.leafFiles) && a == b,
      "two reads of the same records: one list, its maps built once")
    assert(indexed(s"$url/k=1").files.size * 4 == a.files.size, "a partition directory: its own list")
    // The schema inferred once for a list is one read's confs and options: others infer their own.
    val (_, two) = newDir()
    spark.range(3).selectExpr("id", "1 as k").write.partitionBy("k").parquet(two)
    spark.range(3).selectExpr("id", "cast(id as string) as b", "2 as k").write.option("mergeSchema", "true")
      .mode("append").partitionBy("k")
      .parquet(two)
    val merged = Seq("false", "true", "false").map { merge =>
      spark.conf.set("spark.sql.parquet.mergeSchema", merge)
      try spark.read.parquet(two).schema.fieldNames.toSet("b")
      finally spark.conf.unset("spark.sql.parquet.mergeSchema")
    }
    assert(merged == Seq(false, true, false), "a session's mergeSchema off, on, off")
    assert(spark.read.option("mergeSchema", "true").parquet(two).schema.fieldNames.toSet("b"), "as an option")
    spark.range(100, 104).selectExpr("id", "cast(id % 4 as int) as k").write.mode("append").partitionBy("k")
      .parquet(url)
    val c = indexed()
    assert(c.files.size == a.files.size + 4 && c != a, "a commit: the new snapshot's list")
    assert(spark.read.parquet(url).count() == 104)
    // The table deleted and written again (its log too) reaches the same record numbers.
    org.apache.commons.io.FileUtils.deleteDirectory(dir.toFile)
    spark.range(7).selectExpr("id", "cast(id % 4 as int) as k").write.partitionBy("k").parquet(url)
    val d = indexed()
    assert(d.files.map(_.getPath).intersect(c.files.map(_.getPath)).isEmpty, "a table written anew: its own files")
    assert(spark.read.parquet(url).count() == 7)
  }

  test("a log-only read infers the data schema Spark's listing infers: the first file in path order, or all merged") {
    // Two tables: the file with column b first in path order (k=1), or last (k=2).
    val schemas = for (first <- Seq(1, 2)) yield {
      val (_, url) = newDir()
      spark.range(3).selectExpr("id", s"${3 - first} as k").write.partitionBy("k").parquet(url)
      spark.range(3).selectExpr("id", "cast(id as string) as b", s"$first as k").write.option("mergeSchema", "true")
        .mode("append").partitionBy("k").parquet(url)
      def read(filter: Boolean, merge: Boolean) = {
        spark.conf.set(TxCommitConf.ReadFilter, filter.toString)
        try spark.read.option("mergeSchema", merge.toString).parquet(url).schema.fieldNames.toSeq
        finally spark.conf.unset(TxCommitConf.ReadFilter)
      }
      for (merge <- Seq(false, true))
        assert(read(filter = true, merge) == read(filter = false, merge), s"$first $merge")
      read(filter = true, merge = false)
    }
    assert(schemas == Seq(Seq("id", "b", "k"), Seq("id", "k")), "the footer of the first file in path order")
  }

  test("a file written without txcommit into a log-only table is invisible to every reader until the log names it") {
    val (dir, url) = created()
    plainFile(dir.resolve("k=1/written-without-txcommit.parquet"), 5)
    assert(spark.read.parquet(url).count() == 100, "log first, from the log")
    spark.conf.set(TxCommitConf.LogFirst, "false")
    try assert(spark.read.parquet(url).count() == 100, "by the read filter's clock cut")
    finally spark.conf.unset(TxCommitConf.LogFirst)
    assert(spark.read.parquet(s"$url/k=*").count() == 100, "through a glob")
    assert(spark.sql(s"TXCOMMIT FILES '$url'").collect().forall(!_.getString(0).contains("written-without")))
  }

  test("ALTER moves a table between log-only and listing, no row vanishing or showing twice") {
    val (dir, url) = created()
    plainFile(dir.resolve("k=1/written-without-txcommit.parquet"), 5)
    assert(alter(url, "listing").contains("reads" -> "listing") && modeOf(dir).contains(ReadMode.Listing))
    assert(spark.read.parquet(url).count() == 105, "listing: the file written without txcommit shows")
    assert(dataListings(url)(spark.read.parquet(url).count()) > 0, "and the table is listed")
    val history = spark.sql(s"TXCOMMIT HISTORY '$url'").count()
    assert(alter(url, "log").contains("reads" -> "log") && modeOf(dir).contains(ReadMode.Log))
    assert(spark.sql(s"TXCOMMIT HISTORY '$url'").count() == history + 1, "one append commits the file it adopts")
    assert(dataListings(url)(assert(spark.read.parquet(url).count() == 105)) == 0,
      "log-only again: the adopted file shows, from the log")
    spark.conf.set(TxCommitConf.LogFirst, "false")
    try assert(spark.read.parquet(url).count() == 105, "the read filter agrees")
    finally spark.conf.unset(TxCommitConf.LogFirst)
    plainFile(dir.resolve("k=2/written-later.parquet"), 7, from = 2000L)
    assert(spark.read.parquet(url).count() == 105, "a file written after the switch stays hidden")
    assert(alter(url, "log").contains("reads" -> "log"), "a switch to the mode in force changes nothing")
    // An overwrite of a partition hides its adopted file like any other.
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try spark.range(3).selectExpr("id", "cast(1 as int) as k").write.mode("overwrite").partitionBy("k").parquet(url)
    finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert(spark.read.parquet(url).count() == 75 + 3)
  }

  test("a first write to a directory holding data adopts it: read by listing, its files visible") {
    val (dir, url) = newDir()
    plainFile(dir.resolve("part-0.parquet"), 5)
    spark.range(10).write.mode("append").parquet(url)
    assert(!Files.exists(dir.resolve("_txcommit/checkpoints")), "no log-only checkpoint")
    assert(spark.read.parquet(url).count() == 15)
    val (dir2, url2) = newDir()
    spark.conf.set(TxCommitConf.NewTableReads, "listing")
    try spark.range(10).write.parquet(url2)
    finally spark.conf.unset(TxCommitConf.NewTableReads)
    assert(!Files.exists(dir2.resolve("_txcommit/checkpoints")), s"${TxCommitConf.NewTableReads}=listing")
  }

  test("switching to log is refused, changing nothing, where a log could not name a visible file") {
    val (dir, url) = newDir()
    plainFile(dir.resolve("part-0.parquet"), 5)
    spark.range(10).write.mode("append").parquet(url)
    // An overwrite removes part-0.parquet; a plain writer writes that name again.
    spark.range(20, 23).write.mode("overwrite").parquet(url)
    Files.delete(dir.resolve("part-0.parquet")) // as VACUUM does once the removal is past its horizon
    plainFile(dir.resolve("part-0.parquet"), 4, from = 3000L)
    assert(spark.read.parquet(url).count() == 3 + 4)
    val e = intercept[MaintenanceException](alter(url, "log"))
    assert(e.getMessage.contains("part-0.parquet") && e.getMessage.contains("rename") &&
      e.getMessage.contains("Nothing was changed"))
    assert(spark.read.parquet(url).count() == 3 + 4 && !Files.exists(dir.resolve("_txcommit/checkpoints")))
  }
}
