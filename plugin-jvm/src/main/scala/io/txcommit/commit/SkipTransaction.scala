package io.txcommit.commit

import scala.util.control.NonFatal

import io.txcommit.log.{CommitRecord, RecordCodec}
import io.txcommit.store.StagedFile

/**
 * Job commit under write id policy `skip` when that write id is already committed: commits
 * nothing (no record), discards this job's data and records why in `aborted/<txn>.json`.
 */
object SkipTransaction extends CommitStage[(Seq[StagedFile], CommitRecord), Int]("skip-transaction") {
  override protected def execute(ctx: TxnContext, in: (Seq[StagedFile], CommitRecord)): Int = {
    val (files, earlier) = in
    try ctx.store.writeReplacing(ctx.layout.abortedRecord(ctx.txn),
        RecordCodec.marker(
          "txn" -> ctx.txn, "jobId" -> ctx.sparkJobId, "startedAt" -> ctx.startedAt,
          "abortedAt" -> System.currentTimeMillis(), "state" -> "aborted",
          "reason" -> s"skipped: write id ${earlier.writeId.getOrElse("")} already committed by txn ${earlier.txn}"))
    catch { case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: skip marker not written: ${e.getMessage}") }
    val discarded = ctx.store.discardData(ctx.table, files) + ctx.store.cleanupStaging(ctx.table, ctx.txn, Set.empty)
    log.warn(s"txcommit: ${ctx.describe}: SKIPPED (write id '${earlier.writeId.getOrElse("")}' is " +
      s"already committed by txn ${earlier.txn}); discarded $discarded file(s), nothing committed")
    discarded
  }
}
