package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.log.TxnId
import io.txcommit.testing.MemTable

class CheckConflictsSuite extends AnyFunSuite {
  private def request(t: MemTable, txn: String, intent: WriteIntent, base: Long, files: String*) =
    ReplaceRequest(t.record(txn, files: _*), intent, ReplaceBase(base, Set.empty))

  test("an overlapping replacing commit made after the job started fails it, naming the winner") {
    val t = new MemTable
    val winner = TxnId.generate()
    t.commitReplacing(winner, 1, Seq("k=1"))
    val me = TxnId.generate()
    val e = intercept[CommitConflictException](CheckConflicts.run(t.context(me),
        request(t, me, WriteIntent(dynamicPartitions = true), 0L, "k=1/f"), new StageTimings))
    assert(e.getMessage.contains(winner) && e.getMessage.contains("sequence 1"))
    assert(!t.store.paths.exists(_.toString.contains(me)), "nothing of this job is written")
  }

  test("commits before the base, disjoint scopes and other write ids pass; the same write id conflicts") {
    val t = new MemTable
    t.commitReplacing(TxnId.generate(), 1, Seq(""))
    t.commitReplacing(TxnId.generate(), 2, Seq("k=2"), Some("other"))
    val me = TxnId.generate()
    CheckConflicts.run(t.context(me), request(t, me, WriteIntent(dynamicPartitions = true), 1L, "k=1/f"),
      new StageTimings)
    CheckConflicts.run(t.context(me), request(t, me, WriteIntent(writeId = Some("mine")), 1L, "k=1/f"),
      new StageTimings)
    intercept[CommitConflictException](CheckConflicts.run(t.context(me),
        request(t, me, WriteIntent(writeId = Some("other")), 1L, "k=1/f"), new StageTimings))
  }
}
