package io.txcommit.commit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{Paths, RestoreFilesMissingException}
import io.txcommit.log.{CommitRecord, RemovedFile}
import io.txcommit.store.FileSteps

/**
 * What a restore publishes: its record (no file added; `schema`, the target version's schema when
 * known), the files the table must show (`target`, each by path and, without a txn id, its
 * identity) and what the log held when the restore began (`base`); `steps` runs the check of
 * the files it re-adds (a Spark job for many: its progress reaches a Connect client).
 */
final case class RestoreRequest(record: CommitRecord, target: Seq[RemovedFile], base: ReplaceBase,
    steps: FileSteps = FileSteps.Here)

/**
 * THE commit of a restore (docs/protocol.md, I31): one replacing commit of the whole table, so it
 * conflicts like any overwrite of the whole table (a replacing commit published since `base`
 * fails it; appends since are serialized after it and keep their files). At the snapshot it
 * publishes against it plans ([[RestorePlan]]) the files to remove and to re-add, checks, right
 * before the exclusive create, that every file it re-adds is still on the store as the one the
 * target names (VACUUM may have deleted it: then [[RestoreFilesMissingException]] names them and
 * nothing is published), and publishes one `replace/` record through
 * [[PublishReplaceRecord.publish]] (format 3 when it re-adds files).
 */
object PublishRestoreRecord extends CommitStage[RestoreRequest, CommitRecord]("publish-restore-record") {
  override protected def execute(ctx: TxnContext, req: RestoreRequest): CommitRecord = {
    val replace = ReplaceRequest(req.record.copy(added = Nil), WriteIntent(staticScopes = Seq("")), req.base)
    PublishReplaceRecord.publish(ctx, replace) { (state, _) =>
      val plan = RestorePlan(state, req.target, req.base)
      val root = ctx.table.toString
      val there = req.steps(s"txcommit RESTORE ${Paths.display(ctx.table)}: checking ${plan.restored.size} file(s)",
        plan.restored, ctx.conf)(c => f => PublishRestoreRecord.stillThere(new Path(root), c, f))
      val missing = plan.restored.zip(there).collect { case (f, false) => f }
      if (missing.nonEmpty) throw new RestoreFilesMissingException(
        s"txcommit: restore of ${Paths.display(ctx.table)}: ${missing.size} file(s) it would re-add are no longer " +
          s"on the store (${RemovedFile.names(missing)}): VACUUM deleted them once their removal was older than " +
          "its retention horizon (or they were replaced by other files of the same name). Nothing was " +
          "published; the table cannot be restored to that version.",
        missing.map(_.path))
      (plan.removed, plan.restored)
    }
  }

  /** Whether the file `f` names is at its path now: of its size and, without a txn id, of its time. */
  private def stillThere(table: Path, conf: Configuration, f: RemovedFile): Boolean = {
    val path = new Path(table, f.path)
    val st: Option[FileStatus] =
      try Some(path.getFileSystem(conf).getFileStatus(path))
      catch { case _: java.io.FileNotFoundException => None }
    st.exists(s => s.isFile && f.isFile(s.getLen, s.getModificationTime))
  }
}
