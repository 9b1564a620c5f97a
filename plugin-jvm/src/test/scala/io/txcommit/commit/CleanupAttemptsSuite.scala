package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{DataFileName, TxnId}
import io.txcommit.testing.MemTable

class CleanupAttemptsSuite extends AnyFunSuite {
  private final class Layout {
    val t = new MemTable
    val txn: String = TxnId.generate()
    val other: String = TxnId.generate()
    val won: String = "k=1/" + DataFileName("", 0, txn, 1L, ".parquet")
    val lost: String = "k=1/" + DataFileName("", 0, txn, 2L, ".parquet")
    val lostTop: String = DataFileName("", 1, txn, 3L, ".parquet")
    val wonTop: String = DataFileName("", 1, txn, 4L, ".parquet")
    val foreign: String = "k=1/" + DataFileName("", 0, other, 5L, ".parquet")
    val plain = "k=1/part-00000-plain.parquet"
    Seq(won, lost, lostTop, wonTop, foreign, plain).foreach(t.put(_))
    val record = t.record(txn, won, wonTop)
  }

  test("deletes this transaction's files its record does not name, in every directory it wrote") {
    val l = new Layout
    assert(CleanupAttempts.run(l.t.context(l.txn), l.record, new StageTimings) == 2)
    assert(!l.t.store.exists(l.t.path(l.lost)) && !l.t.store.exists(l.t.path(l.lostTop)))
    for (kept <- Seq(l.won, l.wonTop, l.foreign, l.plain)) assert(l.t.store.exists(l.t.path(kept)), kept)
  }

  test("switched off, it deletes nothing; a second run finds nothing") {
    val l = new Layout
    l.t.conf.set(TxCommitConf.CleanupAttempts, "false")
    assert(CleanupAttempts.run(l.t.context(l.txn), l.record, new StageTimings) == 0)
    assert(l.t.store.exists(l.t.path(l.lost)))
    l.t.conf.set(TxCommitConf.CleanupAttempts, "true")
    assert(CleanupAttempts.run(l.t.context(l.txn), l.record, new StageTimings) == 2)
    assert(CleanupAttempts.run(l.t.context(l.txn), l.record, new StageTimings) == 0)
  }
}
