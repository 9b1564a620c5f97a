package io.txcommit.commit

import java.time.Instant

import io.txcommit.{Paths, WriteIdCommittedException}
import io.txcommit.log.{CommitRecord, ReplaceLog, TableState}

/**
 * Job setup and commit of a write carrying a write id: finds the newest earlier commit with
 * that write id. Under policy `fail` it fails the job (at setup, before any data is written,
 * and again at commit for a run that raced); under `skip` it returns that commit so the job
 * commits nothing; under `replace` it only reports it.
 *
 * A write id a restore undid is not committed (docs/protocol.md, I13): when no file its runs
 * added is visible and a restore after its newest run removed one of them, the table is back
 * where it was before the write id's rows, and this run commits them as a first run would. Rows
 * an overwrite replaced are the table moving on: the write id stays committed.
 */
object CheckWriteId extends CommitStage[WriteIntent, Option[CommitRecord]]("check-write-id") {
  override protected def execute(ctx: TxnContext, intent: WriteIntent): Option[CommitRecord] =
    intent.writeId.flatMap { id =>
      val replaced = new TableState(ctx.table, ctx.store, ctx.conf).replaceLog
      val runs = replaced.withWriteId(id).filter(_.txn != ctx.txn)
      val earlier = runs.lastOption.flatMap { last =>
        undoneBy(replaced, runs, last) match {
          case None => Some(last)
          case Some(restore) =>
            log.info(s"txcommit: ${ctx.describe}: write id '$id' was committed by txn ${last.txn}, but the restore " +
              s"txn ${restore.txn} at ${Instant.ofEpochMilli(restore.committedAt)} removed its rows and none is " +
              "visible: this run commits them")
            None
        }
      }
      earlier.foreach { e =>
        val what = s"write id '$id' of ${Paths.display(ctx.table)} was committed by txn ${e.txn} " +
          s"at ${Instant.ofEpochMilli(e.committedAt)} (${e.files} file(s))"
        intent.policy match {
          case WriteIdPolicy.Fail => throw new WriteIdCommittedException(s"${ctx.describe}: $what, " +
              s"and the write id policy is 'fail'. Use a new write id, or set " +
              s"${WriteIntent.WriteIdPolicyOption} to 'replace' (replace that run) or 'skip'.")
          case WriteIdPolicy.Skip => log.warn(s"txcommit: ${ctx.describe}: $what; policy 'skip': " +
              "this run commits nothing")
          case WriteIdPolicy.Replace => log.debug(s"txcommit: ${ctx.describe}: $what; this run replaces it")
        }
      }
      earlier
    }

  /**
   * The restore that undid the runs `runs` (newest `last`) of a write id: one committed after
   * `last` that removed a file a run added, when no such file is visible now.
   */
  private def undoneBy(replaced: ReplaceLog, runs: Seq[CommitRecord], last: CommitRecord): Option[CommitRecord] = {
    val added = runs.iterator.flatMap(_.added.iterator.map(_.path)).toSet
    if (added.isEmpty || added.exists(p => !replaced.net.removals.names(p))) None
    else replaced.after(last.sequence.getOrElse(0L))
      .findLast(r => r.isRestore && r.removed.exists(f => added(f.path)))
  }
}
