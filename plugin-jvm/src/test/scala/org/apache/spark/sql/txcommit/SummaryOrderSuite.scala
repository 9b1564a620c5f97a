package org.apache.spark.sql.txcommit

import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.apache.hadoop.fs.{FileStatus, Path}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.commit.{StageTimings, WriteSuccessSummary}
import io.txcommit.log.TxnId
import io.txcommit.store.{AdapterDeclaration, CommitStore, StagedFile}
import io.txcommit.testing.MemTable

/**
 * `_SUCCESS` is the newest commit's summary. The row count of an older commit arrives later, on
 * Spark's listener thread, and is added to `_SUCCESS` only while it still is that commit's
 * summary: a newer commit's summary landing meanwhile must never be replaced by the older one.
 */
class SummaryOrderSuite extends AnyFunSuite {

  /** Delegates to `inner`; runs `onRead` (once) when `_SUCCESS` is read. */
  private final class HookedStore(inner: CommitStore, success: Path, onRead: () => Unit) extends CommitStore {
    @volatile private var fired = false
    override def declaration: AdapterDeclaration = inner.declaration
    override def createExclusive(target: Path, bytes: Array[Byte]): Unit = inner.createExclusive(target, bytes)
    override def writeReplacing(target: Path, bytes: Array[Byte]): Unit = inner.writeReplacing(target, bytes)
    override def read(path: Path): Option[Array[Byte]] = {
      val r = inner.read(path)
      if (path == success && !fired) { fired = true; onRead() }
      r
    }
    override def list(dir: Path): Seq[FileStatus] = inner.list(dir)
    override def exists(path: Path): Boolean = inner.exists(path)
    override def delete(path: Path): Boolean = inner.delete(path)
    override def stagedFile(table: Path, rel: String, written: Path): Option[StagedFile] =
      inner.stagedFile(table, rel, written)
  }

  private def summaryTxn(t: MemTable): String =
    new com.fasterxml.jackson.databind.ObjectMapper().readTree(t.store.read(t.layout.success).get).path("txn").asText()

  test("an older commit's row count never replaces a newer commit's summary written meanwhile") {
    val t = new MemTable
    val older = t.record(TxnId.generate(), "a")
    val newer = t.record(TxnId.generate(), "b")
    WriteSuccessSummary.run(t.context(older.txn), (older, new StageTimings), new StageTimings)
    // The newer commit's job thread writes its summary while the listener holds the older one's.
    val landed = new CountDownLatch(1)
    val newerWrite = new Thread(() => {
      WriteSuccessSummary.run(t.context(newer.txn), (newer, new StageTimings), new StageTimings)
      landed.countDown()
    })
    val store = new HookedStore(t.store, t.layout.success,
      () => {
        newerWrite.start()
        landed.await(500, TimeUnit.MILLISECONDS) // serialised writers wait for the count instead
      })
    RowCounts.addToSummary(store, t.layout, older.txn, 7L)
    newerWrite.join(10000)
    assert(summaryTxn(t) == newer.txn, "_SUCCESS holds the older commit's summary over the newer one's")
  }

  test("the count is added while the summary is still the commit's own, and only then") {
    val t = new MemTable
    val rec = t.record(TxnId.generate(), "a")
    WriteSuccessSummary.run(t.context(rec.txn), (rec, new StageTimings), new StageTimings)
    assert(RowCounts.addToSummary(t.store, t.layout, rec.txn, 7L))
    assert(new com.fasterxml.jackson.databind.ObjectMapper().readTree(t.store.read(t.layout.success).get).path(
      "rows").asLong() == 7L)
    assert(!RowCounts.addToSummary(t.store, t.layout, TxnId.generate(), 9L))
    assert(!RowCounts.addToSummary(t.store, t.layout, rec.txn, 9L), "a count is added once")
  }
}
