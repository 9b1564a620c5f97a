package io.txcommit.commit

/**
 * Job commit of a replacing transaction, before its data is published: fails early when a
 * replacing commit made since the job started already overlaps it, so a losing job does not
 * first complete its uploads (on staging stores) only to leave them hidden. The decisive check
 * is repeated at the commit point (PublishReplaceRecord); this one only saves work.
 */
object CheckConflicts extends CommitStage[ReplaceRequest, Unit]("check-conflicts") {
  override protected def execute(ctx: TxnContext, req: ReplaceRequest): Unit = {
    val scope = req.intent.scope(req.record.directories)
    val log = req.snapshot.getOrElse(ctx.state()).replaceLog
    PublishReplaceRecord.conflict(log, req, scope)
      .foreach(winner => throw PublishReplaceRecord.conflictError(ctx, req, scope, winner))
  }
}
