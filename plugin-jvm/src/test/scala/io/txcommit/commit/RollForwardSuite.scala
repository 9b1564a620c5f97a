package io.txcommit.commit

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.testing.TempTable
import io.txcommit.commit.{RollForward, StageTimings}
import io.txcommit.log.{DataFileName, RecordCodec, TxnId}

class RollForwardSuite extends AnyFunSuite {
  test("derived work of a commit whose driver died after the record is rolled forward") {
    val t = new TempTable
    val txn = TxnId.generate()
    val won = "k=1/" + DataFileName("", 0, txn, 1L, "-c000.parquet")
    val lost = "k=1/" + DataFileName("", 0, txn, 2L, "-c000.parquet")
    Seq(won, lost).foreach(t.touch(_))
    t.commit(t.record(txn, won))
    assert(!t.store.exists(t.layout.success))

    val rolled = RollForward.run(t.context(), (), new StageTimings)

    assert(rolled.contains(txn))
    assert(RecordCodec.successTxn(t.store.read(t.layout.success).get).contains(txn))
    assert(t.store.exists(new Path(t.table, won)))
    assert(!t.store.exists(new Path(t.table, lost)), "the failed attempt's file is cleaned up")
    // and a second roll-forward finds nothing to do
    assert(RollForward.run(t.context(), (), new StageTimings).isEmpty)
    assert(new String(t.store.read(t.layout.success).get, UTF_8).contains("\"files\" : 1"))
  }
}

/** RollForward alone against the in-memory store. */
class RollForwardInMemorySuite extends AnyFunSuite {
  import io.txcommit.testing.InMemoryCommitStore.Op
  import io.txcommit.testing.MemTable

  test("only the newest commit is rolled forward, and only while _SUCCESS names another txn") {
    val t = new MemTable
    val (old, newest) = (TxnId.generate(), TxnId.generate())
    t.commit(t.record(old)); t.commit(t.record(newest))
    assert(RollForward.run(t.context(), (), new StageTimings).contains(newest))
    assert(RollForward.run(t.context(), (), new StageTimings).isEmpty)
  }

  test("a failing store or a corrupt record never blocks the new write") {
    val t = new MemTable
    val txn = TxnId.generate()
    t.store.createExclusive(t.layout.commitRecord(txn), "{\"format\" : \"txcommit-commit-rec".getBytes(UTF_8))
    assert(RollForward.run(t.context(), (), new StageTimings).isEmpty)
    t.store.failOn(Op.List, times = Int.MaxValue)
    assert(RollForward.run(t.context(), (), new StageTimings).isEmpty)
  }
}
