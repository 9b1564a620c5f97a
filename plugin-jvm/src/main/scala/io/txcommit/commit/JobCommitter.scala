package io.txcommit.commit

import scala.util.control.NonFatal

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.slf4j.LoggerFactory

import io.txcommit.{CommitConflictException, CommitOutcomeUnknownException, FencedException}
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{AddedFile, CommitRecord, TableSchema, TableState}
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.store.StagedFile

/**
 * Job commit, for a batch job and for a streaming micro-batch ([[CommitKind]]): collect,
 * publish the record (the commit point), then the derived work. Once the record exists the job
 * IS committed, so a failure in derived work is logged and never turned into a job failure (a
 * caller that saw a failure would re-run and duplicate the data).
 */
object JobCommitter {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * Commits the job; returns its record, or None when nothing is committed: a write id under
   * policy `skip` was already committed, or a micro-batch was committed by an earlier run (its
   * record is kept). `base` is set for replacing jobs; `cleanup` runs the clean-up after the
   * job returns ([[DerivedWork]]); `report` logs the commit's one INFO line ([[CommitLine]]).
   */
  def commit(ctx: TxnContext, messages: Seq[TaskCommitMessage], intent: WriteIntent = WriteIntent(),
      base: ReplaceBase = ReplaceBase(0L, Set.empty), kind: CommitKind = CommitKind.BatchJob,
      cleanup: DerivedWork.Runner = DerivedWork.InBackground,
      report: CommitReport = CommitReport.AtOnce): Option[CommitRecord] =
    try CommitStage.inContext(ctx)(run(ctx, messages, intent, base, kind, cleanup, report))
    catch {
      case e: FencedException => TxCommitMetrics.fencedJobs.inc(); throw e
      case e: CommitConflictException => TxCommitMetrics.conflicts.inc(); throw e
      case e: CommitOutcomeUnknownException => TxCommitMetrics.outcomeUnknown.inc(); throw e
    }

  private def run(ctx: TxnContext, messages: Seq[TaskCommitMessage], intent: WriteIntent, base: ReplaceBase,
      kind: CommitKind, cleanup: DerivedWork.Runner, report: CommitReport): Option[CommitRecord] = {
    val started = System.nanoTime()
    val timings = new StageTimings
    val staged = CollectManifests.run(ctx, messages, timings)
    kind.earlierCommit(ctx, timings) match {
      case Some(earlier) =>
        discard(ctx, staged)
        kind.committed(earlier)
        None
      case None =>
        val skipBecause = CheckWriteId.run(ctx, intent, timings).filter(_ => intent.policy == WriteIdPolicy.Skip)
        skipBecause match {
          case Some(earlier) =>
            SkipTransaction.run(ctx, (staged, earlier), timings)
            None
          case None => Some(publish(ctx, staged, intent, base, kind, cleanup, timings, started, report))
        }
    }
  }

  /** This run's files, when an earlier run's commit is kept: readers hide them anyway. */
  private def discard(ctx: TxnContext, staged: Seq[StagedFile]): Unit =
    try ctx.store.discardData(ctx.table, staged)
    catch {
      case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: files of this run not discarded (hidden anyway): " +
          e.getMessage)
    }

  private def publish(ctx: TxnContext, staged: Seq[StagedFile], intent: WriteIntent, base: ReplaceBase,
      kind: CommitKind, cleanup: DerivedWork.Runner, timings: StageTimings, started: Long,
      report: CommitReport): CommitRecord = {
    val record = ctx.record(staged.map(f => AddedFile(f.path, f.size)))
    // One snapshot of the log for the conflict check and the schema guard: their listings are shared.
    val snapshot = new TableState(ctx.table, ctx.store, ctx.conf)
    if (intent.isReplacing) CheckConflicts.run(ctx, ReplaceRequest(record, intent, base, Some(snapshot)), timings)
    val schema = CheckSchema.run(ctx,
      SchemaCheck(TableSchema.written(ctx.conf), intent.replacesTable,
        intent.mergeSchema, snapshot, intent.enforceNotNull, record.added.map(_.path)), timings)
    PublishData.run(ctx, staged, timings)
    val stamped = record.copy(committedAt = System.currentTimeMillis(), schema = schema)
    HaltPoint.maybeHalt(ctx.conf, kind.beforeRecord)
    val committed =
      if (intent.isReplacing) PublishReplaceRecord.run(ctx, ReplaceRequest(stamped, intent, base), timings)
      else { PublishCommitRecord.run(ctx, stamped, timings); TableSchema.committed(ctx.layout, stamped); stamped }
    val commitNs = System.nanoTime() - started
    TxCommitMetrics.commits.inc()
    TxCommitMetrics.commitTime.update(commitNs, java.util.concurrent.TimeUnit.NANOSECONDS)
    HaltPoint.maybeHalt(ctx.conf, kind.afterRecord)
    // This JVM's reads of the table list its log first, with no listing of its root to find it.
    io.txcommit.read.TableLogReader.Roots.put(ctx.table.toString, java.lang.Boolean.TRUE)
    kind.committed(committed)
    DerivedWork.apply(ctx, committed, timings, cleanup)
    report(CommitLine.of(ctx, committed, commitNs / 1000000))
    committed
  }
}
