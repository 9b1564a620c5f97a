package io.txcommit.commit

import io.txcommit.SparkApp
import io.txcommit.log.TableReads

/**
 * Job setup of a write that creates its table: when the directory holds no data file, the
 * table is log-only (docs/protocol.md, I32): checkpoint 1, covering nothing and saying so, is
 * created before anything commits. A directory holding data (files written without txcommit)
 * is adopted instead and read by listing, so its files stay visible. A failure fails the job
 * before it writes data.
 */
object RecordReadMode extends CommitStage[Unit, Boolean]("record-read-mode") {
  override protected def execute(ctx: TxnContext, in: Unit): Boolean = {
    // Its first exclusive create: on a store that only claims the primitive (an S3 endpoint
    // ignoring If-None-Match), refuse before it writes anything, not at the transaction's start.
    ctx.store.checkReady(ctx.table)
    TableReads.createLogOnly(ctx.table, ctx.store, ctx.table.getFileSystem(ctx.conf), SparkApp.id)
  }
}
