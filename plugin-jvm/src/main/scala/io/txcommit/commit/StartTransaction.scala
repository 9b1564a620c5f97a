package io.txcommit.commit

import io.txcommit.log.RecordCodec

/**
 * Job setup: checks the store really has its declared primitive (before any data is written),
 * then records that the transaction started (`_txcommit/pending/<txn>.json`).
 */
object StartTransaction extends CommitStage[Unit, Unit] {
  override protected def execute(ctx: TxnContext, in: Unit): Unit = {
    ctx.store.checkReady(ctx.table)
    ctx.store.createExclusive(ctx.layout.pendingRecord(ctx.txn), RecordCodec.marker(
      "txn" -> ctx.txn,
      "jobId" -> ctx.sparkJobId,
      "startedAt" -> ctx.startedAt,
      "state" -> "pending"))
  }
}
