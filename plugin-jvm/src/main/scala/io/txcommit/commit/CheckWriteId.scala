package io.txcommit.commit

import java.time.Instant

import io.txcommit.{Paths, WriteIdCommittedException}
import io.txcommit.log.{CommitRecord, TableState}

/**
 * Job setup and commit of a write carrying a write id: finds the newest earlier commit with
 * that write id. Under policy `fail` it fails the job (at setup, before any data is written,
 * and again at commit for a run that raced); under `skip` it returns that commit so the job
 * commits nothing; under `replace` it only reports it.
 */
object CheckWriteId extends CommitStage[WriteIntent, Option[CommitRecord]]("check-write-id") {
  override protected def execute(ctx: TxnContext, intent: WriteIntent): Option[CommitRecord] =
    intent.writeId.flatMap { id =>
      val earlier = new TableState(ctx.table, ctx.store, ctx.conf).replaceLog.withWriteId(id)
        .filter(_.txn != ctx.txn).lastOption
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
}
