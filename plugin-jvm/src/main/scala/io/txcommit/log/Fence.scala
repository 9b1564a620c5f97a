package io.txcommit.log

import scala.annotation.tailrec

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.store.CommitStore

/**
 * VACUUM's claim on a transaction it is about to clean up as never committed (invariant I19).
 * A driver that was silent past the horizon may still be alive (paused, partitioned), and its
 * commit could land after VACUUM deleted its files: readers would then see part of a committed
 * transaction. So before deleting, VACUUM publishes a fence record for the transaction at its
 * commit points, with the same exclusive primitive a commit uses:
 *
 *  - `commits/<txn>.json`: an append's commit point. Whoever creates it first wins.
 *  - `replace/<next>.json` naming the transaction, for a job that may be a replacing commit:
 *    its commit re-reads `replace/` after every lost race, so it either published before the
 *    fence (VACUUM then finds it committed and deletes nothing) or meets the fence and fails.
 *
 * A fence commits nothing (no file added, none removed): readers hide the transaction's files,
 * and its late commit fails with an error that names VACUUM.
 */
object Fence {
  private val log = LoggerFactory.getLogger(getClass)

  /** `jobId` of VACUUM's fences; a streaming driver that takes over a batch fences with its own. */
  val ByVacuum = "vacuum"

  /** The fence of `txn`, set by `by` (a `jobId`) at `now`. */
  def record(txn: String, by: String, now: Long): CommitRecord =
    CommitRecord.written(txn, s"fence-${java.util.UUID.randomUUID()}", by, TxnId.startedAt(txn).getOrElse(0L), Nil,
      committedAt = now, operation = CommitRecord.Fence)

  /**
   * Fences `txn` at its append commit point: Right(()) when it is fenced (by this call or
   * before), Left(record) when it committed first.
   */
  def fenceAppend(layout: LogLayout, store: CommitStore, fence: CommitRecord): Either[CommitRecord, Unit] = {
    val commitPoint = layout.commitRecord(fence.txn)
    try { store.createExclusive(commitPoint, RecordCodec.encode(fence)); Right(()) }
    catch {
      case _: CommitConflictException =>
        val found = store.read(commitPoint).map(b => RecordCodec.decode(b, Paths.display(commitPoint), fence.txn))
          .getOrElse(throw new java.io.IOException(s"txcommit: ${Paths.display(commitPoint)} was " +
              "refused as existing but cannot be read"))
        if (found.isFence) Right(()) else Left(found)
    }
  }

  /** True when `txn` is fenced (by this call or before) and its files may go; false when it committed. */
  def claim(table: Path, store: CommitStore, conf: Configuration, txn: String, mayReplace: Boolean,
      now: Long): Boolean = {
    val layout = LogLayout(table)
    val fence = record(txn, ByVacuum, now)
    val fenced = fenceAppend(layout, store, fence).isRight &&
      (!mayReplace || fenceReplace(layout, store, fence, 0))
    if (fenced) io.txcommit.metrics.TxCommitMetrics.fences.inc()
    if (fenced) log.info(s"txcommit: VACUUM ${Paths.display(table)}: fenced txn $txn (never committed): " +
      "a late commit of it now fails")
    else log.warn(s"txcommit: VACUUM ${Paths.display(table)}: txn $txn committed while VACUUM " +
      "checked it; its files are kept")
    fenced
  }

  @tailrec
  private def fenceReplace(layout: LogLayout, store: CommitStore, record: CommitRecord, tries: Int): Boolean = {
    val replaced = ReplaceLog.load(layout, store.list, store.read, Paths.display, e => throw e)
    replaced.byTxn.get(record.txn) match {
      case Some(r) => r.isFence
      case None =>
        val seq = replaced.highest + 1
        val fence = record.copy(replacement = Some(Replacement(seq, Nil, Nil)))
        val won =
          try { store.createExclusive(layout.replaceRecord(seq), RecordCodec.encode(fence)); true }
          catch { case _: CommitConflictException if tries < 100 => false }
        if (won) true else fenceReplace(layout, store, record, tries + 1)
    }
  }
}
