package io.txcommit.commit

import java.io.IOException

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.log.{CommitRecord, RecordCodec}

/**
 * Job commit, stage 2: THE commit. Creates `_txcommit/commits/<txn>.json` exclusively through
 * the store's primitive. Before this returns nothing of the job is visible; after it, all is.
 */
object PublishCommitRecord extends CommitStage[CommitRecord, Unit] {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Unit = {
    val target = ctx.layout.commitRecord(ctx.txn)
    try ctx.store.createExclusive(target, RecordCodec.encode(record))
    catch {
      case e: CommitConflictException =>
        throw new CommitConflictException(s"${ctx.describe} is already committed: " +
          s"${Paths.display(target)} exists and was not overwritten. This job's files stay hidden; " +
          s"re-run the write if its data is still wanted. (${e.getMessage})")
      case e: IOException if ownsRecord(ctx, record) =>
        // The publish reported an error, but the record that exists is ours: it did commit.
        log.warn(s"txcommit: ${ctx.describe}: publish reported '${e.getMessage}', but the record " +
          "in place is this job's own; the transaction is committed")
    }
  }

  private def ownsRecord(ctx: TxnContext, record: CommitRecord): Boolean =
    try ctx.store.read(ctx.layout.commitRecord(ctx.txn)).exists { bytes =>
      RecordCodec.decode(bytes, Paths.display(ctx.layout.commitRecord(ctx.txn)), ctx.txn).token ==
        record.token
    } catch { case _: Exception => false }
}
