package io.txcommit.commit

import java.io.IOException

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.log.TxnId
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class PublishDataSuite extends AnyFunSuite {
  test("staged data becomes final (listed) only here, and a second run completes nothing twice") {
    val t = new MemTable(staging = true)
    val ctx = t.context()
    val staged =
      (0 until 3).map(i => t.store.stage(t.table, s"k=1/part-0000$i-tid-${ctx.txn}-$i.parquet", Array[Byte](1, 2)))
    assert(t.store.list(t.path("k=1")).isEmpty)
    PublishData.run(ctx, staged, new StageTimings)
    assert(t.store.list(t.path("k=1")).map(_.getLen) == Seq(2L, 2L, 2L))
    val completed = t.store.requests.snapshot("MULTIPART_COMPLETE")
    PublishData.run(ctx, staged, new StageTimings)
    assert(t.store.requests.snapshot("MULTIPART_COMPLETE") == completed)
  }

  test("a store failure fails the stage (before the commit point, so the job is not committed)") {
    val t = new MemTable(staging = true)
    val ctx = t.context(TxnId.generate())
    val staged = Seq(t.store.stage(t.table, "a", Array[Byte](1)), t.store.stage(t.table, "b", Array[Byte](1)))
    t.store.failOn(Op.PublishData, _ == t.path("b"))
    intercept[IOException](PublishData.run(ctx, staged, new StageTimings))
    assert(!t.store.exists(t.layout.commitRecord(ctx.txn)))
  }
}
