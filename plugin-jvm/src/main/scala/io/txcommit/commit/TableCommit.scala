package io.txcommit.commit

/**
 * Every kind of commit a table takes, written once (docs/protocol.md, I5). Each publishes one
 * commit point and then runs [[DerivedWork]] on the record it published, whichever code path
 * publishes it (`committedBy`): the `commits/` copy of a replacing commit, `_SUCCESS`, the
 * checkpoint, the symlink manifests (I28) and the clean-up follow every kind alike, so an engine
 * reading the manifests never reads a table a commit left behind. A kind added here must be made
 * by the suites that enumerate [[TableCommit.all]] (ManifestsSuite checks the manifests after
 * each, by an exhaustive match: a kind it does not make is a compile error).
 */
sealed abstract class TableCommit(val name: String, val committedBy: String)

object TableCommit {
  case object Append extends TableCommit("append", "JobCommitter (CommitKind.BatchJob), PublishCommitRecord")
  case object StaticOverwrite
    extends TableCommit("static overwrite", "JobCommitter (CommitKind.BatchJob), PublishReplaceRecord")
  case object DynamicOverwrite
    extends TableCommit("dynamic partition overwrite", "JobCommitter (CommitKind.BatchJob), PublishReplaceRecord")
  case object WriteIdRun
    extends TableCommit("write-id run (a first run and a re-run)", "JobCommitter, PublishReplaceRecord")
  case object StreamingBatch
    extends TableCommit("streaming micro-batch", "JobCommitter (streaming.MicroBatch), PublishCommitRecord")
  case object Restore extends TableCommit("restore", "maintenance.Restore, PublishRestoreRecord")

  val all: Seq[TableCommit] = Seq(Append, StaticOverwrite, DynamicOverwrite, WriteIdRun, StreamingBatch, Restore)
}
