package io.txcommit.commit

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.txcommit.log.{GroupDecisions, Groups}

/**
 * Keeps a running job alive in the store's eyes (invariant I19): rewrites the job's
 * `pending/<txn>.json` (and, for a job of a multi-table transaction, the transaction's lease)
 * every `intervalMs` until stopped, so its modification time (the store's
 * clock) shows VACUUM that the job is running, however long it runs and whatever the driver's
 * clock says. Stopped when the job commit starts or the job aborts. A failed refresh is logged
 * and retried at the next tick: VACUUM also counts the job's data files' modification times.
 */
final class TxnHeartbeat private (ctx: TxnContext, replacing: Boolean, intervalMs: Long) {
  private val log = LoggerFactory.getLogger(getClass)
  private val timer: ScheduledExecutorService = Executors.newSingleThreadScheduledExecutor { r =>
    val t = new Thread(r, s"txcommit-heartbeat-${ctx.txn}")
    t.setDaemon(true)
    t
  }

  private lazy val groupStore = ctx.group.map(g => GroupDecisions.of(ctx.conf, ctx.table, ctx.store).store(g))

  private def beat(): Unit =
    try {
      ctx.store.writeReplacing(ctx.layout.pendingRecord(ctx.txn),
        StartTransaction.pendingMarker(ctx, replacing, Some(System.currentTimeMillis())))
      // A job of a multi-table transaction keeps its transaction's lease alive too (I34).
      ctx.group.foreach(g => groupStore.foreach(Groups.renewLease(g, _)))
    } catch {
      case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: heartbeat not written (retried in " +
          s"$intervalMs ms): ${e.getMessage}")
    }

  def stop(): Unit = timer.shutdownNow()
}

object TxnHeartbeat {
  def start(ctx: TxnContext, replacing: Boolean, intervalMs: Long): TxnHeartbeat = {
    val h = new TxnHeartbeat(ctx, replacing, intervalMs)
    h.timer.scheduleWithFixedDelay(() => h.beat(), intervalMs, intervalMs, TimeUnit.MILLISECONDS)
    h
  }
}
