package io.txcommit.testing

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage

import io.txcommit.commit.{DerivedWork, JobCommitter, JobSetup, OpenGroup, TaskManifest, TxnContext, WriteIntent}
import io.txcommit.log.{CommitRecord, TableFile, TableState}
import io.txcommit.store.StagedFile

/**
 * Write jobs on local tables run as the protocol runs them (job setup, then job commit), alone
 * or as writes of a multi-table transaction ([[OpenGroup]]): what `TxCommitProtocol` does in a
 * Spark job, without Spark.
 */
object GroupJobs {

  /** A data file name of `txn` in directory `dir` ("" for the table). */
  def file(dir: String, txn: String, n: Int = 0): String =
    (if (dir.isEmpty) "" else s"$dir/") + s"part-0000$n-tid-$txn-$n.c000.parquet"

  /**
   * One job on `t` writing a file in each of `dirs` ("" for the table), committed alone or, with
   * `group`, prepared as one of its writes. Its record (None: nothing published).
   */
  def job(t: TempTable, dirs: Seq[String], intent: WriteIntent = WriteIntent(),
      group: Option[OpenGroup] = None): (TxnContext, CommitRecord) = {
    val plain = t.context()
    val ctx = plain.copy(group = group.map(_.join(t.table, t.conf, t.store)))
    val started =
      try JobSetup.run(ctx, intent, streaming = false)
      catch { case e: Throwable => group.foreach(_.ended(Some(e.getMessage))); throw e }
    started.heartbeat.foreach(_.stop())
    val files = dirs.zipWithIndex.map { case (d, i) => file(d, ctx.txn, i) }
    files.foreach(f => t.touch(f))
    val messages = Seq(new TaskCommitMessage(TaskManifest("attempt_0", files.map(StagedFile(_, 3L)))))
    val record =
      try JobCommitter.commit(ctx, messages, intent, started.base, cleanup = DerivedWork.Inline).get
      catch { case e: Throwable => group.foreach(_.ended(Some(e.getMessage))); throw e }
    group.foreach { g => g.add(ctx, record); g.ended(None) }
    (ctx, record)
  }

  /** Whether a reader of `t` now (no group of its own) sees `rel`. */
  def visible(t: TempTable, rel: String): Boolean =
    new TableState(t.table, t.store, t.conf).isVisible(TableFile(rel, 3L, 0L))

  /** The visible data files of `t` now, as a reader sees them. */
  def visibleFiles(t: TempTable): Seq[String] = {
    val s = new TableState(t.table, t.store, t.conf)
    s.dataFiles().filter(s.isVisible).map(_.path)
  }
}
