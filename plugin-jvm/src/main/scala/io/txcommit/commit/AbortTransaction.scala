package io.txcommit.commit

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import io.txcommit.Paths
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{AddedFile, RecordCodec}

/**
 * Job abort: if no commit record exists, records the abort and deletes the files of the task
 * attempts that had committed (best effort: readers hide them whatever happens here). If a
 * record exists the transaction is committed and abort must not remove a single file.
 */
object AbortTransaction extends CommitStage[Seq[AddedFile], Int]("abort") {
  override protected def execute(ctx: TxnContext, taskFiles: Seq[AddedFile]): Int = {
    if (ctx.store.exists(ctx.layout.commitRecord(ctx.txn))) {
      log.warn(s"txcommit: ${ctx.describe}: abort requested, but the transaction is committed; " +
        "nothing is removed")
      0
    } else {
      try ctx.store.writeReplacing(ctx.layout.abortedRecord(ctx.txn), RecordCodec.marker(
        "txn" -> ctx.txn, "jobId" -> ctx.sparkJobId, "startedAt" -> ctx.startedAt,
        "abortedAt" -> System.currentTimeMillis(), "state" -> "aborted"))
      catch { case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: abort marker not written: ${e.getMessage}") }
      if (TxCommitConf.bool(ctx.conf, TxCommitConf.KeepAbortedFiles, default = false)) 0
      else taskFiles.count(f =>
        Paths.unsafeRelativePath(f.path).isEmpty &&
          (try ctx.store.delete(new Path(ctx.table, f.path)) catch { case NonFatal(_) => false }))
    }
  }
}
