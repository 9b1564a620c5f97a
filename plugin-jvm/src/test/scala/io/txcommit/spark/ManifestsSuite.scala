package io.txcommit.spark

import java.net.URI
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path => JPath}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.commit.TableCommit
import io.txcommit.log.{LogLayout, TableReads}
import io.txcommit.store.Adapters
import io.txcommit.testing.PluginSessions

import io.txcommit.conf.TxCommitConf

/**
 * Symlink manifests through Spark: what each write leaves in `_symlink_format_manifest/` is
 * exactly what Spark with txcommit reads (`inputFiles`), after appends, a failed job, a static
 * and a dynamic partition overwrite, and `TXCOMMIT GENERATE MANIFEST` after writes without them.
 */
class ManifestsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-manifests")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newTable(): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-manifests").resolve("t")
    (dir, dir.toUri.toString.stripSuffix("/"))
  }

  private def rows(n: Int, partitions: Int, from: Int = 0): DataFrame =
    spark.range(from.toLong, (from + n).toLong).selectExpr("id", s"cast(id % $partitions as int) as k")

  private def withManifests[A](on: Boolean)(f: => A): A = {
    spark.conf.set(TxCommitConf.Manifests, on.toString)
    try f
    finally spark.conf.unset(TxCommitConf.Manifests)
  }

  /** Each manifest on disk: its partition directory and its lines. */
  private def manifests(dir: JPath): Map[String, Seq[String]] = {
    val root = dir.resolve("_symlink_format_manifest")
    if (!Files.exists(root)) Map.empty
    else Files.walk(root).iterator().asScala.filter(p => Files.isRegularFile(p) && p.getFileName.toString == "manifest")
      .map(p =>
        root.relativize(p.getParent).toString ->
          new String(Files.readAllBytes(p), UTF_8).split("\n").toSeq.filter(_.nonEmpty)).toMap
  }

  private def listed(dir: JPath): Set[String] = manifests(dir).values.flatten.toSet

  /** The files Spark with txcommit reads, as Hadoop paths print (`file:/…`, as manifests list them). */
  private def read(url: String): Set[String] =
    spark.read.parquet(url).inputFiles.map(f => new Path(new URI(f)).toString).toSet

  test("appends with manifests on: each partition's manifest lists exactly its committed files") {
    val (dir, url) = newTable()
    withManifests(on = true) {
      rows(30, 3).write.partitionBy("k").parquet(url)
      rows(30, 3, from = 30).write.mode("append").partitionBy("k").parquet(url)
    }
    val m = manifests(dir)
    assert(m.keySet == Set("k=0", "k=1", "k=2"))
    m.foreach { case (k, files) => assert(files.nonEmpty && files.forall(_.contains(s"/$k/part-")), k) }
    assert(listed(dir) == read(url) && read(url).size >= 6)
    assert(read(url).forall(_.startsWith("file:/")))
  }

  test("a failed job leaves the manifests as they were") {
    val (dir, url) = newTable()
    withManifests(on = true) {
      rows(20, 2).write.partitionBy("k").parquet(url)
      val before = manifests(dir)
      val failing =
        rows(20, 2, from = 20).selectExpr("case when id = 33 then raise_error('boom') else id end as id", "k")
      intercept[Exception](failing.write.mode("append").partitionBy("k").parquet(url))
      assert(manifests(dir) == before)
      assert(listed(dir) == read(url))
    }
  }

  test("an overwrite and a dynamic partition overwrite: replaced files leave the manifests") {
    val (dir, url) = newTable()
    withManifests(on = true) {
      rows(30, 3).write.partitionBy("k").parquet(url)
      val first = listed(dir)
      rows(20, 2).write.mode("overwrite").partitionBy("k").parquet(url)
      assert(manifests(dir).keySet == Set("k=0", "k=1"), "k=2 has no visible file: its manifest is gone")
      assert(listed(dir) == read(url) && (listed(dir) intersect first).isEmpty)
      val second = manifests(dir)
      rows(10, 1).selectExpr("id", "1 as k").write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
        .partitionBy("k").parquet(url)
      assert(manifests(dir)("k=0") == second("k=0"), "a partition the overwrite did not write is unchanged")
      assert((manifests(dir)("k=1").toSet intersect second("k=1").toSet).isEmpty)
      assert(listed(dir) == read(url))
    }
  }

  /**
   * A table made by `kind` after what it needs before it (written with manifests on): an append
   * after a write, an overwrite of it, two runs of one write id, two micro-batches of a stream, a
   * restore of the first version after an overwrite of it.
   */
  private def made(kind: TableCommit, url: String, dir: JPath): Unit = {
    val first = () => rows(30, 3).write.partitionBy("k").parquet(url)
    kind match {
      case TableCommit.Append =>
        first()
        rows(9, 3, from = 100).write.mode("append").partitionBy("k").parquet(url)
      case TableCommit.StaticOverwrite =>
        first()
        rows(20, 2, from = 100).write.mode("overwrite").partitionBy("k").parquet(url)
      case TableCommit.DynamicOverwrite =>
        first()
        rows(10, 1, from = 100).selectExpr("id", "1 as k").write.mode("overwrite")
          .option("partitionOverwriteMode", "dynamic").partitionBy("k").parquet(url)
      case TableCommit.WriteIdRun =>
        first()
        for (from <- Seq(100, 200))
          rows(6, 2, from).write.mode("append").option("txcommit.writeId", "w").partitionBy("k").parquet(url)
      case TableCommit.StreamingBatch =>
        import spark.implicits._
        val input = io.txcommit.streaming.SparkStreamingTestApi.memoryStream[Long](spark)(newLongEncoder)
        spark.conf.set("spark.sql.streaming.commitProtocolClass",
          classOf[io.txcommit.streaming.TxCommitSinkProtocol].getName)
        try {
          val query = input.toDF().selectExpr("value as id", "cast(value % 2 as int) as k").writeStream
            .format("parquet").partitionBy("k").option("checkpointLocation", dir.resolveSibling("cp").toString)
            .start(url)
          try for (batch <- Seq(1L to 10L, 11L to 15L)) { input.addData(batch); query.processAllAvailable() }
          finally query.stop()
        } finally spark.conf.unset("spark.sql.streaming.commitProtocolClass")
      case TableCommit.Restore =>
        first()
        val v1 = spark.sql(s"TXCOMMIT HISTORY '$url'").collect().head.getAs[String]("txn")
        rows(20, 2, from = 100).write.mode("overwrite").partitionBy("k").parquet(url)
        spark.sql(s"TXCOMMIT RESTORE '$url' TO '$v1'").collect()
        assert(spark.read.parquet(url).count() == 30L)
    }
  }

  for (kind <- TableCommit.all)
    test(s"every kind of commit leaves the manifests what Spark reads, also after VACUUM: ${kind.name}") {
      val (dir, url) = newTable()
      withManifests(on = true)(made(kind, url, dir))
      assert(listed(dir) == read(url) && read(url).nonEmpty, kind.name)
      spark.sql(s"TXCOMMIT VACUUM '$url' RETAIN 0 HOURS FORCE").collect()
      assert(
        listed(dir).forall(f => Files.exists(java.nio.file.Paths.get(new URI(f)))), "no manifest names a deleted file")
      assert(listed(dir) == read(url))
    }

  test("a write's txcommit.manifests option wins over the session's switch") {
    val (dir, url) = newTable()
    withManifests(on = true)(rows(10, 2).write.option(TxCommitConf.ManifestsOption, "false").partitionBy("k").parquet(
        url))
    assert(manifests(dir).isEmpty)
    rows(10, 2).write.mode("append").option(TxCommitConf.ManifestsOption, "true").partitionBy("k").parquet(url)
    assert(listed(dir) == read(url), "the first write's files too: the manifests were not whole before")
  }

  test("TXCOMMIT GENERATE MANIFEST after writes without manifests writes every partition's") {
    val (dir, url) = newTable()
    rows(30, 3).write.partitionBy("k").parquet(url)
    rows(20, 2).write.mode("overwrite").partitionBy("k").parquet(url)
    assert(manifests(dir).isEmpty)
    val out = spark.sql(s"TXCOMMIT GENERATE MANIFEST '$url'").collect()
      .map(r => (r.getAs[String]("partition"), r.getAs[Long]("files"), r.getAs[Boolean]("deleted"))).toSeq
    assert(out.map(_._1) == Seq("k=0", "k=1") && out.forall { case (_, n, deleted) => n > 0 && !deleted })
    assert(listed(dir) == read(url))
    assert(out.map(_._2).sum == read(url).size.toLong)
    // A write with manifests on after one without repairs every partition (roll forward).
    rows(10, 2).write.mode("append").partitionBy("k").parquet(url)
    withManifests(on = true)(rows(5, 1).selectExpr("id", "5 as k").write.mode("append").partitionBy("k").parquet(url))
    assert(manifests(dir).keySet == Set("k=0", "k=1", "k=5") && listed(dir) == read(url))
  }

  test("TXCOMMIT GENERATE MANIFEST of a directory without a log fails, naming it, writing nothing") {
    val (dir, url) = newTable()
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try rows(10, 1).write.parquet(url)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
    val e = intercept[Exception](spark.sql(s"TXCOMMIT GENERATE MANIFEST '$url'").collect())
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")
    assert(messages.contains("is not a txcommit table") && messages.contains(dir.toString), messages)
    assert(!Files.exists(dir.resolve("_symlink_format_manifest")))
  }

  private def messages(e: Throwable): String =
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" | ")

  test(
    "TXCOMMIT ALTER SET ('manifests' = 'true') records the property, writes every manifest, and plain writes follow it") {
    val (dir, url) = newTable()
    rows(30, 3).write.partitionBy("k").parquet(url)
    assert(manifests(dir).isEmpty)
    // A commit writes a checkpoint about every tenth time (decided by its txn id), so the
    // newest checkpoint is 1 or 2 here; each carries the mode.
    val (_, newest) = TableReads.current(Adapters.open(new Path(url), spark.sparkContext.hadoopConfiguration),
      LogLayout(new Path(url)))
    val out = spark.sql(s"TXCOMMIT ALTER '$url' SET ('manifests' = 'true')").collect()
      .map(r => (r.getAs[String]("property"), r.getAs[String]("value"), r.getAs[Long]("number"))).toSeq
    // `reads` is in force too: a table txcommit creates is log-only, as its checkpoint 1 says.
    assert(newest >= 1 && out == Seq(("manifests", "true", 1L), ("reads", "log", newest)))
    assert(manifests(dir).keySet == Set("k=0", "k=1", "k=2") && listed(dir) == read(url), "whole from the ALTER on")
    // No option, no session switch: the table's property decides.
    rows(10, 2, from = 30).write.mode("append").partitionBy("k").parquet(url)
    rows(10, 1).selectExpr("id", "1 as k").write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
      .partitionBy("k").parquet(url)
    assert(listed(dir) == read(url))
    // Off, while the session says on: the table's property wins; the manifests stay as they were.
    spark.sql(s"TXCOMMIT ALTER '$url' SET ('MANIFESTS' = 'False')").collect()
    val before = manifests(dir)
    withManifests(on = true)(rows(5, 1).selectExpr("id", "7 as k").write.mode("append").partitionBy("k").parquet(url))
    assert(manifests(dir) == before)
  }

  test("a write with txcommit.manifests=true records the property: the next writer without the option follows it") {
    val (dir, url) = newTable()
    rows(10, 2).write.option(TxCommitConf.ManifestsOption, "true").partitionBy("k").parquet(url)
    rows(10, 3, from = 10).write.mode("append").partitionBy("k").parquet(url)
    assert(manifests(dir).keySet == Set("k=0", "k=1", "k=2") && listed(dir) == read(url))
  }

  test("TXCOMMIT ALTER errors name the path, key or value and change nothing") {
    val (dir, url) = newTable()
    def refused(sql: String): String = messages(intercept[Exception](spark.sql(sql).collect()))
    val notTable = refused(s"TXCOMMIT ALTER '$url' SET ('manifests' = 'true')")
    assert(notTable.contains("is not a txcommit table") && notTable.contains(dir.toString), notTable)
    rows(10, 1).write.parquet(url)
    val unknown = refused(s"TXCOMMIT ALTER '$url' SET ('manifest' = 'true')")
    assert(unknown.contains("unknown table property 'manifest'") && unknown.contains(dir.toString), unknown)
    val value = refused(s"TXCOMMIT ALTER '$url' SET ('manifests' = 'on')")
    assert(value.contains("table property 'manifests' cannot be 'on'"), value)
    val twice = refused(s"TXCOMMIT ALTER '$url' SET ('manifests' = 'true', 'manifests' = 'false')")
    assert(twice.contains("'manifests' is set twice"), twice)
    val syntax = refused(s"TXCOMMIT ALTER '$url' SET manifests = true")
    assert(syntax.contains("expected SET ('<property>' = '<value>')"), syntax)
    assert(!Files.exists(dir.resolve("_txcommit/properties")) && manifests(dir).isEmpty)
  }

  test("TXCOMMIT ALTER parses every pair in order, quotes written twice, keywords in any case") {
    assert(TxCommitSqlParser.ours("txcommit alter '/t''s' set ( 'manifests'='true' , 'it''s' = 'a,b' );") ==
      Some(AlterCommand("/t's", Seq("manifests" -> "true", "it's" -> "a,b"))))
    for (bad <- Seq("SET ()", "SET ('manifests' = 'true',)", "SET ('manifests')", "SET 'manifests' = 'true'")) {
      val e = intercept[io.txcommit.MaintenanceException](TxCommitSqlParser.ours(s"TXCOMMIT ALTER '/t' $bad"))
      assert(e.getMessage.contains("cannot parse") && e.getMessage.contains("SET ('<property>' = '<value>')"),
        e.getMessage)
    }
  }
}
