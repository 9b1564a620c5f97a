package io.txcommit.commit

import io.txcommit.SparkApp
import io.txcommit.log.TableProperties

/**
 * Job setup, for a write that sets a table property (the writer option `txcommit.manifests=true`
 * records `manifests` on): the next `properties/` object, created exclusively before any data is
 * written, so every later writer follows it; nothing is written when the table already says so.
 * A failure fails the job before it writes anything.
 */
object RecordTableProperties extends CommitStage[Map[String, String], TableProperties]("record-table-properties") {
  override protected def execute(ctx: TxnContext, changes: Map[String, String]): TableProperties =
    TableProperties.set(ctx.store, ctx.layout, changes, SparkApp.id)
}
