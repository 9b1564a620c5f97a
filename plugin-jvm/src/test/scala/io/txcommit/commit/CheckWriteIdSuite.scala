package io.txcommit.commit

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.WriteIdCommittedException
import io.txcommit.log.{CommitRecord, RecordCodec, RemovedFile, Replacement, TxnId}
import io.txcommit.testing.MemTable

class CheckWriteIdSuite extends AnyFunSuite {
  test("without a write id it finds nothing and reads nothing") {
    val t = new MemTable
    assert(CheckWriteId.run(t.context(), WriteIntent(), new StageTimings).isEmpty)
    assert(t.store.calls.isEmpty)
  }

  test("finds the newest earlier run with the write id, not its own transaction or other ids") {
    val t = new MemTable
    val (a, b, me) = (TxnId.generate(), TxnId.generate(), TxnId.generate())
    t.commitReplacing(a, 1, Nil, Some("run-1"))
    t.commitReplacing(b, 2, Nil, Some("run-1"))
    t.commitReplacing(TxnId.generate(), 3, Nil, Some("run-2"))
    t.commitReplacing(me, 4, Nil, Some("run-1"))
    val found = CheckWriteId.run(t.context(me), WriteIntent(writeId = Some("run-1")), new StageTimings)
    assert(found.map(_.txn).contains(b))
    assert(CheckWriteId.run(t.context(), WriteIntent(writeId = Some("run-3")), new StageTimings).isEmpty)
  }

  test("a write id whose files a restore removed, none visible, is not committed; an overwrite's removal or a " +
    "restore that kept a run's file leaves it committed") {
    val skip = WriteIntent(writeId = Some("w"), policy = WriteIdPolicy.Skip)
    def found(t: MemTable) = CheckWriteId.run(t.context(), skip, new StageTimings).map(_.txn)
    def removing(t: MemTable, seq: Long, jobId: String, removed: Seq[String], restored: Seq[String] = Nil) = {
      val r = t.record(TxnId.generate()).copy(jobId = jobId, operation = CommitRecord.Overwrite,
        replacement = Some(Replacement(seq, Seq(""), removed.map(RemovedFile(_, 3L)),
            restored.map(RemovedFile(_, 3L)))))
      t.store.createExclusive(t.layout.replaceRecord(seq), RecordCodec.encode(r))
    }
    val (a, b) = (TxnId.generate(), TxnId.generate())
    val (fa, fb) = (s"part-00000-tid-$a-1.parquet", s"part-00000-tid-$b-1.parquet")

    val undone = new MemTable
    undone.commitReplacing(a, 1, Nil, Some("w"), files = Seq(fa))
    removing(undone, 2, CommitRecord.RestoreJobId, Seq(fa))
    assert(found(undone).isEmpty, "the restore removed the run's rows")
    CheckWriteId.run(undone.context(), skip.copy(policy = WriteIdPolicy.Fail), new StageTimings) // no error

    val overwritten = new MemTable
    overwritten.commitReplacing(a, 1, Nil, Some("w"), files = Seq(fa))
    removing(overwritten, 2, "job", Seq(fa))
    assert(found(overwritten).contains(a), "an overwrite replaced the rows: the table moved on")

    // Two runs; a restore to between them re-adds the first run's file: the write id's rows are there.
    val between = new MemTable
    between.commitReplacing(a, 1, Nil, Some("w"), files = Seq(fa))
    between.commitReplacing(b, 2, Nil, Some("w"), files = Seq(fb), removed = Seq(fa))
    removing(between, 3, CommitRecord.RestoreJobId, Seq(fb), restored = Seq(fa))
    assert(found(between).contains(b))
    // A restore to before both: none is visible.
    removing(between, 4, CommitRecord.RestoreJobId, Seq(fa))
    assert(found(between).isEmpty)
  }

  test("policy fail: an earlier run fails the job, naming it and the way out; skip and replace report it") {
    val t = new MemTable
    val earlier = TxnId.generate()
    t.commitReplacing(earlier, 1, Nil, Some("run-1"))
    val e = intercept[WriteIdCommittedException](CheckWriteId.run(t.context(),
        WriteIntent(writeId = Some("run-1"), policy = WriteIdPolicy.Fail), new StageTimings))
    assert(e.getMessage.contains(earlier) && e.getMessage.contains(WriteIntent.WriteIdPolicyOption))
    for (p <- Seq(WriteIdPolicy.Skip, WriteIdPolicy.Replace)) {
      assert(CheckWriteId.run(t.context(), WriteIntent(writeId = Some("run-1"), policy = p), new StageTimings)
          .map(_.txn).contains(earlier))
    }
  }
}
