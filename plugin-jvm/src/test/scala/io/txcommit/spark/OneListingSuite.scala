package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.txcommit.LogFileIndex
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.TxnId
import io.txcommit.testing.{ListingCountingFileSystem, PluginSessions}

/**
 * What a read costs in listings where it reads no table, or tables below its root (docs/readers.md):
 * a plain directory is listed as Spark lists it, and nothing more is asked of the store; a
 * directory holding tables is listed once, and that listing gives the data and the tables' logs.
 */
class OneListingSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.immediate("txcommit-one-listing", countListings = true).getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newDir(): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-one-listing").resolve("d")
    (dir, dir.toUri.toString.stripSuffix("/"))
  }

  private def withoutTxCommit[A](f: => A): A = {
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try f
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
  }

  private def indexOf(df: DataFrame): Option[Any] =
    df.queryExecution.analyzed.collectFirst { case l: LogicalRelation => l.relation }.collect {
      case r: HadoopFsRelation => r.location
    }

  /** (data listings, listings of each directory, status requests) of `read` below `url`. */
  private def asked(url: String)(read: => Any): (Int, Map[String, Int], Int) = {
    val p = new Path(url)
    ListingCountingFileSystem.watch(p)
    read
    (ListingCountingFileSystem.dataListings(p), ListingCountingFileSystem.listingsByDir(p),
      ListingCountingFileSystem.statusRequests(p))
  }

  test("a directory holding no log is read from the one listing Spark would make, and nothing more is asked") {
    val (_, url) = newDir()
    withoutTxCommit(spark.range(100).selectExpr("id", "cast(id % 5 as int) as k").write.partitionBy("k").parquet(url))
    val (listings, byDir, status) = asked(url)(assert(spark.read.parquet(url).count() == 100))
    assert(indexOf(spark.read.parquet(url)).exists(_.isInstanceOf[LogFileIndex]))
    spark.conf.set(TxCommitConf.ReadFilter, "false")
    val (plainListings, _, plainStatus) =
      try asked(url)(assert(spark.read.parquet(url).count() == 100))
      finally spark.conf.unset(TxCommitConf.ReadFilter)
    assert(listings <= plainListings && byDir.values.forall(_ == 1), s"listed once: $byDir")
    assert(status <= plainStatus, s"no more status requests than Spark without txcommit: $status vs $plainStatus")
    assert(!byDir.keys.exists(_.contains("_txcommit")), "no log looked for: none is there")
  }

  test("a directory holding tables is listed once: the data and the tables' logs from the same listing") {
    // Tables t=1 (log-only) and t=2 (read by listing) and a plain directory t=3, read as one.
    val (dir, url) = newDir()
    spark.range(40).write.parquet(s"$url/t=1")
    spark.conf.set(TxCommitConf.NewTableReads, "listing")
    try spark.range(100, 110).write.parquet(s"$url/t=2")
    finally spark.conf.unset(TxCommitConf.NewTableReads)
    withoutTxCommit(spark.range(1000, 1005).write.parquet(s"$url/t=3"))
    // A file of a transaction that never committed, in each table.
    for (t <- Seq("t=1", "t=2")) {
      val f = Files.list(dir.resolve(t)).filter(_.getFileName.toString.startsWith("part-")).findFirst().get
      Files.copy(f, dir.resolve(s"$t/part-00000-tid-${TxnId.generate()}-9-c000.snappy.parquet"))
    }
    val (_, byDir, _) = asked(url)(assert(spark.read.parquet(url).count() == 40 + 10 + 5))
    // A read of several tables lists their commits/ and replace/ once more, after every
    // checkpoints/, so that a multi-table transaction is in all of them or in none (I35).
    val relisted = (d: String) => d.endsWith("/_txcommit/commits") || d.endsWith("/_txcommit/replace")
    assert(byDir.forall { case (d, n) => n == 1 || (relisted(d) && n == 2) },
      s"every directory listed once, the tables' commits/ and replace/ twice at most: $byDir")
    assert(byDir.keys.exists(_.endsWith("t=1/_txcommit/commits")), "the tables' logs came with it")
    // A commit after the read was planned is in no part of it.
    val df = spark.read.parquet(url)
    spark.range(7).write.mode("append").parquet(s"$url/t=1")
    assert(df.count() == 55 && spark.read.parquet(url).count() == 62)
  }

  test("a file read directly, a path that is gone and a table whose first write is running read as before") {
    val (dir, url) = newDir()
    withoutTxCommit(spark.range(10).coalesce(1).write.parquet(s"$url/plain"))
    val file = Files.list(dir.resolve("plain")).filter(_.getFileName.toString.endsWith(".parquet")).findFirst().get
    val df = spark.read.parquet(file.toUri.toString)
    assert(df.count() == 10 && indexOf(df).exists(_.isInstanceOf[LogFileIndex]), "a plain file: planned")
    val gone = intercept[org.apache.spark.sql.AnalysisException](spark.read.parquet(s"$url/gone").schema)
    assert(gone.getMessage.contains("PATH_NOT_FOUND"), "Spark's own error")
    // t=1: a table whose first write has a pending marker and data but no commit yet.
    spark.range(5).write.parquet(s"$url/t=1")
    val t1 = dir.resolve("t=1")
    val part = Files.list(t1).filter(_.getFileName.toString.startsWith("part-")).findFirst().get
    val running = io.txcommit.log.TxnId.generate()
    Files.createDirectories(dir.resolve("t=2/_txcommit/pending"))
    Files.write(dir.resolve(s"t=2/_txcommit/pending/$running.json"), "{}".getBytes("UTF-8"))
    Files.copy(part, dir.resolve(s"t=2/part-00000-tid-$running-1-c000.snappy.parquet"))
    withoutTxCommit(spark.range(100, 103).coalesce(1).write.mode("append").parquet(s"$url/t=3"))
    Files.move(dir.resolve("plain"), dir.resolve("t=4"))
    assert(spark.read.parquet(url).count() == 5 + 3 + 10, "the running write's file is not shown")
    assert(spark.read.schema("id BIGINT").parquet(s"$url/t=2/part-00000-tid-$running-1-c000.snappy.parquet")
        .count() == 0, "nor when read directly")
  }
}
