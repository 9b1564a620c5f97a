package io.txcommit.commit

import io.txcommit.log.CommitRecord
import io.txcommit.manifest.ManifestWriter

/**
 * Derived work, when manifests are on for the write (`spark.txcommit.manifests.enabled`, or the
 * write's `txcommit.manifests` option): rewrites the symlink manifests of the partitions the
 * commit changed, or of every partition when the manifests were not whole as of the log before
 * it (a commit written with them off, a driver that died before its pass): the roll-forward
 * rule of [[io.txcommit.manifest.ManifestState]]. Readers through Spark never read them.
 */
object WriteManifests extends CommitStage[CommitRecord, ManifestWriter.Outcome]("write-manifests") {
  override protected def execute(ctx: TxnContext, record: CommitRecord): ManifestWriter.Outcome =
    ManifestWriter.afterCommit(ctx.table, ctx.store, ctx.conf, record)
}
