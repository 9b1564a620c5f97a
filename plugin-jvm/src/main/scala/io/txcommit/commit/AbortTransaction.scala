package io.txcommit.commit

import scala.util.control.NonFatal

import io.txcommit.Paths
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.RecordCodec
import io.txcommit.store.StagedFile

/**
 * Job abort: if no commit record exists, records the abort and discards the data of the task
 * attempts that had committed, and on staging stores every upload of the transaction (best
 * effort: readers hide them whatever happens here). If a record exists the transaction is
 * committed and abort must not remove a single file.
 */
object AbortTransaction extends CommitStage[Seq[StagedFile], Int]("abort-transaction") {

  /**
   * What a protocol's `abortJob` runs: this stage, unless the job's commit point ended with an
   * unknown outcome. Then the record may exist or still appear (a request that timed out may be
   * applied later), and discarding files or writing an abort marker could break a committed
   * transaction; VACUUM removes the files if no record ever appears.
   */
  def unlessOutcomeUnknown(ctx: TxnContext, outcomeUnknown: Boolean, taskFiles: Seq[StagedFile]): Unit =
    if (outcomeUnknown) {
      log.warn(s"txcommit: ${ctx.describe}: abort keeps every file, because the commit may " +
        "have landed (see the job's error); TXCOMMIT HISTORY shows whether it committed")
    } else run(ctx, taskFiles, new StageTimings)

  override protected def execute(ctx: TxnContext, taskFiles: Seq[StagedFile]): Int = {
    val fenced = ctx.store.read(ctx.layout.commitRecord(ctx.txn)).exists(b =>
      scala.util.Try(RecordCodec.decode(b, Paths.display(ctx.layout.commitRecord(ctx.txn)), ctx.txn).isFence)
        .getOrElse(false))
    if (fenced) {
      log.warn(s"txcommit: ${ctx.describe}: VACUUM fenced this transaction; discarding its files")
      discard(ctx, taskFiles)
    } else if (ctx.store.exists(ctx.layout.commitRecord(ctx.txn)) ||
      ctx.state().replaceLog.byTxn.contains(ctx.txn)) {
      log.warn(s"txcommit: ${ctx.describe}: abort requested, but the transaction is committed; " +
        "nothing is removed")
      0
    } else {
      try ctx.store.writeReplacing(ctx.layout.abortedRecord(ctx.txn),
          RecordCodec.marker(
            "txn" -> ctx.txn, "jobId" -> ctx.sparkJobId, "startedAt" -> ctx.startedAt,
            "abortedAt" -> System.currentTimeMillis(), "state" -> "aborted"))
      catch { case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: abort marker not written: ${e.getMessage}") }
      discard(ctx, taskFiles)
    }
  }

  private def discard(ctx: TxnContext, taskFiles: Seq[StagedFile]): Int =
    if (TxCommitConf.bool(ctx.conf, TxCommitConf.KeepAbortedFiles, default = false)) 0
    else {
      val safe = taskFiles.filter(f => Paths.unsafeRelativePath(f.path).isEmpty)
      try ctx.store.discardData(ctx.table, safe) + ctx.store.cleanupStaging(ctx.table, ctx.txn, Set.empty)
      catch {
        case NonFatal(e) =>
          log.warn(s"txcommit: ${ctx.describe}: could not discard all aborted data (readers " +
            s"hide it; VACUUM removes it): ${e.getMessage}")
          0
      }
    }
}
