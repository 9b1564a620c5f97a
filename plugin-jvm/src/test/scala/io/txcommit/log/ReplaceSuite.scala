package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, CorruptCommitRecordException, InvalidConfException}
import io.txcommit.testing.TempTable
import io.txcommit.commit.{PublishReplaceRecord, ReplaceBase, ReplaceRequest, StageTimings, WriteIdPolicy, WriteIntent}
import io.txcommit.log._
import io.txcommit.read.CommittedFilesFilter

/** Record format 2, the replacement log, scope overlap, conflicts and the reader rule. */
class ReplaceSuite extends AnyFunSuite {
  private val txn = TxnId.generate()
  private val replacing = CommitRecord(txn, "tok", "job", 10L, 20L, Seq(AddedFile("k=1/a.parquet", 5L)),
    None, "w", CommitRecord.OverwritePartitions, Some("daily:2026-11-20"),
    Some(Replacement(7L, Seq("k=1"), Seq(RemovedFile("k=1/old.parquet", 3L), RemovedFile("k=1/x", 4L)))))

  test("a v2 replacing record survives encode and decode, fields in the spec's order") {
    val bytes = RecordCodec.encode(replacing)
    assert(RecordCodec.decode(bytes, "r.json", txn) == replacing)
    assert(RecordCodec.decodeReplacement(bytes, "r.json", 7L) == replacing)
    val text = new String(bytes, UTF_8)
    val order = Seq("\"added\"", "\"operation\"", "\"writeId\"", "\"sequence\"", "\"scope\"",
      "\"removedFiles\" : 2", "\"removedBytes\" : 7", "\"removed\"").map(text.indexOf)
    assert(order.forall(_ >= 0) && order == order.sorted, text)
  }

  test("an append is version 2 with operation append and no replacement fields") {
    val append = replacing.copy(operation = CommitRecord.Append, writeId = None, replacement = None)
    val text = new String(RecordCodec.encode(append), UTF_8)
    assert(text.contains("\"version\" : 2") && text.contains("\"operation\" : \"append\""))
    assert(!text.contains("sequence") && !text.contains("removed"))
  }

  test("removed paths obey the safety rules; counts must agree; sequence must match the name") {
    val text = new String(RecordCodec.encode(replacing), UTF_8)
    def bad(t: String) = intercept[CorruptCommitRecordException](RecordCodec.decode(t.getBytes(UTF_8), "r.json", txn))
    assert(bad(text.replace("k=1/old.parquet", "../../etc/passwd")).getMessage.contains("outside its table"))
    assert(bad(text.replace("\"removedFiles\" : 2", "\"removedFiles\" : 3")).getMessage.contains("declares 3 removed"))
    assert(bad(text.replace("daily:2026-11-20", "bad id")).getMessage.contains("writeId"))
    assert(bad(text.replace("overwrite-partitions", "truncate")).getMessage.contains("operation"))
    assert(intercept[CorruptCommitRecordException](
        RecordCodec.decodeReplacement(RecordCodec.encode(replacing), "r.json", 8L)).getMessage.contains("sequence 8"))
  }

  test("replacement log names are 20 zero-padded digits") {
    assert(LogLayout.replaceRecordName(1L) == "00000000000000000001.json")
    assert(LogLayout.sequenceOfRecordName("00000000000000000042.json").contains(42L))
    assert(LogLayout.sequenceOfRecordName("42.json").isEmpty)
    assert(LogLayout.sequenceOfRecordName(".00000000000000000001.json.tmp").isEmpty)
  }

  test("scopes overlap when one directory equals or contains the other; the table overlaps all") {
    assert(ReplaceLog.overlaps("", "k=1"))
    assert(ReplaceLog.overlaps("k=1", "k=1"))
    assert(ReplaceLog.overlaps("k=1", "k=1/j=2"))
    assert(!ReplaceLog.overlaps("k=1", "k=10"))
    assert(!ReplaceLog.overlaps("k=1/j=2", "k=1/j=3"))
    assert(!ReplaceLog.scopesOverlap(Nil, Seq("")))
  }

  test("write ids: 1..200 of [A-Za-z0-9._:@=+-]") {
    assert(WriteId.problem("daily-2026-11-20").isEmpty)
    assert(WriteId.problem("a" * 200).isEmpty)
    assert(WriteId.problem("").isDefined && WriteId.problem("a" * 201).isDefined)
    assert(WriteId.problem("a b").isDefined && WriteId.problem("a/b").isDefined)
  }

  /** A table with a committed append in k=0 and k=1 and a plain file in k=1. */
  private final class Table {
    val t = new TempTable
    val first: String = TxnId.generate()
    val f0: String = "k=0/" + DataFileName("", 0, first, 1L, ".parquet")
    val f1: String = "k=1/" + DataFileName("", 1, first, 2L, ".parquet")
    val plain = "k=1/part-00009-plain.parquet"
    Seq(f0, f1, plain).foreach(t.touch(_))
    t.commit(t.record(first, f0, f1))

    def filter: CommittedFilesFilter = {
      val conf = new org.apache.hadoop.conf.Configuration(t.conf)
      conf.set(io.txcommit.conf.TxCommitConf.MaxClockSkewMs, "0") // one clock: the suite is the writer
      val f = new CommittedFilesFilter
      f.setConf(conf)
      f
    }
    def visible(rel: String): Boolean = filter.accept(new Path(t.table, rel))

    /** Commits a replacing txn that wrote `files`, as PublishReplaceRecord does. */
    def replace(intent: WriteIntent, base: ReplaceBase, files: String*): (String, CommitRecord) = {
      val id = TxnId.generate()
      val named = files.map(f => f.replace("TXN", id))
      named.foreach(t.touch(_))
      val ctx = t.context(id)
      val rec = PublishReplaceRecord.run(ctx,
        ReplaceRequest(t.record(id, named: _*), intent, base), new StageTimings)
      (id, rec)
    }
    def base: ReplaceBase = {
      val s = new TableState(t.table, t.store, t.conf)
      ReplaceBase(s.replaceLog.highest, s.commitTxns)
    }
  }

  test("an overwrite of a partition removes its visible files, plain ones included, and nothing else") {
    val tb = new Table
    val (id, rec) = tb.replace(WriteIntent(staticScopes = Seq("k=1")), tb.base, "k=1/part-00000-tid-TXN-5.parquet")
    assert(rec.sequence.contains(1L) && rec.operation == CommitRecord.OverwritePartitions)
    assert(rec.removed.map(_.path).toSet == Set(tb.f1, tb.plain))
    assert(tb.t.store.exists(tb.t.layout.replaceRecord(1L)))
    assert(!tb.visible(tb.f1) && !tb.visible(tb.plain), "removed files are hidden, with or without a txn id")
    assert(tb.visible(tb.f0), "outside the scope")
    assert(tb.visible(s"k=1/part-00000-tid-$id-5.parquet"), "committed by its replace record alone")
  }

  test("a replacing commit after the base that overlaps fails naming the winner; others pass") {
    val tb = new Table
    val base = tb.base
    val (winner, _) = tb.replace(WriteIntent(dynamicPartitions = true), base, "k=1/part-00000-tid-TXN-5.parquet")
    val e = intercept[CommitConflictException] {
      tb.replace(WriteIntent(staticScopes = Seq("")), base, "k=2/part-00000-tid-TXN-6.parquet")
    }
    assert(e.getMessage.contains(winner) && e.getMessage.contains("sequence 1"))
    val (_, other) = tb.replace(WriteIntent(dynamicPartitions = true), base, "k=0/part-00000-tid-TXN-7.parquet")
    assert(other.sequence.contains(2L), "a disjoint partition commits after the winner")
  }

  test("replacing commits racing for one sequence number all land, each with its own number") {
    val tb = new Table
    val base = tb.base
    val pool = java.util.concurrent.Executors.newFixedThreadPool(8)
    try {
      val futures = (0 until 8).map { i =>
        pool.submit(new java.util.concurrent.Callable[CommitRecord] {
          override def call(): CommitRecord =
            tb.replace(WriteIntent(dynamicPartitions = true), base, s"p=$i/part-00000-tid-TXN-$i.parquet")._2
        })
      }
      val seqs = futures.map(_.get().sequence.getOrElse(0L))
      assert(seqs.sorted == (1L to 8L), "disjoint scopes never conflict; the numbers are a total order")
    } finally pool.shutdown()
    // ... while an overlapping one based before them all loses to the first that overlaps.
    val e = intercept[CommitConflictException](
      tb.replace(WriteIntent(staticScopes = Seq("p=3")), base, "p=3/part-00001-tid-TXN-9.parquet"))
    assert(e.getMessage.contains("p=3"))
  }

  test("an append committed after a replacing job started survives its overwrite") {
    val tb = new Table
    val base = tb.base
    val late = TxnId.generate()
    val lateFile = "k=1/" + DataFileName("", 0, late, 3L, ".parquet")
    tb.t.touch(lateFile)
    tb.t.commit(tb.t.record(late, lateFile))
    val (_, rec) = tb.replace(WriteIntent(staticScopes = Seq("")), base, "k=1/part-00000-tid-TXN-5.parquet")
    assert(!rec.removed.exists(_.path == lateFile) && tb.visible(lateFile))
    assert(rec.removed.map(_.path).toSet == Set(tb.f0, tb.f1, tb.plain))
  }

  test("a write id re-run removes exactly what the earlier run with that id added") {
    val tb = new Table
    val intent = WriteIntent(writeId = Some("run-1"))
    val (_, first) = tb.replace(intent, tb.base, "k=1/part-00000-tid-TXN-5.parquet", "k=2/part-00001-tid-TXN-6.parquet")
    val (_, second) = tb.replace(intent, tb.base, "k=3/part-00000-tid-TXN-7.parquet")
    assert(first.operation == CommitRecord.WriteIdOp && first.removed.isEmpty)
    assert(second.removed.map(_.path).toSet == first.added.map(_.path).toSet)
    assert(tb.visible(tb.f1) && tb.visible(tb.plain), "other data is untouched")
    assert(first.added.forall(f => !tb.visible(f.path)))
    // The same id racing: the second run to commit, based before the first, conflicts.
    val stale = ReplaceBase(0L, Set(tb.first))
    assert(intercept[CommitConflictException](tb.replace(intent, stale, "k=4/part-00000-tid-TXN-8.parquet"))
        .getMessage.contains("run-1"))
  }

  test("write-id policies are read from writer options (any case) and session confs") {
    val conf = new org.apache.hadoop.conf.Configuration(false)
    conf.set("txcommit.writeid", "x")
    conf.set("spark.txcommit.writeIdPolicy", "SKIP")
    assert(WriteIntent.writeId(conf).contains("x") && WriteIntent.policy(conf) == WriteIdPolicy.Skip)
    conf.set("txcommit.writeIdPolicy", "maybe")
    assert(intercept[InvalidConfException](WriteIntent.policy(conf)).getMessage.contains("maybe"))
  }
}
