package io.txcommit.commit

import io.txcommit.fault.HaltPoint
import io.txcommit.store.StagedFile

/**
 * Job commit, stage 2: makes staged data final where the store stages it (multipart uploads
 * are completed). Nothing is visible to txcommit readers yet: the files have no record. A
 * driver death here leaves complete but uncommitted files, which readers hide and VACUUM
 * removes. A no-op for stores whose tasks write straight to the final place.
 */
object PublishData extends CommitStage[Seq[StagedFile], Unit]("publish-data") {
  override protected def execute(ctx: TxnContext, files: Seq[StagedFile]): Unit = {
    // In two halves, so that tests can kill the driver with part of the data published.
    val (first, second) = files.splitAt(files.size / 2)
    ctx.store.publishData(ctx.table, first)
    HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobDuringPublishData)
    ctx.store.publishData(ctx.table, second)
  }
}
