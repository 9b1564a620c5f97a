package io.txcommit.commit

import scala.util.control.NonFatal

import io.txcommit.Paths
import io.txcommit.log.{GroupDecisions, LogLayout, RecordCodec}

/**
 * Job setup: finishes the derived work of the newest committed transaction if its driver died
 * after the commit record but before `_SUCCESS` (visible data is already right; this restores
 * `_SUCCESS` and removes failed-attempt files). Best effort: never blocks a new write.
 */
object RollForward extends CommitStage[Unit, Option[String]]("roll-forward") {
  override protected def execute(ctx: TxnContext, in: Unit): Option[String] =
    try {
      val newest = ctx.store.list(ctx.layout.commitsDir)
        .filter(st => LogLayout.txnOfRecordName(st.getPath.getName).isDefined)
        .sortBy(_.getModificationTime)
        .lastOption
      newest.flatMap { st =>
        val txn = LogLayout.txnOfRecordName(st.getPath.getName).get
        val summarised = ctx.store.read(ctx.layout.success).flatMap(RecordCodec.successTxn)
        if (summarised.contains(txn)) None
        else {
          val bytes = ctx.store.read(st.getPath).getOrElse(Array.emptyByteArray)
          val record = RecordCodec.decode(bytes, Paths.display(st.getPath), txn)
          if (record.isFence) None // VACUUM's claim: nothing was committed, nothing to finish
          // A prepared record's derived work follows its group's decision (a second write of the
          // same transaction finds its first one here): only once the group committed it.
          else if (record.group.exists(g => !GroupDecisions.of(ctx.conf, ctx.table, ctx.store).commits(g, txn))) None
          else {
            log.info(s"txcommit: ${ctx.describe}: rolling forward the derived work of committed txn $txn")
            // Inline: rare (a driver died after its record), and the new job may as well wait.
            DerivedWork.apply(ctx.copy(txn = txn), record, new StageTimings, DerivedWork.Inline)
            Some(txn)
          }
        }
      }
    } catch {
      case NonFatal(e) =>
        log.warn(s"txcommit: ${ctx.describe}: roll-forward skipped: ${e.getMessage}")
        None
    }
}
