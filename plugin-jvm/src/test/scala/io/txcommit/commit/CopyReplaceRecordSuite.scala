package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{RecordCodec, TxnId}
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

  test("an append has nothing to copy") {
    val t = new MemTable
    val rec = t.record(TxnId.generate(), "a")
    CopyReplaceRecord.run(t.context(rec.txn), rec, new StageTimings)
    assert(t.store.paths.isEmpty)
  }
}
