package io.txcommit.commit

import java.io.IOException
import java.time.Instant
import java.util.concurrent.Executors

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.slf4j.LoggerFactory

import io.txcommit.{CommitOutcomeUnknownException, Paths, SparkApp, TransactionException, Version}
import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{CommitRecord, Decision, GroupRef, Groups}
import io.txcommit.store.StagedFile

/**
 * THE commit point of a multi-table transaction (docs/protocol.md, I33, I34): one exclusive
 * create of its decision, after every write of it published its prepared record. `committed`
 * names those records; from then on every table shows all of them, and each table's derived
 * work follows (the `commits/` copies, `_SUCCESS`, checkpoints, manifests, the clean-up), rolled
 * forward by the next write if the driver dies first. ROLLBACK creates `aborted` instead. Of a
 * COMMIT and an abort by someone who found the lease run out, whichever creates the decision
 * first decides; the other reads it back.
 */
object DecideGroup {
  private val log = LoggerFactory.getLogger(getClass)

  /** Commits `g`: its decision, then each table's derived work. None when it wrote nothing. */
  def commit(g: OpenGroup, conf: Configuration, derived: DerivedWork.Runner = DerivedWork.InBackground)
      : Option[Decision] = {
    g.refusal.foreach(why =>
      throw new TransactionException(s"${g.describe} cannot commit: $why. Nothing of it " +
        "is visible; run TXCOMMIT ROLLBACK."))
    g.decisionRef match {
      case None =>
        g.close("committed (it wrote nothing)")
        OpenGroups.remove(g.id)
        None
      case Some(ref) =>
        val start = System.nanoTime()
        HaltPoint.maybeHalt(conf, HaltPoint.TransactionBeforeDecision)
        val mine =
          Decision(g.id, Decision.Committed, g.token, System.currentTimeMillis(), Decision.ByCommit, SparkApp.id,
            Version.writer, g.participants)
        val inForce =
          try Groups.decide(ref, storeOf(ref, g, conf), mine)
          catch {
            case e: IOException => throw new CommitOutcomeUnknownException(
                s"${g.describe} may have committed: " +
                  s"creating its decision ${Paths.display(ref.decisionPath)} failed with '${e.getMessage}' and it " +
                  "could not be read back to tell. Every table shows all of it or none of it. Run TXCOMMIT COMMIT " +
                  "again to settle it (or TXCOMMIT ROLLBACK, which says so if it had committed).", e)
          }
        g.close(s"decided ${inForce.outcome}")
        OpenGroups.remove(g.id)
        if (inForce.token != g.token) throw new TransactionException(s"${g.describe} was decided ${inForce.outcome} " +
          s"(${inForce.decidedBy}) at ${Instant.ofEpochMilli(inForce.decidedAt)} before its COMMIT: it showed no " +
          s"life for longer than its lease (${ref.leaseMs} ms, ${TxCommitConf.GroupLeaseMs}), so a writer, VACUUM or " +
          "a reader rolled it back. Nothing of it is visible; run its writes again in a new transaction, with a " +
          "longer lease if it must stay open that long between writes.")
        val decided = System.nanoTime()
        log.info(s"txcommit: ${g.describe}: COMMITTED ${g.participants.size} write(s) with one decision, " +
          s"${Paths.display(ref.decisionPath)}, in ${(decided - start) / 1000000} ms")
        HaltPoint.maybeHalt(conf, HaltPoint.TransactionAfterDecision)
        deriveAll(g.prepared, derived)
        val end = System.nanoTime()
        log.info(s"txcommit: ${g.describe}: COMMIT took ${(end - start) / 1000000} ms: its decision " +
          s"${(decided - start) / 1000000} ms, then its tables' derived work ${(end - decided) / 1000000} ms")
        Some(inForce)
    }
  }

  /**
   * Each table's derived work before COMMIT answers: the tables side by side, a table's own writes
   * in their order. One table after the other, COMMIT of a transaction over 16 tables on S3 spent
   * 2 s there (a few requests each), against a third of a second for its decision.
   */
  private def deriveAll(prepared: Seq[(TxnContext, CommitRecord)], derived: DerivedWork.Runner): Unit = {
    val tables = prepared.groupBy(_._1.table).values.toSeq
    def run(writes: Seq[(TxnContext, CommitRecord)]): Unit =
      writes.foreach { case (ctx, r) => DerivedWork.apply(ctx, r, new StageTimings, derived) }
    if (tables.size <= 1) tables.foreach(run)
    else {
      val pool = Executors.newFixedThreadPool(math.min(tables.size, DeriveThreads),
        (r: Runnable) => {
          val t = new Thread(r, "txcommit-derive")
          t.setDaemon(true)
          t
        })
      try tables.map(w => pool.submit((() => run(w)): Runnable)).foreach(_.get())
      finally pool.shutdown()
    }
  }

  private val DeriveThreads = 16

  /**
   * Rolls `g` back: an `aborted` decision, then its writes' files discarded (best effort: no
   * reader shows them whatever happens here; VACUUM removes what is left). Fails, naming it, if
   * the group had committed (a COMMIT whose answer was lost). None when it wrote nothing.
   */
  def rollback(g: OpenGroup, conf: Configuration): Option[Decision] = {
    g.close("rolled back")
    OpenGroups.remove(g.id)
    g.decisionRef.map { ref =>
      val inForce =
        try Groups.decide(ref, storeOf(ref, g, conf),
            Groups.aborted(ref, Decision.ByRollback, System.currentTimeMillis()).copy(token = g.token))
        catch {
          case e: IOException => throw new TransactionException(
              s"${g.describe}: its rollback could not be " +
                s"recorded (${Paths.display(ref.decisionPath)}: ${e.getMessage}). Nothing of it is visible; it stays " +
                s"undecided until its lease (${ref.leaseMs} ms) runs out, then anyone who meets it rolls it back.", e)
        }
      if (inForce.committed) throw new TransactionException(s"${g.describe} had already committed (its COMMIT " +
        s"landed at ${Instant.ofEpochMilli(inForce.decidedAt)}); it cannot be rolled back. Its writes are visible.")
      if (!TxCommitConf.bool(conf, TxCommitConf.KeepAbortedFiles, default = false)) g.prepared.foreach {
        case (ctx, r) =>
          try {
            ctx.store.discardData(ctx.table, r.added.map(f => StagedFile(f.path, f.size)))
            ctx.store.cleanupStaging(ctx.table, ctx.txn, Set.empty)
          } catch {
            case NonFatal(e) => log.warn(s"txcommit: ${ctx.describe}: rolled back; its files not all discarded " +
                s"(hidden anyway; VACUUM removes them): ${e.getMessage}")
          }
      }
      log.info(s"txcommit: ${g.describe}: ROLLED BACK (${g.prepared.size} prepared write(s))")
      inForce
    }
  }

  /** Set by the group's first write, with its decision's place. */
  private def storeOf(ref: GroupRef, g: OpenGroup, conf: Configuration) =
    g.store.getOrElse(throw new IllegalStateException(s"${g.describe} has a decision (${ref.decision}) but no store"))
}
