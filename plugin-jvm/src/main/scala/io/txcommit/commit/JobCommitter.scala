package io.txcommit.commit

import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.slf4j.LoggerFactory

import io.txcommit.Version
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{AddedFile, CommitRecord}

/**
 * Job commit: collect, publish the record (the commit point), then the derived work. Once the
 * record exists the job IS committed, so a failure in derived work is logged and never turned
 * into a job failure (a caller that saw a failure would re-run and duplicate the data).
 */
object JobCommitter {
  private val log = LoggerFactory.getLogger(getClass)

  def commit(ctx: TxnContext, messages: Seq[TaskCommitMessage]): CommitRecord = {
    val timings = new StageTimings
    val staged = CollectManifests.run(ctx, messages, timings)
    PublishData.run(ctx, staged, timings)
    val added = staged.map(f => AddedFile(f.path, f.size))
    val record = CommitRecord(
      txn = ctx.txn,
      token = ctx.token,
      jobId = ctx.sparkJobId,
      startedAt = ctx.startedAt,
      committedAt = System.currentTimeMillis(),
      added = added,
      appId = Option(SparkEnv.get).flatMap(_.conf.getOption("spark.app.id")),
      writer = s"txcommit/${Version.current}")
    HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobBeforeRecord)
    PublishCommitRecord.run(ctx, record, timings)
    log.info(s"txcommit: ${ctx.describe}: COMMITTED ${record.files} file(s), ${record.bytes} bytes")
    HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobAfterRecord)
    DerivedWork.apply(ctx, record, timings)
    record
  }
}

/** Everything after the record; rerunnable from the record alone (roll forward). */
object DerivedWork {
  private val log = LoggerFactory.getLogger(getClass)

  def apply(ctx: TxnContext, record: CommitRecord, timings: StageTimings): Unit =
    try {
      CleanupAttempts.run(ctx, record, timings)
      CleanupStaging.run(ctx, record, timings)
      HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobBeforeSuccess)
      WriteSuccessSummary.run(ctx, (record, timings), timings)
    } catch {
      case NonFatal(e) =>
        log.warn(s"txcommit: ${ctx.describe}: committed, but derived work failed (${e.getMessage}); " +
          "readers are not affected, and the next write to this table rolls it forward", e)
    }
}
