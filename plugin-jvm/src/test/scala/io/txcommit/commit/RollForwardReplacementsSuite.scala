package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.TxnId
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class RollForwardReplacementsSuite extends AnyFunSuite {
  test("writes the missing commits/<txn>.json of replacing commits, and only those") {
    val t = new MemTable
    val a = t.commitReplacing(TxnId.generate(), 1, Seq("k=1"))
    val b = t.commitReplacing(TxnId.generate(), 2, Seq("k=2"))
    CopyReplaceRecord.run(t.context(a.txn), a, new StageTimings)
    assert(RollForwardReplacements.run(t.context(), (), new StageTimings) == 1)
    assert(t.store.exists(t.layout.commitRecord(b.txn)))
    assert(RollForwardReplacements.run(t.context(), (), new StageTimings) == 0)
  }

  test("a failing store never blocks the new write") {
    val t = new MemTable
    t.commitReplacing(TxnId.generate(), 1, Seq("k=1"))
    t.store.failOn(Op.List, times = Int.MaxValue)
    assert(RollForwardReplacements.run(t.context(), (), new StageTimings) == 0)
  }
}
