package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}
import java.time.Instant

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.TimeTravelException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.RecordCodec
import io.txcommit.testing.PluginSessions

/**
 * Reads of a past snapshot (docs/protocol.md, I30) through Spark: `txcommit.asOf` with a
 * transaction id or a time, SQL's `VERSION AS OF` / `TIMESTAMP AS OF` on files, the times the
 * STORE gave the commits (a writer's clock an hour ahead changes nothing), clear errors for what
 * names no snapshot, and a snapshot VACUUM has taken files of refused whole.
 */
class TimeTravelSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-time-travel")
    .config(TxCommitConf.CheckpointInterval, "0")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  /** A table after a write (4 rows), an append (3 rows) and an overwrite of partition k=0 (1 row). */
  private final class Table {
    val dir: JPath = Files.createTempDirectory("txcommit-time-travel").resolve("t")
    val url: String = dir.toUri.toString.stripSuffix("/")
    spark.createDataFrame(Seq((0L, 0), (1L, 1), (2L, 0), (3L, 1))).toDF("id", "k").write.partitionBy("k").parquet(url)
    spark.createDataFrame(Seq((10L, 0), (11L, 1), (12L, 0))).toDF("id", "k").write.mode("append").partitionBy("k")
      .parquet(url)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try spark.createDataFrame(Seq((20L, 0))).toDF("id", "k").write.mode("overwrite").partitionBy("k").parquet(url)
    finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")

    /** HISTORY's committed rows: (version, txn, storeTime), in version order. */
    def versions: Seq[(Long, String, Long)] = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().toSeq
      .filter(_.getAs[String]("state") == "committed")
      .map(r => (r.getAs[Long]("version"), r.getAs[String]("txn"), r.getAs[Long]("storeTime")))

    def ids(df: DataFrame): Seq[Long] = df.collect().toSeq.map(_.getAs[Long]("id")).sorted
    def asOf(value: String): Seq[Long] = ids(spark.read.option("txcommit.asOf", value).parquet(url))
  }

  private val expected = Seq(Seq(0L, 1L, 2L, 3L), Seq(0L, 1L, 2L, 3L, 10L, 11L, 12L), Seq(1L, 3L, 11L, 20L))

  private def iso(ms: Long): String = Instant.ofEpochMilli(ms).toString

  test("each version, named by its transaction or by its store time, reads as it was committed") {
    val t = new Table
    val v = t.versions
    assert(v.map(_._1) == Seq(1L, 2L, 3L), "HISTORY numbers the versions in commit order")
    for (((_, txn, at), rows) <- v.zip(expected)) {
      assert(t.asOf(txn) == rows, s"by txn $txn")
      assert(t.asOf(iso(at)) == rows, s"by time ${iso(at)}")
    }
    assert(t.asOf(iso(v(1)._3 - 1)) == expected.head, "a time before a commit is the version before it")
    assert(t.ids(spark.read.parquet(t.url)) == expected.last, "a read of now is unchanged")
    // SQL on files: Spark's time-travel clauses.
    for (((_, txn, at), rows) <- v.zip(expected)) {
      assert(t.ids(spark.sql(s"SELECT * FROM parquet.`${t.url}` VERSION AS OF '$txn'")) == rows)
      assert(t.ids(spark.sql(s"SELECT * FROM parquet.`${t.url}` TIMESTAMP AS OF '${iso(at)}'")) == rows)
    }
    assert(t.ids(spark.sql(s"SELECT * FROM parquet.`${t.url}/k=1` VERSION AS OF '${v.head._2}'")) == Seq(1L, 3L),
      "a partition directory of the table reads its part of the version")
  }

  test("a catalog table over the table reads each version too: the option, VERSION AS OF, TIMESTAMP AS OF") {
    val t = new Table
    val v = t.versions
    spark.sql(s"CREATE TABLE travel (id BIGINT, k INT) USING parquet PARTITIONED BY (k) LOCATION '${t.url}'")
    try {
      spark.sql("MSCK REPAIR TABLE travel")
      for (((_, txn, at), rows) <- v.zip(expected)) {
        assert(t.ids(spark.read.option("txcommit.asOf", txn).table("travel")) == rows, s"by txn $txn")
        assert(t.ids(spark.sql(s"SELECT * FROM travel VERSION AS OF '$txn'")) == rows)
        assert(t.ids(spark.sql(s"SELECT * FROM default.travel TIMESTAMP AS OF '${iso(at)}'")) == rows)
      }
      assert(t.ids(spark.table("travel")) == expected.last, "a read of now is unchanged")
      val e = intercept[TimeTravelException](spark.read.option("versionAsOf", "1").table("travel").collect())
      assert(e.getMessage.contains("versionAsOf") && e.getMessage.contains("txcommit.asOf"))
    } finally spark.sql("DROP TABLE travel")
  }

  test("a catalog table's past partitions come from the log; after RESTORE the catalog's partitions match the table") {
    val dir = Files.createTempDirectory("txcommit-time-travel").resolve("cat")
    val url = dir.toUri.toString.stripSuffix("/")
    spark.sql(s"CREATE TABLE tracked_travel (id BIGINT, k INT) USING parquet PARTITIONED BY (k) LOCATION '$url'")
    try {
      def ids(df: DataFrame): Seq[Long] = df.collect().toSeq.map(_.getAs[Long]("id")).sorted
      def partitions = spark.sql("SHOW PARTITIONS tracked_travel").collect().map(_.getString(0)).toSeq.sorted
      spark.sql("INSERT INTO tracked_travel VALUES (1, 1), (2, 2)")
      val v1 = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().find(_.getAs[String]("state") == "committed").get
        .getAs[String]("txn")
      // A static overwrite of the whole table: Spark drops k=2 from the catalog.
      spark.sql("INSERT OVERWRITE TABLE tracked_travel VALUES (3, 1)")
      assert(partitions == Seq("k=1") && ids(spark.table("tracked_travel")) == Seq(3L))
      assert(ids(spark.read.option("txcommit.asOf", v1).parquet(url)) == Seq(1L, 2L), "the path read as of v1")
      assert(ids(spark.sql(s"SELECT * FROM tracked_travel VERSION AS OF '$v1'")) == Seq(1L, 2L),
        "VERSION AS OF: both partitions of v1, from the log")
      assert(ids(spark.read.option("txcommit.asOf", v1).table("tracked_travel")) == Seq(1L, 2L),
        "txcommit.asOf on the catalog table")
      spark.sql(s"TXCOMMIT RESTORE '$url' TO '$v1'").collect()
      assert(ids(spark.table("tracked_travel")) == Seq(1L, 2L), "after RESTORE the table reads as v1 did")
      assert(partitions == Seq("k=1", "k=2"), "and the catalog's partitions are the table's again")
    } finally spark.sql("DROP TABLE tracked_travel")
  }

  test("TXCOMMIT RESTORE makes the table what it was at a version, and back again, copying nothing") {
    val t = new Table
    val v = t.versions
    def restore(to: String) = spark.sql(s"TXCOMMIT RESTORE '${t.url}' TO '$to'").collect().head
    def dataFiles = Files.walk(t.dir).iterator().asScala.count(p => p.getFileName.toString.startsWith("part-"))
    val files = dataFiles
    val back = restore(v(1)._2)
    val overwrite = spark.sql(s"TXCOMMIT HISTORY '${t.url}'").collect().find(_.getAs[String]("txn") == v(2)._2).get
    assert(back.getAs[Long]("version") == 2L && back.getAs[String]("versionTxn") == v(1)._2)
    assert(back.getAs[Long]("restoredFiles") == overwrite.getAs[Long]("removedFiles"),
      "it re-adds what the overwrite removed")
    assert(back.getAs[Long]("removedFiles") == overwrite.getAs[Long]("files"), "and removes what it added")
    assert(t.ids(spark.read.parquet(t.url)) == expected(1), "the table reads as version 2 did")
    assert(dataFiles == files, "no data file was written or copied")
    assert(t.versions.size == 4, "the restore is a version of its own")
    val restoreRow =
      spark.sql(s"TXCOMMIT HISTORY '${t.url}'").collect().find(_.getAs[String]("txn") == back.getAs[String]("txn")).get
    assert(restoreRow.getAs[Long]("restoredFiles") == back.getAs[Long]("restoredFiles"),
      "HISTORY shows what the restore re-added")
    assert(overwrite.isNullAt(overwrite.fieldIndex("restoredFiles")) || overwrite.getAs[Long]("restoredFiles") == 0L)
    // By time, to the first version; then forward again to the version before the first restore.
    restore(iso(v.head._3))
    assert(t.ids(spark.read.parquet(t.url)) == expected.head)
    restore(v(2)._2)
    assert(t.ids(spark.read.parquet(t.url)) == expected(2), "files two restores removed are re-added")
    assert(t.ids(spark.read.option("txcommit.asOf", back.getAs[String]("txn")).parquet(t.url)) == expected(1),
      "a restore's version reads as what it restored")
    val bad = intercept[io.txcommit.MaintenanceException](restore("yesterday"))
    assert(bad.getMessage.contains("'yesterday'") && bad.getMessage.contains("nothing was written"))
    val none = intercept[TimeTravelException](restore("0000000000000000"))
    assert(none.getMessage.contains("0000000000000000") && t.versions.size == 6, "a failed restore writes nothing")
  }

  test("a write id whose rows a RESTORE removed is no longer committed: skip and fail let its next run commit; " +
    "rows an overwrite replaced keep it committed") {
    val dir = Files.createTempDirectory("txcommit-time-travel").resolve("t")
    val url = dir.toUri.toString.stripSuffix("/")
    def df(k: Int, ids: Long*) = spark.createDataFrame(ids.map(i => (i, k))).toDF("id", "k")
    def ids = spark.read.parquet(url).collect().toSeq.map(_.getAs[Long]("id")).sorted
    def load(policy: String) = df(5, 10L, 11L).write.mode("append").option("txcommit.writeId", "load-1")
      .option("txcommit.writeIdPolicy", policy).partitionBy("k").parquet(url)
    df(1, 1L, 2L, 3L).write.partitionBy("k").parquet(url)
    val v1 = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().head.getAs[String]("txn")
    load("fail")
    assert(ids == Seq(1L, 2L, 3L, 10L, 11L))
    spark.sql(s"TXCOMMIT RESTORE '$url' TO '$v1'").collect()
    assert(ids == Seq(1L, 2L, 3L), "the restore removed the run's rows")
    load("skip")
    assert(ids == Seq(1L, 2L, 3L, 10L, 11L), "skip: the restore undid the run, so this run commits")
    spark.sql(s"TXCOMMIT RESTORE '$url' TO '$v1'").collect()
    load("fail")
    assert(ids == Seq(1L, 2L, 3L, 10L, 11L), "fail: the same")
    load("skip")
    assert(ids == Seq(1L, 2L, 3L, 10L, 11L), "committed again: skipped")
    assert(refusedAny(load("fail")).contains("load-1"))
    // An overwrite that replaced the run's rows is the table moving on, not an undo.
    df(5, 99L).write.mode("overwrite").option("partitionOverwriteMode", "dynamic").partitionBy("k").parquet(url)
    load("skip")
    assert(ids == Seq(1L, 2L, 3L, 99L))
    assert(refusedAny(load("fail")).contains("load-1"))
  }

  private def refusedAny(write: => Any): String = {
    val e = scala.util.Try(write).fold(identity, got => fail(s"not refused: it gave $got"))
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
  }

  test("a writer whose clock is an hour ahead does not move its commit: the store's time names versions") {
    val t = new Table
    val v = t.versions
    // The append's record claims a commit an hour ahead; the store dated it when it was written.
    val record = t.dir.resolve(s"_txcommit/commits/${v(1)._2}.json")
    val mtime = Files.getLastModifiedTime(record)
    val r = RecordCodec.decode(Files.readAllBytes(record), record.toString, v(1)._2)
    Files.write(record, RecordCodec.encode(r.copy(committedAt = r.committedAt + 3600L * 1000L)))
    Files.setLastModifiedTime(record, mtime)
    assert(t.versions == v)
    assert(t.asOf(iso(v(1)._3)) == expected(1))
    assert(t.asOf(iso(v(2)._3 - 1)) == expected(1))
  }

  private def refused(read: => Any): String = {
    val e = scala.util.Try(read).fold(identity, got => fail(s"not refused: it gave $got"))
    val chain = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).toSeq
    chain.collectFirst { case x: TimeTravelException => x.getMessage }.getOrElse(throw e)
  }

  test("what names no snapshot fails, naming the table, the option and the value") {
    val t = new Table
    val unknown = io.txcommit.log.TxnId.generate()
    val m1 = refused(t.asOf(unknown))
    assert(m1.contains(unknown) && m1.contains("txcommit.asOf") && m1.contains("not committed") && m1.contains("/t"))
    val m2 = refused(t.asOf("last tuesday"))
    assert(m2.contains("'last tuesday'") && m2.contains("txcommit.asOf") && m2.contains("ISO-8601"))
    val m3 = refused(t.asOf("2001-01-01T00:00:00Z"))
    assert(m3.contains("2001-01-01T00:00:00Z") && m3.contains("no commit"))
    val m4 = refused(spark.sql(s"SELECT * FROM parquet.`${t.url}` VERSION AS OF '$unknown'").collect())
    assert(m4.contains("VERSION AS OF") && m4.contains(unknown))
    for (delta <- Seq("versionAsOf", "timestampAsOf"))
      assert(refused(spark.read.option(delta, "1").parquet(t.url).collect()).contains(s"option $delta"))
    val plain = Files.createTempDirectory("txcommit-plain").toUri.toString
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try spark.range(3).write.mode("overwrite").parquet(plain)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
    val m5 = refused(spark.read.option("txcommit.asOf", t.versions.head._2).parquet(plain).collect())
    assert(m5.contains("no txcommit table"))
  }

  test("a snapshot whose replaced files VACUUM deleted is refused, naming VACUUM's horizon; later ones read") {
    val t = new Table
    val v = t.versions
    spark.sql(s"TXCOMMIT VACUUM '${t.url}' RETAIN 0 HOURS FORCE").collect()
    val m = refused(t.asOf(v.head._2))
    assert(m.contains(v.head._2) && m.contains("VACUUM") && m.contains("horizon") && m.contains("/t"))
    assert(refused(t.asOf(v(1)._2)).contains("horizon"))
    assert(t.asOf(v(2)._2) == expected(2))
    // A restore to such a version is refused the same way, and writes nothing.
    val r = intercept[TimeTravelException](spark.sql(s"TXCOMMIT RESTORE '${t.url}' TO '${v(1)._2}'").collect())
    assert(r.getMessage.contains("horizon") && t.versions.size == 3 && t.ids(spark.read.parquet(t.url)) == expected(2))
  }

  /** A file written without txcommit at `dest`: one Parquet file of `ids` (its partition column is its directory). */
  private def plainFile(ids: Seq[Long], dest: JPath): Long = {
    val scratch = Files.createTempDirectory("txcommit-plain-writer")
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try spark.createDataFrame(ids.map(Tuple1(_))).toDF("id").coalesce(1).write.mode("overwrite")
        .parquet(scratch.toUri.toString)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
    val written = Files.list(scratch).iterator().asScala.filter(_.getFileName.toString.startsWith("part-")).toSeq
    assert(written.size == 1)
    Files.createDirectories(dest.getParent)
    Files.move(written.head, dest, java.nio.file.StandardCopyOption.REPLACE_EXISTING)
    Files.size(dest)
  }

  test("a file written without txcommit is in a past snapshot by identity: its name reused, then VACUUMed, " +
    "the snapshot is refused naming it, never read short; a RESTORE to it writes nothing") {
    val dir = Files.createTempDirectory("txcommit-time-travel").resolve("t")
    val url = dir.toUri.toString.stripSuffix("/")
    val x = dir.resolve("k=2/x.parquet")
    def df(rows: (Long, Int)*) = spark.createDataFrame(rows).toDF("id", "k")
    val first = plainFile(Seq(100L), x)
    df((1L, 1), (2L, 1), (3L, 1)).write.mode("overwrite").partitionBy("k").parquet(url) // removes the first x
    Thread.sleep(1100) // version 1 and the file are dated in two seconds (a past snapshot's rule)
    val second = plainFile(Seq(4L, 5L, 6L), x) // another file under the removed name
    assert(first != second, "two files, told apart by their size")
    df((7L, 1)).write.mode("append").partitionBy("k").parquet(url)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try df((9L, 2)).write.mode("overwrite").partitionBy("k").parquet(url) // removes the second x
    finally spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    def versions = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().toSeq.filter(_.getAs[String]("state") == "committed")
      .map(r => r.getAs[Long]("version") -> r.getAs[String]("txn")).sorted
    val v = versions.map(_._2)
    def asOf(value: String) =
      spark.read.option("txcommit.asOf", value).parquet(url).collect().toSeq.map(_.getAs[Long]("id")).sorted
    assert(asOf(v(1)) == Seq(1L, 2L, 3L, 4L, 5L, 6L, 7L), "the second x is in version 2, by identity")
    spark.sql(s"TXCOMMIT VACUUM '$url' RETAIN 0 HOURS FORCE").collect()
    assert(!Files.exists(x))
    val m = refused(asOf(v(1)))
    assert(m.contains(s"version 2, transaction ${v(1)}") && m.contains("'k=2/x.parquet'") && m.contains("VACUUM"), m)
    val r = refused(spark.sql(s"TXCOMMIT RESTORE '$url' TO '${v(1)}'").collect())
    assert(r.contains("'k=2/x.parquet'") && versions.size == 3, "a refused restore writes nothing")
    assert(asOf(v.head) == Seq(1L, 2L, 3L), "the second x was written after version 1: not in its snapshot")
    assert(asOf(v(2)) == Seq(1L, 2L, 3L, 7L, 9L))
  }

  test("a table VACUUMed by a txcommit that recorded no horizon: past reads that lost files are refused " +
    "naming them (path, catalog table, RESTORE), the others read") {
    val t = new Table
    val v = t.versions
    spark.sql(s"TXCOMMIT VACUUM '${t.url}' RETAIN 0 HOURS FORCE").collect()
    val horizons = t.dir.resolve("_txcommit/vacuum")
    Files.list(horizons).iterator().asScala.toSeq.foreach(Files.delete)
    Files.delete(horizons)
    val gone = (m: String) => m.contains("no longer on the store") && m.contains("'k=0/part-")
    for ((_, txn, _) <- v.take(2)) assert(gone(refused(t.asOf(txn))), txn)
    // A catalog table whose partitions the catalog tracks lists at planning: checked there.
    spark.sql(s"CREATE TABLE unrecorded (id BIGINT, k INT) USING parquet PARTITIONED BY (k) LOCATION '${t.url}'")
    try {
      spark.sql("MSCK REPAIR TABLE unrecorded")
      assert(gone(refused(spark.sql(s"SELECT * FROM unrecorded VERSION AS OF '${v.head._2}'").collect())))
      assert(t.ids(spark.sql(s"SELECT * FROM unrecorded VERSION AS OF '${v.head._2}' WHERE k = 1")) == Seq(1L, 3L),
        "a partition the snapshot lost no file of reads")
    } finally spark.sql("DROP TABLE unrecorded")
    assert(gone(refused(spark.sql(s"TXCOMMIT RESTORE '${t.url}' TO '${v(1)._2}'").collect())))
    assert(t.versions.size == 3 && t.asOf(v(2)._2) == expected(2))
  }

  test("a VACUUM between a past read's log listing and its data listing fails the read, naming the files") {
    // A table read by listing (I32): its past reads list the data after the log. A log-only
    // table's list nothing; they check the files the snapshot needs where the read selects them.
    spark.conf.set(io.txcommit.conf.TxCommitConf.NewTableReads, "listing")
    val t =
      try new Table
      finally spark.conf.unset(io.txcommit.conf.TxCommitConf.NewTableReads)
    val v = t.versions
    val k0 = t.dir.resolve("k=0")
    val held = Files.list(k0).iterator().asScala.map(_.getFileName.toString)
      .filter(n => n.startsWith("part-") && n.contains(v.head._2)).toSeq
    assert(held.nonEmpty)
    var vacuumed = Seq.empty[String]
    io.txcommit.testing.ListingHookFileSystem.before.set(() =>
      vacuumed = io.txcommit.maintenance.Vacuum.run(new org.apache.hadoop.fs.Path(t.url),
        spark.sessionState.newHadoopConf(), io.txcommit.maintenance.VacuumOptions(0, force = true)).map(_.path))
    // The session's confs reach the Hadoop configuration of its reads (and of the VACUUM above).
    val hooked = Seq("fs.file.impl" -> classOf[io.txcommit.testing.ListingHookFileSystem].getName,
      "fs.file.impl.disable.cache" -> "true", io.txcommit.testing.ListingHookFileSystem.Dir -> k0.toString)
    hooked.foreach { case (k, value) => spark.conf.set(k, value) }
    val m =
      try refused(t.asOf(v.head._2))
      finally {
        io.txcommit.testing.ListingHookFileSystem.before.set(null)
        hooked.foreach(h => spark.conf.unset(h._1))
      }
    assert(held.forall(f => vacuumed.contains(s"k=0/$f")), "VACUUM ran between the two listings")
    assert(m.contains(s"version 1, transaction ${v.head._2}") && held.forall(f => m.contains(s"'k=0/$f'")), m)
    assert(t.asOf(v(2)._2) == expected(2))
  }

  test("a checkpoint that folds in later versions is not used for an older one") {
    val t = new Table
    val v = t.versions
    assert(spark.sql(s"TXCOMMIT CHECKPOINT '${t.url}'").collect().head.getAs[Boolean](4))
    for (((_, txn, _), rows) <- v.zip(expected)) assert(t.asOf(txn) == rows)
    // Dates every record before the checkpoint: the checkpoint's versions are all in the snapshot.
    assert(t.asOf(iso(System.currentTimeMillis())) == expected.last)
  }
}
