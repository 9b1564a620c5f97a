package io.txcommit.commit

import org.apache.hadoop.fs.Path

import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{CommitRecord, DataFileName}

/**
 * Derived work, per directory: deletes files of this transaction that the record does not
 * name (failed or losing task attempts whose executor never cleaned up). Readers hide them
 * anyway; this only saves storage. Safe to stop half way and to run again.
 */
object CleanupAttempts extends CommitStage[CommitRecord, Int]("cleanup-attempts") {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Int = {
    if (!TxCommitConf.bool(ctx.conf, TxCommitConf.CleanupAttempts, default = true)) return 0
    val committed = record.added.iterator.map(_.path).toSet
    var deleted = 0
    record.directories.zipWithIndex.foreach { case (dir, i) =>
      if (i == 1) HaltPoint.maybeHalt(ctx.conf, HaltPoint.JobDuringCleanup)
      val dirPath = if (dir.isEmpty) ctx.table else new Path(ctx.table, dir)
      ctx.store.list(dirPath).foreach { st =>
        val name = st.getPath.getName
        val rel = if (dir.isEmpty) name else s"$dir/$name"
        if (DataFileName.txnOf(name).contains(record.txn) && !committed.contains(rel)) {
          if (ctx.store.delete(st.getPath)) deleted += 1
        }
      }
    }
    if (deleted > 0) log.debug(s"txcommit: ${ctx.describe}: deleted $deleted file(s) of failed attempts")
    deleted
  }
}
