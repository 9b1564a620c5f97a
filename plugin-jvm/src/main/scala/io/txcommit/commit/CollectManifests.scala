package io.txcommit.commit

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage

import io.txcommit.{Paths, UnsupportedWriteException}
import io.txcommit.store.StagedFile

/**
 * Job commit, stage 1: gathers the files of the committed task attempts (one per partition,
 * chosen by Spark's output commit coordinator) and checks every path is a safe relative path.
 */
object CollectManifests extends CommitStage[Seq[TaskCommitMessage], Seq[StagedFile]]("collect-manifests") {
  override protected def execute(ctx: TxnContext, in: Seq[TaskCommitMessage]): Seq[StagedFile] = {
    val files = in.flatMap(_.obj match {
      case m: TaskManifest => m.files
      case other => throw new IllegalStateException(
          s"txcommit: unexpected task commit message ${other.getClass.getName} for ${ctx.describe}")
    })
    val dupes = files.groupBy(_.path).collect { case (p, fs) if fs.size > 1 => p }
    if (dupes.nonEmpty) {
      throw new IllegalStateException(s"txcommit: ${ctx.describe}: two committed attempts name " +
        s"the same file ${dupes.head}; refusing to commit")
    }
    files.foreach { f =>
      Paths.unsafeRelativePath(f.path).foreach { why =>
        throw new UnsupportedWriteException(s"${ctx.describe}: task output '${f.path}' is not " +
          s"inside the table directory ($why)")
      }
    }
    files.sortBy(_.path)
  }
}
