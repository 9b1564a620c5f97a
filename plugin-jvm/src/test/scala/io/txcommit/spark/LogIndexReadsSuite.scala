package io.txcommit.spark

import java.nio.file.{Files, Path => JPath}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.txcommit.LogFileIndex
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{ReadMode, TxnId}
import io.txcommit.testing.PluginSessions

/**
 * Reads of a txcommit table planned from its log (docs/readers.md): the SQL extension resolves
 * the read to a relation over a [[LogFileIndex]] before Spark lists anything, and what it reads
 * (rows, schema, partition columns, files) is what Spark's own listing with the read filter
 * reads of the same snapshot, for every way a read names its files and partitions.
 */
class LogIndexReadsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.immediate("txcommit-log-index").getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  /**
   * A table partitioned by k (int) and s (string): two commits, a file written without txcommit
   * in k=1/s=a, and the file of a transaction that never committed in k=2/s=b.
   */
  private def table(reads: String = ReadMode.Listing): (JPath, String) = {
    val dir = Files.createTempDirectory("txcommit-log-index").resolve("t")
    val url = dir.toUri.toString.stripSuffix("/")
    def rows(from: Int, n: Int) = spark.range(from.toLong, (from + n).toLong)
      .selectExpr("id", "cast(id % 3 as int) as k", "if(id % 2 = 0, 'a', 'b') as s")
    spark.conf.set(TxCommitConf.NewTableReads, reads)
    try rows(0, 30).write.partitionBy("k", "s").parquet(url)
    finally spark.conf.unset(TxCommitConf.NewTableReads)
    rows(100, 12).write.mode("append").partitionBy("k", "s").parquet(url)
    val plain = Files.createTempDirectory("txcommit-plain").resolve("p").toUri.toString
    spark.conf.set("spark.sql.sources.commitProtocolClass",
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol")
    try spark.range(1000, 1005).coalesce(1).write.parquet(plain)
    finally spark.conf.set("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
    val plainFile = Files.list(java.nio.file.Paths.get(new java.net.URI(plain))).iterator().asScala
      .find(_.getFileName.toString.endsWith(".parquet")).get
    Files.copy(plainFile, dir.resolve("k=1/s=a/written-without-txcommit.parquet"))
    val committed =
      Files.list(dir.resolve("k=2/s=b")).iterator().asScala.find(_.getFileName.toString.startsWith("part-")).get
    Files.copy(committed, dir.resolve(s"k=2/s=b/part-00000-tid-${TxnId.generate()}-7-c000.snappy.parquet"))
    (dir, url)
  }

  private def indexOf(df: DataFrame): Option[Any] =
    df.queryExecution.analyzed.collectFirst { case l: LogicalRelation => l.relation }.collect {
      case r: HadoopFsRelation => r.location
    }

  /** The same read through Spark's own listing and the read filter (an option the index leaves to it). */
  private def listed(read: org.apache.spark.sql.DataFrameReader) = read.option("modifiedBefore", "2999-01-01T00:00:00")

  private def same(planned: DataFrame, byListing: DataFrame, what: String): Unit = {
    assert(indexOf(planned).exists(_.isInstanceOf[LogFileIndex]), s"$what: planned from the log")
    assert(!indexOf(byListing).exists(_.isInstanceOf[LogFileIndex]), s"$what: the reference read lists")
    assert(planned.schema == byListing.schema, s"$what: schema")
    def sorted(df: DataFrame): Seq[Row] = df.collect().toSeq.sortBy(_.toString)
    assert(sorted(planned) == sorted(byListing), s"$what: rows")
    // Compared as paths: a local file listed may print as file:///x where the log's is file:/x.
    def paths(df: DataFrame) = df.inputFiles.map(f => new org.apache.hadoop.fs.Path(f).toUri.getPath).toSet
    val (a, b) = (paths(planned), paths(byListing))
    assert(a == b, s"$what: files only planned ${a -- b}, only listed ${b -- a}")
  }

  for (reads <- Seq(ReadMode.Listing, ReadMode.Log))
    test(
      s"a read of a table plans from its log and reads what Spark's own listing reads, every way a read is named ($reads)") {
      val (_, url) = table(reads)
      def r = spark.read // a reader keeps the options set on it
      same(r.parquet(url), listed(spark.read).parquet(url), "the table")
      assert(r.parquet(url).count() == (if (reads == ReadMode.Log) 42 else 42 + 5),
        "both commits, and the file written without txcommit where the table is listed")
      assert(r.parquet(url).inputFiles.count(_.contains("-tid-")) > 0)
      same(r.parquet(s"$url/k=1"), listed(spark.read).parquet(s"$url/k=1"), "a partition directory")
      same(r.option("basePath", url).parquet(s"$url/k=1"),
        listed(spark.read.option("basePath", url)).parquet(s"$url/k=1"), "basePath")
      same(r.parquet(s"$url/k=1/s=a", s"$url/k=2/s=b"), listed(spark.read).parquet(s"$url/k=1/s=a", s"$url/k=2/s=b"),
        "two roots")
      // Spark refuses partition directories of two levels read as roots; so does the index.
      def error(df: => DataFrame) = scala.util.Try(df.schema).failed.toOption.map(_.getClass.getName)
      assert(error(r.parquet(s"$url/k=1", s"$url/k=2")).nonEmpty)
      assert(error(r.parquet(s"$url/k=1", s"$url/k=2")) == error(listed(spark.read).parquet(s"$url/k=1", s"$url/k=2")))
      same(spark.read.schema("id BIGINT, k STRING, s STRING").parquet(url),
        listed(spark.read.schema("id BIGINT, k STRING, s STRING")).parquet(url), "a user's schema")
      same(spark.read.option("pathGlobFilter", "part-*").parquet(url),
        listed(spark.read.option("pathGlobFilter", "part-*")).parquet(url), "pathGlobFilter")
      same(spark.read.option("recursiveFileLookup", "true").parquet(url),
        listed(spark.read.option("recursiveFileLookup", "true")).parquet(url), "recursiveFileLookup")
      same(spark.sql(s"SELECT * FROM parquet.`$url`"), listed(spark.read).parquet(url), "SQL on a file")
      val key = "spark.sql.sources.partitionColumnTypeInference.enabled"
      spark.conf.set(key, "false")
      try same(spark.read.parquet(url), listed(spark.read).parquet(url), "partition type inference off")
      finally spark.conf.unset(key)
      assert(spark.read.parquet(url).schema("k").dataType == org.apache.spark.sql.types.IntegerType)
    }

  test("a read's files are fixed when it is planned; refresh takes the log anew") {
    val (_, url) = table()
    val df = spark.read.parquet(url)
    val index = indexOf(df).get.asInstanceOf[LogFileIndex]
    val before = index.files.size
    spark.range(7).coalesce(1).selectExpr("id", "cast(1 as int) as k", "'a' as s").write.mode("append")
      .partitionBy("k", "s").parquet(url)
    assert(df.count() == 47)
    assert(index.files.size == before)
    index.refresh()
    assert(index.files.size == before + 1)
    assert(spark.read.parquet(url).count() == 54)
  }

  test("a statement reads each table from one snapshot: a multi-insert shares one exchange, a self-join one relation") {
    val dir = Files.createTempDirectory("txcommit-one-snapshot")
    val url = dir.resolve("src").toUri.toString
    spark.range(42).write.parquet(url)
    val names = Seq("one_snapshot_src", "one_snapshot_a", "one_snapshot_b")
    try {
      spark.sql(s"CREATE TABLE ${names(0)} USING parquet LOCATION '$url'")
      for (n <- names.tail) spark.sql(s"CREATE TABLE $n (id BIGINT) USING parquet LOCATION '${dir.resolve(n).toUri}'")
      spark.conf.set("spark.sql.adaptive.enabled", "false") // the exchanges as planned, not as AQE runs them
      val df =
        try spark.sql(s"""FROM (SELECT /*+ REPARTITION(3) */ id FROM ${names(0)})
                         |INSERT INTO ${names(1)} SELECT id
                         |INSERT INTO ${names(2)} SELECT id""".stripMargin)
        finally spark.conf.unset("spark.sql.adaptive.enabled")
      val reused = df.queryExecution.executedPlan.collect {
        case c: org.apache.spark.sql.execution.CommandResultExec => c.commandPhysicalPlan.collect {
            case r: org.apache.spark.sql.execution.exchange.ReusedExchangeExec => r
          }.size
      }
      assert(reused == Seq(1), "the second INSERT reuses the first one's exchange of the source's scan")
      for (n <- names.tail) assert(spark.table(n).count() == 42)
      val join = spark.sql(s"SELECT a.id FROM parquet.`$url` a JOIN parquet.`$url` b ON a.id = b.id")
      val relations = join.queryExecution.analyzed.collect { case l: LogicalRelation => l.relation }
      assert(relations.size == 2 && relations.distinct.size == 1 && indexOf(join).exists(_.isInstanceOf[LogFileIndex]),
        "both sides read the table from one snapshot, with the same files")
      assert(join.count() == 42)
    } finally names.foreach(n => spark.sql(s"DROP TABLE IF EXISTS $n"))
  }

  test("an overwrite of a table the query reads is refused, as Spark refuses it") {
    val url = Files.createTempDirectory("txcommit-self-overwrite").resolve("t").toUri.toString
    spark.range(10).selectExpr("cast(id as string) as a", "cast(id as int) as b").write.parquet(url)
    val names =
      Seq("self_overwrite_empty", "self_overwrite_logged", "self_overwrite_managed", "self_overwrite_bucketed")
    try {
      spark.sql(s"CREATE TABLE ${names(0)} (a STRING, b INT) USING parquet")
      spark.sql(s"CREATE TABLE ${names(1)} USING parquet LOCATION '$url'")
      spark.sql(s"CREATE TABLE ${names(2)} USING parquet AS SELECT * FROM parquet.`$url`")
      // a bucketed table is listed by Spark, not planned from the log
      spark.sql(
        s"CREATE TABLE ${names(3)} USING parquet CLUSTERED BY (b) INTO 2 BUCKETS AS SELECT * FROM parquet.`$url`")
      spark.sql(s"CREATE OR REPLACE TEMPORARY VIEW self_overwrite_view USING parquet OPTIONS (path '$url')")
      val writes = names.flatMap(n =>
        Seq(
          s"saveAsTable $n" -> (() => spark.table(n).write.mode("overwrite").saveAsTable(n)),
          s"INSERT OVERWRITE $n" -> (() => spark.sql(s"INSERT OVERWRITE TABLE $n SELECT a, b FROM $n")),
          s"insertInto $n" -> (() => spark.table(n).write.mode("overwrite").insertInto(n)))) :+
        ("INSERT OVERWRITE a view" ->
          (() => spark.sql("INSERT OVERWRITE TABLE self_overwrite_view SELECT a, b FROM self_overwrite_view")))
      val notRefused = writes.flatMap { case (what, write) =>
        scala.util.Try(write()).failed.toOption match {
          case Some(e: org.apache.spark.sql.AnalysisException) if e.getCondition.startsWith("UNSUPPORTED_OVERWRITE.") =>
            None
          case other => Some(s"$what: ${other.fold("no error")(_.toString)}")
        }
      }
      assert(notRefused.isEmpty)
      assert(names.map(spark.table(_).count()) == Seq(0, 10, 10, 10), "nothing was written or lost")
    } finally {
      names.foreach(n => spark.sql(s"DROP TABLE IF EXISTS $n"))
      spark.sql("DROP VIEW IF EXISTS self_overwrite_view")
    }
  }

  test("a table dropped and created again under its name is read anew, whatever its log's numbers") {
    val name = "recreated_table"
    spark.conf.set("spark.txcommit.checkpoint.interval", "1") // checkpoint 1 covers the one write, both times
    try for (bucketed <- Seq(false, true); round <- 1 to 2) {
        spark.sql(s"DROP TABLE IF EXISTS $name")
        spark.sql(
          s"CREATE TABLE $name (id BIGINT) USING parquet" + (if (bucketed) " CLUSTERED BY (id) INTO 2 BUCKETS" else ""))
        spark.range(round * 10L).write.insertInto(name)
        assert(spark.table(name).count() == round * 10L, s"round $round, bucketed $bucketed")
      }
    finally {
      spark.conf.unset("spark.txcommit.checkpoint.interval")
      spark.sql(s"DROP TABLE IF EXISTS $name")
    }
  }

  test("a root holding a streaming sink's log is read through that log, as Spark reads it") {
    val (dir, url) = table()
    Files.createDirectories(dir.resolve("_spark_metadata"))
    Files.write(dir.resolve("_spark_metadata/0"), "v1\n".getBytes("UTF-8"))
    val df = spark.read.schema("id BIGINT, k INT, s STRING").parquet(url)
    assert(!indexOf(df).exists(_.isInstanceOf[LogFileIndex]) && df.count() == 0, "the sink's log names no file")
  }
}
