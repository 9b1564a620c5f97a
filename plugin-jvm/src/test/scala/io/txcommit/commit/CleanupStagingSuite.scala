package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.{DataFileName, TxnId}
import io.txcommit.testing.MemTable

class CleanupStagingSuite extends AnyFunSuite {
  test("forgets the staged uploads of this transaction its record does not name, and only those") {
    val t = new MemTable(staging = true)
    val ctx = t.context()
    val won = t.store.stage(t.table, DataFileName("", 0, ctx.txn, 1L, ".parquet"), Array[Byte](1))
    t.store.stage(t.table, DataFileName("", 0, ctx.txn, 2L, ".parquet"), Array[Byte](1))
    val otherTxn = t.store.stage(t.table, DataFileName("", 0, TxnId.generate(), 3L, ".parquet"), Array[Byte](1))
    val record = t.record(ctx.txn, won.path)
    assert(CleanupStaging.run(ctx, record, new StageTimings) == 1)
    assert(t.store.openUploads(t.table).map(_.path).toSet == Set(won.path, otherTxn.path))
    assert(CleanupStaging.run(ctx, record, new StageTimings) == 0)
  }
}
