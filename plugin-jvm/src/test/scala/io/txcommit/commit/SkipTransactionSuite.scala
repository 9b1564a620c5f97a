package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{DataFileName, TxnId}
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class SkipTransactionSuite extends AnyFunSuite {
  private def setup() = {
    val t = new MemTable(staging = true)
    val earlier = TxnId.generate()
    val rec = t.commitReplacing(earlier, 1, Nil, Some("run-1"))
    val ctx = t.context()
    val staged =
      Seq(0, 1).map(i => t.store.stage(t.table, DataFileName("", i, ctx.txn, i.toLong, ".parquet"), Array[Byte](1)))
    (t, ctx, rec, staged)
  }

  test("commits nothing, discards the job's data and says why in aborted/<txn>.json") {
    val (t, ctx, earlier, staged) = setup()
    assert(SkipTransaction.run(ctx, (staged, earlier), new StageTimings) == 2)
    assert(t.store.openUploads(t.table).isEmpty)
    assert(!t.store.exists(t.layout.commitRecord(ctx.txn)))
    val marker = t.text(t.layout.abortedRecord(ctx.txn)).get
    assert(marker.contains("skipped") && marker.contains(earlier.txn) && marker.contains("run-1"))
  }

  test("a marker that cannot be written does not stop the data from being discarded") {
    val (t, ctx, earlier, staged) = setup()
    t.store.failAlways(Op.WriteReplacing, t.layout.abortedRecord(ctx.txn))
    assert(SkipTransaction.run(ctx, (staged, earlier), new StageTimings) == 2)
    assert(t.store.openUploads(t.table).isEmpty)
  }
}
