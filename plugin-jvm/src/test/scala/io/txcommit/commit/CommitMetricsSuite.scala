package io.txcommit.commit

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.scalatest.funsuite.AnyFunSuite
import org.slf4j.MDC

import io.txcommit.CommitConflictException
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.testing.MemTable

/**
 * What a job commit tells operators (docs/operations.md): it counts into txcommit's metrics (a
 * commit, its time by stage; a lost race, a conflict), its stages run with the table and the
 * transaction in the logging context, and it reports one line, with its files and times.
 */
class CommitMetricsSuite extends AnyFunSuite {
  private def job(t: MemTable, ctx: TxnContext): Seq[TaskCommitMessage] = {
    val staged = t.store.stage(t.table, s"part-00000-tid-${ctx.txn}-0.parquet", Array[Byte](1, 2, 3))
    Seq(new TaskCommitMessage(TaskManifest("attempt_0", Seq(staged))))
  }

  test("a commit and a lost race are counted and timed; the commit reports one line") {
    val t = new MemTable(staging = true)
    val ctx = t.context()
    val (commits, conflicts) = (TxCommitMetrics.commits.getCount, TxCommitMetrics.conflicts.getCount)
    val publish = TxCommitMetrics.stage(PublishCommitRecord.name).get.getCount
    var lines = Seq.empty[CommitLine]
    val record = JobCommitter.commit(ctx, job(t, ctx), cleanup = DerivedWork.Inline,
      report = line => lines :+= line).get
    assert(TxCommitMetrics.commits.getCount == commits + 1)
    assert(TxCommitMetrics.stage(PublishCommitRecord.name).get.getCount == publish + 1)
    assert(lines.size == 1)
    val line = lines.head
    assert(line.record == record)
    val text = line.text(Some(42L))
    assert(text.startsWith(s"txcommit: COMMITTED txn ${ctx.txn} on ") && text.contains(
      ": append, 1 file(s), 3 bytes, 42 row(s), job "))
    assert(line.text(None).contains("rows not counted"))
    // Another driver of the same transaction finds its record in place: a conflict, counted.
    val again = t.context(ctx.txn, token = "another-driver")
    intercept[CommitConflictException](JobCommitter.commit(again, job(t, again), cleanup = DerivedWork.Inline))
    assert(TxCommitMetrics.conflicts.getCount == conflicts + 1)
    assert(TxCommitMetrics.commits.getCount == commits + 1)
  }

  test("a stage runs with its table and transaction in the logging context, restored after") {
    val t = new MemTable
    val ctx = t.context()
    var seen = Option.empty[(String, String)]
    object Probe extends CommitStage[Unit, Unit]("probe") {
      override protected def execute(c: TxnContext, in: Unit): Unit =
        seen = Some(MDC.get(CommitStage.TableKey) -> MDC.get(CommitStage.TxnKey))
    }
    Probe.run(ctx, (), new StageTimings)
    assert(seen.contains(io.txcommit.Paths.display(t.table) -> ctx.txn))
    assert(MDC.get(CommitStage.TableKey) == null && MDC.get(CommitStage.TxnKey) == null)
  }

  test("every stage has its timer from the start, so a dashboard sees zeros, not gaps") {
    assert(TxCommitMetrics.stages.map(_.name).forall(n => TxCommitMetrics.registry.getTimers.containsKey(s"stage.$n")))
  }
}
