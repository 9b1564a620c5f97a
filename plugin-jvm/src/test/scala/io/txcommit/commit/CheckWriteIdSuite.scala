package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.WriteIdCommittedException
import io.txcommit.log.TxnId
import io.txcommit.testing.MemTable

class CheckWriteIdSuite extends AnyFunSuite {
  test("without a write id it finds nothing and reads nothing") {
    val t = new MemTable
    assert(CheckWriteId.run(t.context(), WriteIntent(), new StageTimings).isEmpty)
    assert(t.store.calls.isEmpty)
  }

  test("finds the newest earlier run with the write id, not its own transaction or other ids") {
    val t = new MemTable
    val (a, b, me) = (TxnId.generate(), TxnId.generate(), TxnId.generate())
    t.commitReplacing(a, 1, Nil, Some("run-1"))
    t.commitReplacing(b, 2, Nil, Some("run-1"))
    t.commitReplacing(TxnId.generate(), 3, Nil, Some("run-2"))
    t.commitReplacing(me, 4, Nil, Some("run-1"))
    val found = CheckWriteId.run(t.context(me), WriteIntent(writeId = Some("run-1")), new StageTimings)
    assert(found.map(_.txn).contains(b))
    assert(CheckWriteId.run(t.context(), WriteIntent(writeId = Some("run-3")), new StageTimings).isEmpty)
  }

  test("policy fail: an earlier run fails the job, naming it and the way out; skip and replace report it") {
    val t = new MemTable
    val earlier = TxnId.generate()
    t.commitReplacing(earlier, 1, Nil, Some("run-1"))
    val e = intercept[WriteIdCommittedException](CheckWriteId.run(t.context(),
        WriteIntent(writeId = Some("run-1"), policy = WriteIdPolicy.Fail), new StageTimings))
    assert(e.getMessage.contains(earlier) && e.getMessage.contains(WriteIntent.WriteIdPolicyOption))
    for (p <- Seq(WriteIdPolicy.Skip, WriteIdPolicy.Replace)) {
      assert(CheckWriteId.run(t.context(), WriteIntent(writeId = Some("run-1"), policy = p), new StageTimings)
          .map(_.txn).contains(earlier))
    }
  }
}
