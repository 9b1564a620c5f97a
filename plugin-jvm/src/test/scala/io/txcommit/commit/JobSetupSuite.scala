package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.InvalidConfException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CommitRecord, RecordCodec, Replacement, TxnId}
import io.txcommit.testing.TempTable

/** Job setup's one sequence, for a batch job and for a streaming micro-batch. */
class JobSetupSuite extends AnyFunSuite {

  /** A table whose newest commit's driver died before `_SUCCESS`: a roll-forward writes it. */
  private def tableToRollForward(): (TempTable, String) = {
    val t = new TempTable
    val txn = TxnId.generate()
    t.commit(t.record(txn))
    (t, txn)
  }

  private def successTxn(t: TempTable): Option[String] = t.store.read(t.layout.success).flatMap(RecordCodec.successTxn)

  test("a batch job rolls the table forward, starts its transaction and a heartbeat") {
    val (t, earlier) = tableToRollForward()
    val ctx = t.context()
    val started = JobSetup.run(ctx, WriteIntent(), streaming = false)
    try {
      assert(successTxn(t).contains(earlier), "the earlier commit's _SUCCESS was rolled forward")
      assert(t.store.exists(t.layout.pendingRecord(ctx.txn)))
      assert(started.heartbeat.isDefined && !started.nesting.createsTable)
    } finally started.heartbeat.foreach(_.stop())
  }

  test("a streaming micro-batch starts its transaction only: no roll-forward, no heartbeat") {
    val (t, _) = tableToRollForward()
    val ctx = t.context()
    val started = JobSetup.run(ctx, WriteIntent(), streaming = true)
    assert(successTxn(t).isEmpty, "a micro-batch must not list every commit record to roll forward")
    assert(t.store.exists(t.layout.pendingRecord(ctx.txn)))
    assert(started.heartbeat.isEmpty)
  }

  test("a replacing job starts from the replace log as it stands, its copies rolled forward") {
    val t = new TempTable
    val prior = TxnId.generate()
    val replacing = t.record(prior).copy(operation = CommitRecord.Overwrite,
      replacement = Some(Replacement(3L, Seq(""), Nil)))
    t.store.createExclusive(t.layout.replaceRecord(3L), RecordCodec.encode(replacing))
    val started = JobSetup.run(t.context(), WriteIntent(staticScopes = Seq("")), streaming = false)
    started.heartbeat.foreach(_.stop())
    assert(started.base == ReplaceBase(3L, Set(prior)))
    assert(t.store.exists(t.layout.commitRecord(prior)), "the dead driver's commits/ copy was written")
  }

  test("a bad fault-point name fails the setup before anything is written") {
    val t = new TempTable
    t.conf.set(TxCommitConf.HaltAt, "job.nowhere")
    val ctx = t.context()
    intercept[InvalidConfException](JobSetup.run(ctx, WriteIntent(), streaming = false))
    assert(!t.store.exists(t.layout.pendingRecord(ctx.txn)))
  }
}
