package io.txcommit.commit

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointWriter, CommitRecord, GroupDecisions}

/**
 * Derived work: about every `spark.txcommit.checkpoint.interval` commits, a commit writes the
 * table's next checkpoint ([[CheckpointWriter]]). Appends have no total order, so no commit knows
 * its number; a commit writes one when the random part of its transaction id falls in 1/n of
 * its range, which costs no request to decide and decides alike when the commit is rolled forward.
 */
object WriteCheckpoint extends CommitStage[CommitRecord, Option[CheckpointWriter.Outcome]]("write-checkpoint") {
  def due(txn: String, interval: Long): Boolean =
    interval > 0 && (interval == 1 ||
      scala.util.Try(java.lang.Long.parseLong(txn.substring(8), 36)).toOption.exists(_ % interval == 0))

  override protected def execute(ctx: TxnContext, record: CommitRecord): Option[CheckpointWriter.Outcome] =
    if (!due(record.txn, TxCommitConf.checkpointInterval(ctx.conf))) None
    // Judged as any reader judges, never by the transaction's own view (where its undecided
    // records count as done): a checkpoint covers a prepared record only once its group committed it.
    else Some(CheckpointWriter.write(ctx.table, ctx.store, io.txcommit.SparkApp.id,
        groups = Some(GroupDecisions.of(ctx.conf, ctx.table, ctx.store))))
}
