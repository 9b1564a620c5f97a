package io.txcommit.streaming

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.commit.{CommitKind, StageTimings, TxnContext}
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{AddedFile, CommitRecord}

/**
 * One micro-batch of the streaming sink as a job commit: its batch is claimed before the commit
 * point ([[ClaimStreamingBatch]], which finds the commit of an earlier run of the batch to keep),
 * and `addToSinkLog` enters the committed files in Spark's sink log (`_spark_metadata`) after it.
 */
private[txcommit] final class MicroBatch(table: Path, batchId: Long, addToSinkLog: Seq[AddedFile] => Unit)
  extends CommitKind {
  private val log = LoggerFactory.getLogger(getClass)

  val beforeRecord: HaltPoint = HaltPoint.StreamingBeforeRecord
  val afterRecord: HaltPoint = HaltPoint.StreamingBeforeSinkLog

  def earlierCommit(ctx: TxnContext, timings: StageTimings): Option[CommitRecord] =
    ClaimStreamingBatch.run(ctx, batchId, timings).map { record =>
      log.warn(s"txcommit: streaming batch $batchId of ${Paths.display(table)} was committed before as txn " +
        s"${record.txn} (a crash came before Spark's sink log); keeping that commit and discarding the files " +
        s"of this replay (txn ${ctx.txn})")
      record
    }

  def committed(record: CommitRecord): Unit = addToSinkLog(record.added)
}
