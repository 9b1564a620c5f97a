package io.txcommit.streaming

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.commit.{PublishCommitRecord, StageTimings}
import io.txcommit.testing.MemTable

/** Two drivers of one streaming query running one batch, alone against the in-memory store. */
class ClaimStreamingBatchSuite extends AnyFunSuite {
  private def claim(t: MemTable, ctx: io.txcommit.commit.TxnContext, batch: Long = 7L) =
    ClaimStreamingBatch.run(ctx, batch, new StageTimings)

  private def owner(t: MemTable, k: Int, batch: Long = 7L): Option[String] =
    t.store.read(new Path(ClaimStreamingBatch.claimsDir(t.table, batch), s"$k.json"))
      .flatMap(TxCommitSinkProtocol.markerTxn)

  test("the first driver claims the batch; claiming again is idempotent") {
    val t = new MemTable
    val ctx = t.context()
    assert(claim(t, ctx).isEmpty && claim(t, ctx).isEmpty)
    assert(owner(t, 0).contains(ctx.txn) && owner(t, 1).isEmpty)
  }

  test("a replacement driver fences a stalled owner before taking over; the stalled commit loses") {
    val t = new MemTable
    val stalled = t.context()
    assert(claim(t, stalled).isEmpty)
    val replacement = t.context()
    assert(claim(t, replacement).isEmpty, "the batch is taken over")
    assert(owner(t, 1).contains(replacement.txn))
    PublishCommitRecord.run(replacement, t.record(replacement.txn, "part-a"), new StageTimings)
    val e = intercept[CommitConflictException](
      PublishCommitRecord.run(stalled, t.record(stalled.txn, "part-b"), new StageTimings))
    assert(e.getMessage.contains("another driver of the same streaming query"))
    assert(t.store.read(t.layout.commitRecord(replacement.txn)).isDefined)
  }

  test("a driver that meets a committed owner adopts its commit (a replay after a crash)") {
    val t = new MemTable
    val first = t.context()
    claim(t, first)
    val rec = t.record(first.txn, "part-a")
    PublishCommitRecord.run(first, rec, new StageTimings)
    val replay = t.context()
    assert(claim(t, replay).contains(rec))
    assert(owner(t, 1).isEmpty, "nothing taken over")
  }
}
