package io.txcommit.commit

import java.io.IOException

import io.txcommit.Paths
import io.txcommit.log.{CommitRecord, RecordCodec}

/**
 * Job commit, stage 2: THE commit. Creates `_txcommit/commits/<txn>.json` exclusively through
 * the store's primitive. Before this returns nothing of the job is visible; after it, all is.
 *
 * Publishing is idempotent: a request whose answer was lost may be sent again (by the store's
 * SDK or by this stage's caller), and the resend then meets the record its first attempt
 * created. So whatever the publish reports, a record in place carrying this job's token is
 * this job's commit; one with another token is another driver's (a conflict); and any other
 * error leaves the question open (a request that timed out may still be applied by the store),
 * reported as [[CommitOutcomeUnknownException]], which makes the job keep its files.
 */
object PublishCommitRecord extends CommitStage[CommitRecord, Unit]("publish-commit-record") {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Unit = {
    val target = ctx.layout.commitRecord(ctx.txn)
    try ctx.store.createExclusive(target, RecordCodec.encode(record))
    catch {
      case e: IOException => RecordOwner.ofCommit(ctx, record.token) match {
          case RecordOwner.Mine =>
            log.warn(s"txcommit: ${ctx.describe}: publish reported '${e.getMessage}', but the record " +
              "in place is this job's own (its first attempt landed); the transaction is committed")
          case RecordOwner.Other(other) => throw RecordOwner.taken(ctx, other, Paths.display(target))
          // Absent now proves nothing: a request that timed out may still be applied by the store.
          case RecordOwner.Absent | RecordOwner.Unreadable => throw RecordOwner.unknown(ctx, target, e)
        }
    }
  }
}
