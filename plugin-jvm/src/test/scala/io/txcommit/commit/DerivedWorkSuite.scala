package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{DataFileName, RecordCodec, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

/** Everything after the commit point, as JobCommitter and RollForward run it. */
class DerivedWorkSuite extends AnyFunSuite {
  test("copies and writes _SUCCESS before the job returns, cleans up after it, timing each stage") {
    val t = new MemTable
    val txn = TxnId.generate()
    val won = DataFileName("", 0, txn, 1L, ".parquet")
    val lost = DataFileName("", 0, txn, 2L, ".parquet")
    Seq(won, lost).foreach(t.put(_))
    val rec = t.record(txn, won)
    t.commit(rec)
    t.conf.set(io.txcommit.conf.TxCommitConf.CheckpointInterval, "1")
    val timings = new StageTimings
    val later = Seq.newBuilder[() => Unit]
    DerivedWork(t.context(txn), rec, timings, cleanup = work => later += work)
    // The job returns with _SUCCESS and the checkpoint written, the clean-up still to run.
    assert(timings.all.map(_._1) == Seq("copy-replace-record", "write-success-summary", "write-checkpoint"))
    assert(t.store.exists(t.path(lost)))
    later.result().foreach(_())
    assert(timings.all.map(_._1).drop(3) == Seq("cleanup-attempts", "cleanup-staging"))
    assert(t.store.exists(t.layout.checkpoint(1L)))
    assert(!t.store.exists(t.path(lost)))
    assert(RecordCodec.successTxn(t.store.read(t.layout.success).get).contains(txn))
  }

  test("a failure in derived work never fails the commit") {
    for (op <- Seq(Op.List, Op.Delete, Op.WriteReplacing)) {
      val t = new MemTable
      val txn = TxnId.generate()
      t.put(DataFileName("", 0, txn, 2L, ".parquet"))
      val rec = t.record(txn)
      t.commit(rec)
      t.store.failOn(op, times = Int.MaxValue)
      DerivedWork(t.context(txn), rec, new StageTimings, DerivedWork.Inline) // must not throw
      assert(t.store.exists(t.layout.commitRecord(txn)), op)
    }
  }
}
