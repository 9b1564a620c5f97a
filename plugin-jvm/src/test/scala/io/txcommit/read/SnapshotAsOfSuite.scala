package io.txcommit.read

import java.nio.file.Files
import java.nio.file.attribute.FileTime

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.TimeTravelException
import io.txcommit.log.{
  AddedFile,
  Checkpoint,
  CheckpointCodec,
  CommitRecord,
  LogLayout,
  RecordCodec,
  RemovedFile,
  Replacement,
  TableVersions,
  TxnId
}
import io.txcommit.conf.TxCommitConf
import io.txcommit.testing.{InMemoryCommitStore, TempTable, Vectors}
import io.txcommit.testing.InMemoryCommitStore.Op

/**
 * The table as of a version (docs/protocol.md, I30) against the in-memory store: the snapshot
 * holds exactly the versions up to the one named, a checkpoint only when it folds in nothing
 * later, what names no version or a snapshot VACUUM took files of fails, and resolving costs the
 * log listings of a read of now and no listing of data.
 */
class SnapshotAsOfSuite extends AnyFunSuite {

  /** a, b appended; r overwrites a's file (sequence 1); c appended: four versions. */
  private final class Log {
    val table = new Path("file:/mem/t")
    val layout: LogLayout = LogLayout(table)
    val store = new InMemoryCommitStore()
    private def file(txn: String) = s"k=1/part-00000-tid-$txn-0.parquet"
    private def rec(txn: String, at: Long) =
      CommitRecord(txn, "tok", "job", at - 1, at, Seq(AddedFile(file(txn), 3L)), None, "test")
    def append(): String = {
      val txn = TxnId.generate()
      store.createExclusive(layout.commitRecord(txn), RecordCodec.encode(rec(txn, 10L)))
      txn
    }
    val a: String = append()
    val b: String = append()
    val r: String = TxnId.generate()
    val removing: CommitRecord = rec(r, 20L).copy(operation = CommitRecord.Overwrite,
      replacement = Some(Replacement(1L, Seq("k=1"), Seq(RemovedFile(file(a), 3L)))))
    store.createExclusive(layout.replaceRecord(1L), RecordCodec.encode(removing))
    store.createExclusive(layout.commitRecord(r), RecordCodec.encode(removing))
    val c: String = append()

    def at(txn: String): SnapshotAsOf.Resolved =
      SnapshotAsOf.resolve(table, store, TableVersions.AsOfTxn(txn), "txcommit.asOf", ignoreCorrupt = false).get
  }

  test("each version's snapshot holds exactly the versions up to it") {
    val x = new Log
    def of(t: String) = { val s = x.at(t).snapshot; (s.through, s.appends.toSet) }
    assert(of(x.a) == ((0L, Set(x.a))))
    assert(of(x.b) == ((0L, Set(x.a, x.b))))
    assert(of(x.r) == ((1L, Set(x.a, x.b))))
    assert(of(x.c) == ((1L, Set(x.a, x.b, x.c))))
    assert(x.at(x.c).versions.versions.map(_.txn) == Vector(x.a, x.b, x.r, x.c))
  }

  test("a checkpoint is applied only to the versions it folds in all of") {
    val x = new Log
    val covering = Checkpoint(1L, 30L, None, "test", 1L,
      Map(x.a -> Vector.empty, x.b -> Vector(AddedFile(s"k=1/part-00000-tid-${x.b}-0.parquet", 3L)),
        x.r -> Vector.empty), Vector.empty)
    x.store.createExclusive(x.layout.checkpoint(1L), CheckpointCodec.encode(covering))
    assert(x.at(x.b).snapshot.checkpoint == 0L, "it folds in r, later than b")
    assert(x.at(x.r).snapshot.checkpoint == 1L && x.at(x.r).snapshot.appends.isEmpty)
    assert(x.at(x.c).snapshot.checkpoint == 1L && x.at(x.c).snapshot.appends == Vector(x.c))
  }

  test("resolving lists the log as a read of now does, and nothing of the data") {
    val x = new Log
    val logDirs = Set(x.layout.commitsDir, x.layout.checkpointsDir, x.layout.replaceDir)
    def listed(txn: String): Seq[Path] = {
      val before = x.store.calls.size
      x.at(txn)
      x.store.calls.drop(before).collect { case (Op.List, p) => p }
    }
    assert(listed(x.c).toSet == logDirs && listed(x.c).size == 3)
    // A snapshot from before r's removal also asks whether VACUUM took the file: one more LIST.
    assert(listed(x.a).toSet == logDirs + x.layout.vacuumDir && listed(x.a).size == 4)
  }

  test("a snapshot holding a file VACUUM deleted fails naming the horizon; newer ones resolve") {
    val x = new Log
    x.store.createExclusive(x.layout.vacuumHorizon(21L), "{}".getBytes("UTF-8"))
    val e = intercept[TimeTravelException](x.at(x.b))
    assert(e.getMessage.contains(x.b) && e.getMessage.contains("VACUUM") &&
      e.getMessage.contains("1970-01-01T00:00:00.021Z") && e.getMessage.contains("/mem/t"))
    assert(x.at(x.r).snapshot.through == 1L)
    // A horizon before the removal's commit: VACUUM kept the file.
    val y = new Log
    y.store.createExclusive(y.layout.vacuumHorizon(20L), "{}".getBytes("UTF-8"))
    assert(y.at(y.b).snapshot.appends.toSet == Set(y.a, y.b))
  }

  // The tables of conformance/vectors/versions.json, read at each asOf: Python's
  // test_time_travel.py holds txcommit.dataset(as_of=...) to the same answers.
  for (c <- Vectors.elements(Vectors.json("versions.json").get("tables"))) {
    test(s"vectors: ${c.get("name").asText()}: ${c.get("about").asText()}") {
      val t = new TempTable
      val files = Vectors.placeFiles(t, c)
      def place(rel: String, bytes: Array[Byte], storeTime: Option[Long]): Unit = {
        t.writeRaw(rel, "")
        val f = t.dir.resolve(rel)
        Files.write(f, bytes)
        storeTime.foreach(ms => Files.setLastModifiedTime(f, FileTime.fromMillis(ms)))
      }
      for (r <- Vectors.elements(c.get("records")))
        place(r.get("file").asText(), RecordCodec.encode(Vectors.record(r.get("record"))),
          Some(r.get("storeTime").asLong()))
      for (k <- Vectors.elements(c.get("checkpoints"))) {
        val n = k.get("checkpoint")
        place(k.get("file").asText(), CheckpointCodec.encode(Vectors.checkpoint(n, n.get("checkpoint").asLong())), None)
      }
      for (h <- Vectors.elements(c.get("vacuum")))
        place(s"_txcommit/vacuum/${LogLayout.replaceRecordName(h.asLong())}", "{}".getBytes("UTF-8"), None)
      for (read <- Vectors.elements(c.get("reads"))) {
        val value = read.get("asOf").asText()
        val asOf = AsOfOption(TableVersions.parseAsOf(value).get, "txcommit.asOf")
        val conf = new Configuration(t.conf)
        // As a read: the snapshot from the log, then the data listed and checked against it.
        def snapshot(): Unit = LogFirstSnapshot.forRoots(Seq(t.table), conf, Some(asOf)).foreach { h =>
          conf.set(TxCommitConf.SnapshotOption, h.encode)
          val listed = t.table.getFileSystem(conf).listFiles(t.table, true)
          val data = Iterator.continually(listed).takeWhile(_.hasNext).map(_.next()).toSeq
          AsOfListing.of(h).foreach { case (root, l) => l.verify(root, Seq(t.table), data, conf) }
        }
        Vectors.text(read, "error") match {
          case Some(fragment) =>
            val e = intercept[TimeTravelException](snapshot())
            assert(e.getMessage.contains(fragment) && e.getMessage.contains(value), e.getMessage)
          case None =>
            snapshot()
            val filter = new CommittedFilesFilter
            filter.setConf(conf)
            val visible = files.filter(f => filter.accept(new Path(t.table, f)))
            assert(visible.sorted == Vectors.elements(read.get("visible")).map(_.asText()).sorted, value)
        }
      }
    }
  }

  test("a fenced, unknown or pending transaction names no snapshot") {
    val x = new Log
    val fenced = TxnId.generate()
    x.store.createExclusive(x.layout.commitRecord(fenced),
      RecordCodec.encode(
        CommitRecord(fenced, "tok", "job", 1L, 2L, Nil, None, "test", operation = CommitRecord.Fence)))
    assert(intercept[TimeTravelException](x.at(fenced)).getMessage.contains("fenced"))
    val pending = TxnId.generate()
    x.store.createExclusive(x.layout.pendingRecord(pending), "{}".getBytes("UTF-8"))
    assert(intercept[TimeTravelException](x.at(pending)).getMessage.contains("not committed"))
  }
}
