package io.txcommit.commit

import java.util.concurrent.{Executors, ThreadFactory}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.txcommit.fault.HaltPoint
import io.txcommit.log.CommitRecord
import io.txcommit.manifest.ManifestSwitch

/**
 * Everything after the record; rerunnable from the record alone (roll forward).
 *
 * `_SUCCESS`, the checkpoint and, when switched on ([[ManifestSwitch]]: the write's option, the
 * table's property, the session's default), the symlink manifests are written before the
 * job returns (a scheduler waiting for `_SUCCESS` must find it, an engine reading the manifests
 * the commit). Deleting the files of failed attempts and aborting their uploads
 * runs after the job returned, on one background thread per JVM: readers hide those files
 * whether or not they are ever deleted (a driver that dies first leaves them to VACUUM), so
 * nobody should wait for it, and at thousands of files it is the slowest part of a commit.
 */
object DerivedWork {
  private val log = LoggerFactory.getLogger(getClass)

  /** Where the clean-up runs: [[InBackground]] in a job, [[Inline]] where a caller waits. */
  type Runner = (() => Unit) => Unit
  val Inline: Runner = work => work()
  val InBackground: Runner = work => cleaner.execute(() => work())

  private lazy val cleaner = Executors.newSingleThreadExecutor(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "txcommit-cleanup")
      t.setDaemon(true) // never holds a JVM open: what it leaves, VACUUM removes
      t
    }
  })

  def apply(ctx: TxnContext, record: CommitRecord, timings: StageTimings,
      cleanup: Runner = InBackground): Unit = {
    val completed = guarded(ctx) {
      CopyReplaceRecord.run(ctx, record, timings)
      HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobBeforeSuccess)
      WriteSuccessSummary.run(ctx, (record, timings), timings)
      WriteCheckpoint.run(ctx, record, timings)
    }
    // Before the job returns, as _SUCCESS: an engine reading the manifests sees the commit then.
    // Guarded on its own: a failure leaves them to the next pass and skips no clean-up.
    guarded(ctx) {
      if (ManifestSwitch.enabled(ctx.conf, ctx.store, ctx.layout)) WriteManifests.run(ctx, record, timings)
    }
    if (completed) cleanup(() =>
      guarded(ctx) {
        CleanupAttempts.run(ctx, record, timings)
        CleanupStaging.run(ctx, record, timings)
      })
  }

  private def guarded(ctx: TxnContext)(work: => Unit): Boolean =
    try { work; true }
    catch {
      case NonFatal(e) =>
        log.warn(
          s"txcommit: ${ctx.describe}: committed, but derived work failed (${e.getMessage}); " +
            "readers are not affected, and the next write to this table rolls it forward", e)
        false
    }
}
