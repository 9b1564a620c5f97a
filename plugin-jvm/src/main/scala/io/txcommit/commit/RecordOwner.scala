package io.txcommit.commit

import org.apache.hadoop.fs.Path

import io.txcommit.{CommitConflictException, CommitOutcomeUnknownException, FencedException, Paths}
import io.txcommit.log.{CommitRecord, Fence, RecordCodec}

/**
 * Whose record a publish left in place, read back after the publish reported an error. The
 * token (random per driver and transaction) tells this job's record from any other's: a
 * resend of a request whose answer was lost meets the first attempt's record, which is this
 * job's commit and never a conflict.
 */
private[commit] sealed trait RecordOwner

private[commit] object RecordOwner {
  case object Mine extends RecordOwner

  /** Another driver's record of this transaction, or VACUUM's fence. */
  final case class Other(record: CommitRecord) extends RecordOwner
  case object Absent extends RecordOwner

  /** The record could not be read back (the store failed again, or the bytes are not a record). */
  case object Unreadable extends RecordOwner

  def ofCommit(ctx: TxnContext, token: String): RecordOwner = {
    val path = ctx.layout.commitRecord(ctx.txn)
    of(ctx, path, token, b => RecordCodec.decode(b, Paths.display(path), ctx.txn))
  }

  def ofReplace(ctx: TxnContext, sequence: Long, token: String): RecordOwner = {
    val path = ctx.layout.replaceRecord(sequence)
    of(ctx, path, token, b => RecordCodec.decodeReplacement(b, Paths.display(path), sequence))
  }

  private def of(ctx: TxnContext, path: Path, token: String, decode: Array[Byte] => CommitRecord): RecordOwner =
    try ctx.store.read(path) match {
        case None => Absent
        case Some(bytes) => val r = decode(bytes); if (r.token == token) Mine else Other(r)
      }
    catch { case scala.util.control.NonFatal(_) => Unreadable }

  /** The error of a commit that met another record of its own transaction. */
  def taken(ctx: TxnContext, other: CommitRecord, where: String): CommitConflictException =
    taken(ctx.describe, other, where)

  /** The same, for the transaction `describe` names (`txn <id> on <table>`). */
  def taken(describe: String, other: CommitRecord, where: String): CommitConflictException =
    if (other.isFence && other.jobId == Fence.ByVacuum)
      new FencedException(s"$describe was " +
        s"fenced by VACUUM at ${java.time.Instant.ofEpochMilli(other.committedAt)}: its driver was " +
        "silent for longer than VACUUM's retention horizon, so VACUUM took the transaction for dead " +
        "and deleted its files. Nothing of this job is visible; re-run the write, and give VACUUM a " +
        "horizon longer than your longest job.")
    else if (other.isFence) new FencedException(s"$describe was fenced at " +
      s"${java.time.Instant.ofEpochMilli(other.committedAt)} by another driver of the same streaming " +
      s"query, which took over the batch (${other.jobId}) while this driver was stalled. Nothing of " +
      "this attempt is visible; the batch is committed once, by the other driver. Run one driver " +
      "per query.")
    else new CommitConflictException(s"$describe is already committed by another driver " +
      s"($where exists and was not overwritten). This job's files stay hidden; re-run the write " +
      "if its data is still wanted.")

  def unknown(ctx: TxnContext, target: Path, cause: Throwable): CommitOutcomeUnknownException =
    new CommitOutcomeUnknownException(
      s"${ctx.describe} may have committed: publishing " +
        s"${Paths.display(target)} failed with '${cause.getMessage}' and the record could not be " +
        "read back to tell. Readers see the whole job or none of it. Its files are kept (VACUUM " +
        "removes them if no record appears). Re-run the write with the same write id " +
        "(txcommit.writeId), which replaces exactly what a committed run wrote; without one, check " +
        "TXCOMMIT HISTORY before re-running an append.",
      cause)
}
