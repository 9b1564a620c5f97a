package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.log.{CommitRecord, RecordCodec, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

/**
 * Alone against the in-memory store. Files a replacing commit removes from its scope are found
 * by listing data through Hadoop, which this store does not hold: `log.ReplaceSuite` covers
 * them on a local table.
 */
class PublishReplaceRecordSuite extends AnyFunSuite {
  private def request(t: MemTable, txn: String, intent: WriteIntent, base: ReplaceBase, files: String*) =
    ReplaceRequest(t.record(txn, files: _*), intent, base)

  test("the first replacing commit takes sequence 1 and records its operation and scope") {
    val t = new MemTable
    val ctx = t.context()
    val rec = PublishReplaceRecord.run(ctx,
      request(t, ctx.txn, WriteIntent(staticScopes = Seq("k=1")),
        ReplaceBase(0L, Set.empty), "k=1/a"), new StageTimings)
    assert(rec.sequence.contains(1L) && rec.operation == CommitRecord.OverwritePartitions)
    assert(rec.replacement.get.scope == Seq("k=1"))
    assert(RecordCodec.decodeReplacement(t.store.read(t.layout.replaceRecord(1L)).get, "r", 1L) == rec)
  }

  test("after a disjoint commit since the base it takes the next number") {
    val t = new MemTable
    t.commitReplacing(TxnId.generate(), 1, Seq("k=2"))
    val ctx = t.context()
    val rec = PublishReplaceRecord.run(ctx,
      request(t, ctx.txn, WriteIntent(dynamicPartitions = true),
        ReplaceBase(0L, Set.empty), "k=1/a"), new StageTimings)
    assert(rec.sequence.contains(2L))
  }

  test("an overlapping commit since the base is a conflict naming it; nothing is published") {
    val t = new MemTable
    val winner = TxnId.generate()
    t.commitReplacing(winner, 1, Seq(""))
    val ctx = t.context()
    val e = intercept[CommitConflictException](PublishReplaceRecord.run(ctx,
        request(t, ctx.txn, WriteIntent(dynamicPartitions = true), ReplaceBase(0L, Set.empty), "k=1/a"),
        new StageTimings))
    assert(e.getMessage.contains(winner) && e.getMessage.contains("the whole table"))
    assert(!t.store.exists(t.layout.replaceRecord(2L)))
  }

  test("a sequence number lost to a rival is retried with the next check") {
    val t = new MemTable
    val ctx = t.context(token = "mine")
    val rival = TxnId.generate()
    // The rival (a disjoint partition) takes sequence 1 just before this job's create of it.
    t.store.failOn(Op.CreateExclusive, nth = 1,
      error = why => {
        t.commitReplacing(rival, 1, Seq("k=2")); new CommitConflictException(why)
      })
    val rec = PublishReplaceRecord.run(ctx,
      ReplaceRequest(t.record(ctx.txn, "k=1/a").copy(token = "mine"),
        WriteIntent(dynamicPartitions = true), ReplaceBase(0L, Set.empty)), new StageTimings)
    assert(rec.sequence.contains(2L))
    assert(RecordCodec.decodeReplacement(t.store.read(t.layout.replaceRecord(1L)).get, "r", 1L).txn == rival)
  }

  test("a write id re-run removes what the earlier run added; an ambiguous publish of its own record succeeds") {
    val t = new MemTable
    t.commitReplacing(TxnId.generate(), 1, Nil, Some("run-1"), files = Seq("k=1/old", "k=2/old"))
    val ctx = t.context(token = "mine")
    t.store.failOn(Op.CreateExclusive, afterEffect = true)
    val rec = PublishReplaceRecord.run(ctx,
      ReplaceRequest(t.record(ctx.txn, "k=3/new").copy(token = "mine"),
        WriteIntent(writeId = Some("run-1")), ReplaceBase(1L, Set.empty)), new StageTimings)
    assert(rec.removed.map(_.path) == Seq("k=1/old", "k=2/old") && rec.operation == CommitRecord.WriteIdOp)
    assert(t.store.exists(t.layout.replaceRecord(2L)))
  }

  test("a write id's first run whose publish landed but was answered with a conflict commits once") {
    // The lost-answer retry: the record at sequence 1 is this job's own. Taking sequence 2 would
    // count the job's own record as an earlier run of its write id and remove its own files.
    val t = new MemTable
    val ctx = t.context(token = "mine")
    t.store.failOn(Op.CreateExclusive, afterEffect = true, error = why => new CommitConflictException(why))
    val rec = PublishReplaceRecord.run(ctx,
      ReplaceRequest(t.record(ctx.txn, "k=1/new").copy(token = "mine"),
        WriteIntent(writeId = Some("run-1")), ReplaceBase(0L, Set.empty)), new StageTimings)
    assert(rec.sequence.contains(1L) && rec.removed.isEmpty)
    assert(!t.store.exists(t.layout.replaceRecord(2L)), "one record per transaction")
  }

  test("a replacing commit whose own record is already in replace/ returns it instead of publishing again") {
    val t = new MemTable
    val ctx = t.context(token = "mine")
    val req = ReplaceRequest(t.record(ctx.txn, "k=1/new").copy(token = "mine"),
      WriteIntent(writeId = Some("run-1")), ReplaceBase(0L, Set.empty))
    val first = PublishReplaceRecord.run(ctx, req, new StageTimings)
    val again = PublishReplaceRecord.run(ctx, req, new StageTimings)
    assert(again == first && !t.store.exists(t.layout.replaceRecord(2L)))
  }

  test("a record of this transaction with another token (a second driver) is a conflict") {
    val t = new MemTable
    val ctx = t.context(token = "mine")
    val other = t.context(token = "other-driver").copy(txn = ctx.txn)
    PublishReplaceRecord.run(other,
      ReplaceRequest(t.record(ctx.txn, "k=1/a").copy(token = "other-driver"),
        WriteIntent(writeId = Some("run-1")), ReplaceBase(0L, Set.empty)), new StageTimings)
    val e = intercept[CommitConflictException](PublishReplaceRecord.run(ctx,
        ReplaceRequest(
          t.record(ctx.txn, "k=1/b").copy(token = "mine"), WriteIntent(writeId = Some("run-1")),
          ReplaceBase(0L, Set.empty)), new StageTimings))
    assert(e.getMessage.contains(ctx.txn) && e.getMessage.contains("another driver"))
  }
}
