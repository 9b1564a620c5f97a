package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.DataFileName
import io.txcommit.store.StagedFile
import io.txcommit.testing.InMemoryCommitStore.Op
import io.txcommit.testing.MemTable

class AbortTransactionSuite extends AnyFunSuite {
  private def files(t: MemTable, txn: String): Seq[StagedFile] =
    Seq("k=1/", "").map(d => d + DataFileName("", 0, txn, 1L, ".parquet")).map { rel =>
      t.put(rel); StagedFile(rel, 3L)
    }

  test("an uncommitted transaction: records the abort and discards its files, never one outside the table") {
    val t = new MemTable
    val ctx = t.context()
    val fs = files(t, ctx.txn)
    t.put("x")
    assert(AbortTransaction.run(ctx, fs :+ StagedFile("k=1/../x", 3L), new StageTimings) == 2)
    assert(fs.forall(f => !t.store.exists(t.path(f.path))) && t.store.exists(t.path("x")))
    assert(t.text(t.layout.abortedRecord(ctx.txn)).exists(_.contains("aborted")))
  }

  test("a committed transaction, in commits/ or in replace/: abort removes nothing") {
    val t = new MemTable
    val (a, b) = (t.context(), t.context())
    val fa = files(t, a.txn); val fb = files(t, b.txn)
    t.commit(t.record(a.txn, fa.map(_.path): _*))
    t.commitReplacing(b.txn, 1, Seq(""), files = fb.map(_.path))
    assert(AbortTransaction.run(a, fa, new StageTimings) == 0)
    assert(AbortTransaction.run(b, fb, new StageTimings) == 0)
    assert((fa ++ fb).forall(f => t.store.exists(t.path(f.path))))
    assert(!t.store.exists(t.layout.abortedRecord(a.txn)))
  }

  test("failures writing the marker or discarding are logged, not thrown; files may be kept on request") {
    val t = new MemTable
    val ctx = t.context()
    val fs = files(t, ctx.txn)
    t.store.failOn(Op.WriteReplacing)
    t.store.failOn(Op.DiscardData)
    assert(AbortTransaction.run(ctx, fs, new StageTimings) == 0)
    t.conf.set(TxCommitConf.KeepAbortedFiles, "true")
    assert(AbortTransaction.run(ctx, fs, new StageTimings) == 0)
    assert(t.store.exists(t.path(fs(1).path)))
  }
}
