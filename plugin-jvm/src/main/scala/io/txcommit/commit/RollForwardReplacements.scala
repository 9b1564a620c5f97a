package io.txcommit.commit

import scala.util.control.NonFatal

import io.txcommit.log.GroupDecisions

/**
 * Job setup: writes the missing `commits/<txn>.json` of replacing commits whose driver died
 * right after creating `replace/<sequence>.json` (readers are already right; this restores
 * the derived copy, after which `RollForward` finishes that commit's other derived work).
 * Best effort: never blocks a new write.
 */
object RollForwardReplacements extends CommitStage[Unit, Int]("roll-forward-replacements") {
  override protected def execute(ctx: TxnContext, in: Unit): Int =
    try {
      val state = ctx.state()
      // Committed as any reader judges them: not the job's own undecided transaction's records.
      val judge = GroupDecisions.of(ctx.conf, ctx.table, ctx.store)
      val missing = state.replaceLog.records.filterNot(r => r.isFence || state.commitTxns(r.txn))
        .filter(r => r.group.forall(judge.commits(_, r.txn)))
      missing.foreach { r =>
        log.info(s"txcommit: ${ctx.describe}: rolling forward replacing commit ${r.txn} " +
          s"(sequence ${r.sequence.getOrElse(0L)})")
        CopyReplaceRecord.run(ctx.copy(txn = r.txn), r, new StageTimings)
      }
      missing.size
    } catch {
      case NonFatal(e) =>
        log.warn(s"txcommit: ${ctx.describe}: roll-forward of replacing commits skipped: ${e.getMessage}")
        0
    }
}
