package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{Fence, RecordCodec, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class CopyReplaceRecordSuite extends AnyFunSuite {
  test("writes commits/<txn>.json with the bytes of the replacing record, once") {
    val t = new MemTable
    val rec = t.commitReplacing(TxnId.generate(), 1, Seq("k=1"), files = Seq("k=1/a"))
    CopyReplaceRecord.run(t.context(rec.txn), rec, new StageTimings)
    assert(java.util.Arrays.equals(t.store.read(t.layout.commitRecord(rec.txn)).get, RecordCodec.encode(rec)))
    val writes = t.store.calls.count(_._1 == Op.WriteReplacing)
    CopyReplaceRecord.run(t.context(rec.txn), rec, new StageTimings)
    assert(t.store.calls.count(_._1 == Op.WriteReplacing) == writes, "an existing copy is not rewritten")
  }

  test("the copy is created exclusively: a fence VACUUM publishes meanwhile is never overwritten blindly") {
    val t = new MemTable
    val rec = t.commitReplacing(TxnId.generate(), 1, Seq("k=1"), files = Seq("k=1/a"))
    CopyReplaceRecord.run(t.context(rec.txn), rec, new StageTimings)
    assert(
      t.store.calls.exists(c => c._1 == Op.CreateExclusive && c._2 == t.layout.commitRecord(rec.txn)),
      "commits/<txn>.json is created with the exclusive primitive")
    assert(!t.store.calls.exists(c => c._1 == Op.WriteReplacing && c._2 == t.layout.commitRecord(rec.txn)),
      "no plain PUT where no copy existed")
  }

  test("a fence in commits/ of a replacing commit that won at replace/ is replaced by the copy") {
    val t = new MemTable
    val txn = TxnId.generate()
    // VACUUM fenced the append commit point, then lost at replace/ to the commit
    Fence.fenceAppend(t.layout, t.store, Fence.record(txn, Fence.ByVacuum, 5L))
    val rec = t.commitReplacing(txn, 1, Seq("k=1"), files = Seq("k=1/a"))
    CopyReplaceRecord.run(t.context(txn), rec, new StageTimings)
    val copy = RecordCodec.decode(t.store.read(t.layout.commitRecord(txn)).get, "copy", txn)
    assert(!copy.isFence && copy.isReplacing, s"commits/$txn.json still holds VACUUM's fence")
    assert(java.util.Arrays.equals(t.store.read(t.layout.commitRecord(txn)).get, RecordCodec.encode(rec)))
  }

  test("a fence in commits/ stays when replace/ does not hold the record being copied") {
    val t = new MemTable
    val txn = TxnId.generate()
    val fence = Fence.record(txn, Fence.ByVacuum, 5L)
    Fence.fenceAppend(t.layout, t.store, fence)
    val other = t.commitReplacing(TxnId.generate(), 1, Seq("k=1"), files = Seq("k=1/b"))
    val rec = other.copy(txn = txn) // names a sequence that another transaction holds
    intercept[io.txcommit.CommitConflictException](CopyReplaceRecord.run(t.context(txn), rec, new StageTimings))
    assert(RecordCodec.decode(t.store.read(t.layout.commitRecord(txn)).get, "fence", txn).isFence)
  }

  test("an append has nothing to copy") {
    val t = new MemTable
    val rec = t.record(TxnId.generate(), "a")
    CopyReplaceRecord.run(t.context(rec.txn), rec, new StageTimings)
    assert(t.store.paths.isEmpty)
  }
}
