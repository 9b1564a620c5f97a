package io.txcommit.spark

import java.nio.file.Files

import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.read.SnapshotHandle
import io.txcommit.testing.PluginSessions

/**
 * Multi-table transactions through Spark itself (a classic session, as a `spark-submit` job runs
 * them): TXCOMMIT BEGIN / COMMIT around writes of two tables, and the reads of a query over both
 * taking one log-first snapshot together, whether it names them by path or from the catalog
 * (docs/protocol.md, I35).
 */
class TransactionReadsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = PluginSessions.builder("txcommit-transactions").getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def newTable(): String =
    Files.createTempDirectory("txcommit-tx").resolve("t").toUri.toString.stripSuffix("/")

  private def snapshots(df: org.apache.spark.sql.DataFrame): Seq[String] =
    df.queryExecution.analyzed.collect { case l: LogicalRelation => l.relation }.collect {
      case r: HadoopFsRelation => r.options.getOrElse(TxCommitConf.SnapshotOption, "")
    }

  test("a classic job's TXCOMMIT BEGIN and COMMIT make its writes of two tables visible together") {
    val (a, b) = (newTable(), newTable())
    spark.range(3).write.parquet(a)
    spark.range(3).write.parquet(b)
    spark.sql("TXCOMMIT BEGIN").collect()
    spark.range(10, 13).write.mode("append").parquet(a)
    spark.range(20, 22).write.mode("overwrite").parquet(b)
    val both = spark.read.parquet(a).union(spark.read.parquet(b))
    assert(both.count() == 6, "before COMMIT: both tables as they were")
    val done = spark.sql("TXCOMMIT COMMIT").collect().head
    assert(done.getAs[String]("outcome") == "committed" && done.getAs[Int]("writes") == 2)
    assert(spark.read.parquet(a).union(spark.read.parquet(b)).count() == 8)
  }

  test("the reads of one query over two tables take one snapshot, by path and from the catalog") {
    val (a, b) = (newTable(), newTable())
    spark.range(3).write.parquet(a)
    spark.range(3).write.parquet(b)
    spark.sql(s"CREATE TABLE tx_reads_b USING parquet LOCATION '$b'")
    try {
      // One statement is analyzed whole (as a Connect client's DataFrame plan is); a classic
      // DataFrame read is analyzed when it is created, on its own.
      for (df <- Seq(spark.sql(s"SELECT id FROM parquet.`$a` UNION ALL SELECT id FROM parquet.`$b`"),
          spark.sql(s"SELECT id FROM parquet.`$a` UNION ALL SELECT id FROM tx_reads_b"))) {
        val taken = snapshots(df)
        assert(taken.size == 2 && taken.distinct.size == 1, s"one snapshot for both relations: $taken")
        val handle = SnapshotHandle.decode(taken.head).toOption.flatten.get
        assert(handle.tables.map(_.root).toSet == Set(a, b).map(u => new org.apache.hadoop.fs.Path(u).toString))
      }
      // A read alone takes its own.
      val single = snapshots(spark.read.parquet(a))
      assert(SnapshotHandle.decode(single.head).toOption.flatten.get.tables.size == 1)
    } finally spark.sql("DROP TABLE tx_reads_b")
  }

  test("DataFrame reads analyzed apart read a transaction committed between them in both tables, or in neither") {
    val (a, b, c) = (newTable(), newTable(), newTable())
    Seq(a, b, c).foreach(spark.range(3).write.parquet(_))
    // Each classic DataFrame read is analyzed (and listed) when it is created, as each read of a
    // Connect plan is before the plan: A's and C's before the transaction, B's after it.
    val (dfA, dfC) = (spark.read.parquet(a), spark.read.parquet(c))
    spark.sql("TXCOMMIT BEGIN").collect()
    spark.range(10, 12).write.mode("append").parquet(a)
    spark.range(20, 22).write.mode("append").parquet(b)
    spark.sql("TXCOMMIT COMMIT").collect()
    val dfB = spark.read.parquet(b)
    assert(dfA.count() == 3 && dfB.count() == 5, "each read alone: its own snapshot")
    val all = dfA.union(dfB).union(dfC)
    assert(all.count() == 13, "A's part must hold the transaction B's part holds (3 + 2, 3 + 2, 3)")
    val taken = snapshots(all)
    assert(taken.size == 3 && taken.distinct.size == 1, s"one snapshot for the plan's reads: $taken")
    val index = (df: org.apache.spark.sql.DataFrame) =>
      df.queryExecution.analyzed.collect { case l: LogicalRelation => l.relation }.collect {
        case r: HadoopFsRelation => r.location
      }
    assert(index(all)(2) eq index(dfC).head, "C did not change between the snapshots: not listed again")
    assert(!(index(all).head eq index(dfA).head), "A changed: listed again")
  }
}
