package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{FencedException, TaskFileMissingException}
import io.txcommit.log.{Fence, LogLayout, RecordCodec, TxnId}
import io.txcommit.store.StagedFile
import io.txcommit.testing.MemTable

class TaskManifestSuite extends AnyFunSuite {
  private val Txn = TxnId.generate()

  test("names every file the attempt wrote, with its size") {
    val t = new MemTable
    val written = Seq("k=1/a" -> t.put("k=1/a", 5), "b" -> t.put("b", 7))
    assert(TaskManifest.of(t.store, t.table, Txn, "attempt_1", written) ==
      TaskManifest("attempt_1", Seq(StagedFile("k=1/a", 5L), StagedFile("b", 7L))))
  }

  test("a file deleted under the task fails the attempt, naming the file, never a smaller manifest") {
    val t = new MemTable
    val written = Seq("a" -> t.put("a"), "b" -> t.put("b"))
    t.store.delete(t.path("b"))
    val e = intercept[TaskFileMissingException](TaskManifest.of(t.store, t.table, Txn, "attempt_2", written))
    assert(e.getMessage.contains("attempt_2") && e.getMessage.contains(t.path("b").toString.stripPrefix("file:")))
    assert(e.getMessage.contains("Spark retries it"))
  }

  test("a file VACUUM deleted after fencing the transaction fails the attempt as fenced, not as a missing file") {
    val t = new MemTable
    val written = Seq("a" -> t.put("a"))
    val fence = Fence.record(Txn, Fence.ByVacuum, System.currentTimeMillis())
    t.store.createExclusive(LogLayout(t.table).commitRecord(Txn), RecordCodec.encode(fence))
    t.store.delete(t.path("a"))
    val e = intercept[FencedException](TaskManifest.of(t.store, t.table, Txn, "attempt_3", written))
    assert(e.getMessage.contains("fenced by VACUUM") && e.getMessage.contains(Txn))
    assert(e.getCondition == "TXCOMMIT_FENCED" && e.getSqlState == "40000")
  }

  test("another transaction's fence does not make a missing file a fence") {
    val t = new MemTable
    val other = TxnId.generate()
    t.store.createExclusive(LogLayout(t.table).commitRecord(other),
      RecordCodec.encode(Fence.record(other, Fence.ByVacuum, System.currentTimeMillis())))
    val written = Seq("a" -> t.put("a"))
    t.store.delete(t.path("a"))
    intercept[TaskFileMissingException](TaskManifest.of(t.store, t.table, Txn, "attempt_4", written))
  }
}
