package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointCodec, CheckpointLog, DataFileName, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

/** The derived checkpoint stage, alone against an in-memory store. */
class WriteCheckpointSuite extends AnyFunSuite {
  private def committed(t: MemTable, n: Int): Seq[String] = (1 to n).map { i =>
    val txn = TxnId.generate()
    val f = DataFileName("", i, txn, i.toLong, ".parquet")
    t.put(f)
    t.commit(t.record(txn, f))
    txn
  }

  test("with interval 1 every commit writes the next checkpoint, covering every committed transaction") {
    val t = new MemTable
    t.conf.set(TxCommitConf.CheckpointInterval, "1")
    val txns = committed(t, 3)
    val first = WriteCheckpoint.run(t.context(txns.last), t.record(txns.last), new StageTimings)
    assert(first.flatMap(_.written).map(c => (c.number, c.committed.keySet)) == Some((1L, txns.toSet)))
    val more = committed(t, 2)
    val second = WriteCheckpoint.run(t.context(more.last), t.record(more.last), new StageTimings)
    assert(second.flatMap(_.written).map(c => (c.number, c.committed.keySet)) == Some((2L, (txns ++ more).toSet)))
    val stored = CheckpointCodec.decode(t.store.read(t.layout.checkpoint(2L)).get, "cp", 2L)
    assert(stored.committed.keySet == (txns ++ more).toSet)
  }

  test("with interval 0 no commit writes one") {
    val t = new MemTable
    t.conf.set(TxCommitConf.CheckpointInterval, "0")
    val txns = committed(t, 2)
    assert(WriteCheckpoint.run(t.context(txns.last), t.record(txns.last), new StageTimings).isEmpty)
    assert(CheckpointLog.list(t.layout, t.store.list).highest == 0L)
  }

  test("a checkpoint another writer published first is not an error: this commit writes none") {
    val t = new MemTable
    t.conf.set(TxCommitConf.CheckpointInterval, "1")
    val txns = committed(t, 2)
    t.store.failOn(Op.CreateExclusive, _ == t.layout.checkpoint(1L),
      error = p => new io.txcommit.CommitConflictException(s"$p exists"))
    val out = WriteCheckpoint.run(t.context(txns.last), t.record(txns.last), new StageTimings)
    assert(out.exists(o => o.written.isEmpty && o.why.contains("first")))
  }
}
