package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.testing.MemTable

class StartTransactionSuite extends AnyFunSuite {
  test("records the start in pending/<txn>.json, exclusively") {
    val t = new MemTable
    val ctx = t.context()
    StartTransaction.run(ctx, false, new StageTimings)
    val marker = t.text(t.layout.pendingRecord(ctx.txn)).get
    assert(marker.contains(ctx.txn) && marker.contains("\"pending\""))
    intercept[CommitConflictException](StartTransaction.run(ctx, false, new StageTimings))
  }
}
