package io.txcommit.commit

import io.txcommit.log.RecordCodec

/**
 * Job setup: checks the store really has its declared primitive (before any data is written),
 * then records that the transaction started (`_txcommit/pending/<txn>.json`). The input says
 * whether the job is a replacing commit: VACUUM reads it to know how to fence the transaction
 * if its driver falls silent (invariant I19).
 */
object StartTransaction extends CommitStage[Boolean, Unit]("start-transaction") {
  override protected def execute(ctx: TxnContext, replacing: Boolean): Unit = {
    ctx.store.checkReady(ctx.table)
    ctx.store.createExclusive(ctx.layout.pendingRecord(ctx.txn), pendingMarker(ctx, replacing, None))
  }

  /** The pending marker's bytes; `heartbeatAt` is set by each refresh of a running job. */
  def pendingMarker(ctx: TxnContext, replacing: Boolean, heartbeatAt: Option[Long]): Array[Byte] =
    RecordCodec.marker(
      "txn" -> ctx.txn,
      "jobId" -> ctx.sparkJobId,
      "startedAt" -> ctx.startedAt,
      "state" -> "pending",
      "replacing" -> replacing,
      "heartbeatAt" -> heartbeatAt)
}
