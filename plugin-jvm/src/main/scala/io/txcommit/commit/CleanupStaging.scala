package io.txcommit.commit

import io.txcommit.log.CommitRecord

/**
 * Derived work: on stores that stage data, forgets staged data of this transaction that the
 * record does not name (losing or lost attempts' uploads) and the staging markers.
 */
object CleanupStaging extends CommitStage[CommitRecord, Int]("cleanup-staging") {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Int =
    ctx.store.cleanupStaging(ctx.table, ctx.txn, record.added.iterator.map(_.path).toSet)
}
