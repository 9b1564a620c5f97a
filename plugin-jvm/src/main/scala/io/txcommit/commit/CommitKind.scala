package io.txcommit.commit

import io.txcommit.fault.HaltPoint
import io.txcommit.log.CommitRecord

/**
 * What a job commit commits: a batch job's output, or one micro-batch of a streaming query.
 * Both run [[JobCommitter]]'s one sequence of stages. A micro-batch adds a step on each side of
 * the commit point: before it, the claim of its batch, which finds the commit of an earlier run
 * of the same batch (a replay after a crash) to keep instead of committing the batch twice;
 * after it, the batch's entry in Spark's sink log.
 */
trait CommitKind {

  /** The fault points right before the record is created and right after. */
  def beforeRecord: HaltPoint
  def afterRecord: HaltPoint

  /** Before the commit point: the earlier commit of this same work, if there is one. */
  def earlierCommit(ctx: TxnContext, timings: StageTimings): Option[CommitRecord]

  /** Right after the commit point, with the record that commits the work: this job's, or the
   *  earlier one kept instead. */
  def committed(record: CommitRecord): Unit
}

object CommitKind {

  /** A batch job: nothing beyond the stages on either side of the commit point. */
  object BatchJob extends CommitKind {
    val beforeRecord: HaltPoint = HaltPoint.JobBeforeRecord
    val afterRecord: HaltPoint = HaltPoint.JobAfterRecord
    def earlierCommit(ctx: TxnContext, timings: StageTimings): Option[CommitRecord] = None
    def committed(record: CommitRecord): Unit = ()
  }
}
