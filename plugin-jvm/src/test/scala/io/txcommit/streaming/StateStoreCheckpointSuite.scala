package io.txcommit.streaming

import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.streaming.SparkStreamingApi.CancellableFSDataOutputStream
import io.txcommit.streaming.SparkStreamingTestApi.memoryStream

/** The txcommit manager, recording what Spark asked it to create (and with which overwrite). */
class RecordingCheckpointFileManager(path: Path, conf: Configuration)
  extends TxCommitCheckpointFileManager(path, conf) {
  override def createAtomic(p: Path, overwriteIfPossible: Boolean): CancellableFSDataOutputStream = {
    RecordingCheckpointFileManager.created.add(s"${p.getParent.getName}/${p.getName}" -> overwriteIfPossible)
    super.createAtomic(p, overwriteIfPossible)
  }
}

object RecordingCheckpointFileManager {
  val created = new ConcurrentLinkedQueue[(String, Boolean)]()
}

/**
 * Spark 4.3's own stateful streaming through the txcommit manager: offset and commit logs,
 * the HDFS-backed state store (delta and snapshot files) and the RocksDB state store (zip and
 * changelog files). A query is stopped and restarted from its checkpoint; the state it reads
 * back must be what it wrote.
 */
class StateStoreCheckpointSuite extends AnyFunSuite with BeforeAndAfterAll {
  private lazy val spark = SparkSession.builder().master("local[2]").appName("txcommit-state")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.streaming.stateStore.minDeltasForSnapshot", "1")
    .config("spark.sql.streaming.stateStore.maintenanceInterval", "100ms")
    .config(TxCommitCheckpointFileManager.ConfKey, classOf[RecordingCheckpointFileManager].getName)
    .getOrCreate()

  override protected def afterAll(): Unit =
    try spark.stop()
    finally super.afterAll()

  private def runTwice(provider: String, extra: Map[String, String]): (Seq[(String, Boolean)], Map[Int, Long]) = {
    val session = spark.newSession()
    session.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
    extra.foreach { case (k, v) => session.conf.set(k, v) }
    RecordingCheckpointFileManager.created.clear()
    val ckpt = Files.createTempDirectory("txcommit-state").toUri.toString
    val input = memoryStream[Int](session)(session.implicits.newIntEncoder)
    def start(sink: String) = input.toDF().groupBy((col("value") % 3).as("k")).count()
      .writeStream.format("memory").queryName(sink).outputMode("complete")
      .option("checkpointLocation", ckpt).start()
    val q1 = start("first")
    input.addData(1, 2, 3); q1.processAllAvailable()
    input.addData(4, 5); q1.processAllAvailable()
    input.addData(6, 7); q1.processAllAvailable()
    q1.stop()
    val q2 = start("second") // restarted from the checkpoint: state comes from its files
    input.addData(8, 9); q2.processAllAvailable()
    q2.stop()
    val counts = session.table("second").collect().map(r => r.getInt(0) -> r.getLong(1)).toMap
    (RecordingCheckpointFileManager.created.asScala.toSeq, counts)
  }

  private val expected = (1 to 9).groupBy(_ % 3).map { case (k, v) => k -> v.size.toLong }

  test(
    "offset and commit logs are exclusive; the HDFS-backed state store's deltas and snapshots go through the manager") {
    val (created, counts) = runTwice(
      "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", Map.empty)
    assert(counts == expected)
    assert(created.contains("offsets/0" -> false) && created.contains("commits/0" -> false))
    assert(created.exists { case (n, o) => n.endsWith(".delta") && o })
    assert(created.exists { case (n, _) => n.endsWith(".snapshot") }, created)
  }

  test("the RocksDB state store's checkpoint zips and changelogs go through the manager") {
    val (created, counts) = runTwice(
      "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
      Map("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled" -> "true"))
    assert(counts == expected)
    assert(created.contains("offsets/0" -> false) && created.contains("commits/0" -> false))
    assert(created.exists { case (n, o) => n.endsWith(".changelog") && o }, created)
    assert(created.exists { case (n, _) => n.endsWith(".zip") }, created)
  }
}
