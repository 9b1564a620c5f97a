package io.txcommit.commit

import java.io.IOException

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.log.RecordCodec
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class PublishCommitRecordSuite extends AnyFunSuite {
  test("creates commits/<txn>.json exclusively with the encoded record") {
    val t = new MemTable
    val ctx = t.context()
    val rec = t.record(ctx.txn, "a", "k=1/b")
    PublishCommitRecord.run(ctx, rec, new StageTimings)
    assert(t.store.calls.map(_._1) == Seq(Op.CreateExclusive))
    assert(RecordCodec.decode(t.store.read(t.layout.commitRecord(ctx.txn)).get, "r", ctx.txn) == rec)
  }

  test("an existing record is a conflict naming the transaction, and stays untouched") {
    val t = new MemTable
    val ctx = t.context()
    val first = t.record(ctx.txn, "a").copy(token = "first")
    t.commit(first)
    val before = t.store.read(t.layout.commitRecord(ctx.txn)).get
    val e = intercept[CommitConflictException](
      PublishCommitRecord.run(ctx, t.record(ctx.txn, "b").copy(token = "zombie"), new StageTimings))
    assert(e.getMessage.contains(s"txn ${ctx.txn}") && e.getMessage.contains("already committed"))
    assert(java.util.Arrays.equals(t.store.read(t.layout.commitRecord(ctx.txn)).get, before))
  }

  test("an error after the record landed is not a failure when the record is this job's own") {
    val t = new MemTable
    val ctx = t.context(token = "mine")
    t.store.failOn(Op.CreateExclusive, afterEffect = true)
    PublishCommitRecord.run(ctx, t.record(ctx.txn, "a").copy(token = "mine"), new StageTimings)
    assert(t.store.exists(t.layout.commitRecord(ctx.txn)))
  }

  test("a publish retried after its answer was lost meets its own record: committed, not a conflict") {
    // The SDK resends a PUT whose answer it lost; the resend's If-None-Match: * meets the object
    // the first attempt created and gets 412.
    val t = new MemTable
    val ctx = t.context(token = "mine")
    t.store.failOn(Op.CreateExclusive, afterEffect = true, error = why => new CommitConflictException(why))
    val rec = t.record(ctx.txn, "a").copy(token = "mine")
    PublishCommitRecord.run(ctx, rec, new StageTimings)
    assert(RecordCodec.decode(t.store.read(t.layout.commitRecord(ctx.txn)).get, "r", ctx.txn) == rec)
  }

  test("an error whose outcome cannot be read back is ambiguous: the job must keep its files") {
    val t = new MemTable
    val ctx = t.context(token = "mine")
    t.store.failOn(Op.CreateExclusive, afterEffect = true)
    t.store.failAlways(Op.Read, t.layout.commitRecord(ctx.txn))
    val e = intercept[io.txcommit.CommitOutcomeUnknownException](
      PublishCommitRecord.run(ctx, t.record(ctx.txn, "a").copy(token = "mine"), new StageTimings))
    assert(e.getMessage.contains(s"txn ${ctx.txn}") && e.getMessage.contains("may have committed"))
  }

  test("an error before the record landed fails the stage: nothing is committed") {
    val t = new MemTable
    val ctx = t.context()
    t.store.failOn(Op.CreateExclusive)
    intercept[IOException](PublishCommitRecord.run(ctx, t.record(ctx.txn, "a"), new StageTimings))
    assert(!t.store.exists(t.layout.commitRecord(ctx.txn)))
  }
}
