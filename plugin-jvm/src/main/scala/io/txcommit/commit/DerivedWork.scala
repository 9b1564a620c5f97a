package io.txcommit.commit

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.txcommit.fault.HaltPoint
import io.txcommit.log.CommitRecord

/** Everything after the record; rerunnable from the record alone (roll forward). */
object DerivedWork {
  private val log = LoggerFactory.getLogger(getClass)

  def apply(ctx: TxnContext, record: CommitRecord, timings: StageTimings): Unit =
    try {
      CopyReplaceRecord.run(ctx, record, timings)
      CleanupAttempts.run(ctx, record, timings)
      CleanupStaging.run(ctx, record, timings)
      HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobBeforeSuccess)
      WriteSuccessSummary.run(ctx, (record, timings), timings)
      WriteCheckpoint.run(ctx, record, timings)
    } catch {
      case NonFatal(e) =>
        log.warn(s"txcommit: ${ctx.describe}: committed, but derived work failed (${e.getMessage}); " +
          "readers are not affected, and the next write to this table rolls it forward", e)
    }
}
