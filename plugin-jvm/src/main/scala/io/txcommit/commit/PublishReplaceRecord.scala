package io.txcommit.commit

import java.io.IOException
import java.time.Instant

import scala.annotation.tailrec

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.log.{CommitRecord, RecordCodec, RemovedFile, ReplaceLog, Replacement, TableState}

/**
 * Job commit of a replacing transaction (overwrite, dynamic partition overwrite, write id):
 * THE commit. Checks that no replacing commit since the job started overlaps its scope (or
 * carries its write id), computes the files it logically deletes (the files visible now in
 * its scope, and those added by earlier runs with its write id, except files of commits made
 * after it started, which are serialized after it), and creates
 * `_txcommit/replace/<highest+1>.json` exclusively. A lost race for that number re-runs the
 * check against the newcomer and tries the next number.
 */
object PublishReplaceRecord extends CommitStage[ReplaceRequest, CommitRecord] {
  override protected def execute(ctx: TxnContext, req: ReplaceRequest): CommitRecord = attempt(ctx, req, 0)

  @tailrec
  private def attempt(ctx: TxnContext, req: ReplaceRequest, tries: Int): CommitRecord = {
    val state = new TableState(ctx.table, ctx.store, ctx.conf)
    val replaced = state.replaceLog
    val scope = req.intent.scope(req.record.directories)
    conflict(replaced, req, scope).foreach(winner => throw conflictError(ctx, req, scope, winner))
    val removed = toRemove(ctx, state, req, scope)
    val seq = replaced.highest + 1
    val record = req.record.copy(
      operation = req.intent.operation,
      writeId = req.intent.writeId,
      committedAt = System.currentTimeMillis(),
      replacement = Some(Replacement(seq, scope, removed)))
    val target = ctx.layout.replaceRecord(seq)
    val outcome: Option[CommitRecord] =
      try { ctx.store.createExclusive(target, RecordCodec.encode(record)); Some(record) }
      catch {
        case _: CommitConflictException if tries < 100 =>
          log.info(s"txcommit: ${ctx.describe}: replacement sequence $seq was taken by another " +
            "commit; checking it for conflicts and trying the next number")
          None
        case e: IOException if !e.isInstanceOf[CommitConflictException] && owns(ctx, seq, record) =>
          log.warn(s"txcommit: ${ctx.describe}: publish reported '${e.getMessage}', but " +
            s"${Paths.display(target)} is this job's own record; the transaction is committed")
          Some(record)
      }
    outcome match {
      case Some(r) => r
      case None => attempt(ctx, req, tries + 1)
    }
  }

  def conflictError(ctx: TxnContext, req: ReplaceRequest, scope: Seq[String],
      winner: CommitRecord): CommitConflictException =
    new CommitConflictException(s"${ctx.describe} conflicts with txn ${winner.txn} " +
      s"(replacement sequence ${winner.sequence.getOrElse(0L)}, committed at " +
      s"${Instant.ofEpochMilli(winner.committedAt)}, ${describe(winner)}), which replaced data " +
      s"this job also replaces (${describe(req.intent.operation, scope, req.intent.writeId)}) after this job " +
      "started. This job's files stay hidden; re-run it to apply it on top of the winner.")

  /** The first replacing commit since the job started that overlaps it, if any. */
  def conflict(log: ReplaceLog, req: ReplaceRequest, scope: Seq[String]): Option[CommitRecord] =
    log.after(req.base.sequence).find { r =>
      r.txn != req.record.txn && (
        ReplaceLog.scopesOverlap(r.replacement.map(_.scope).getOrElse(Nil), scope) ||
          (req.intent.writeId.isDefined && r.writeId == req.intent.writeId))
    }

  /** The files this commit logically deletes, sorted by path. */
  private def toRemove(ctx: TxnContext, state: TableState, req: ReplaceRequest,
      scope: Seq[String]): Seq[RemovedFile] = {
    val log = state.replaceLog
    // Commits made after the job started are serialized after it: their files survive.
    def committedBefore(txn: String): Boolean =
      req.base.committedTxns(txn) || log.byTxn.get(txn).exists(_.sequence.exists(_ <= req.base.sequence))
    val inScope = scope.flatMap(d => state.dataFiles(d)).filter { f =>
      f.txn match {
        case Some(t) if t == ctx.txn => false
        case Some(t) => committedBefore(t) && state.isVisible(f)
        case None => state.isVisible(f)
      }
    }.map(f => RemovedFile(f.path, f.size))
    val byWriteId = req.intent.writeId.toSeq.flatMap(log.withWriteId).flatMap(_.added)
      .filterNot(f => log.removedPaths.contains(f.path))
      .map(f => RemovedFile(f.path, f.size))
    (inScope ++ byWriteId).groupBy(_.path).values.map(_.head).toSeq.sortBy(_.path)
  }

  private def owns(ctx: TxnContext, seq: Long, record: CommitRecord): Boolean =
    try ctx.store.read(ctx.layout.replaceRecord(seq)).exists { bytes =>
      RecordCodec.decodeReplacement(bytes, Paths.display(ctx.layout.replaceRecord(seq)), seq).token ==
        record.token
    } catch { case _: Exception => false }

  def scopeText(scope: Seq[String]): String =
    if (scope.isEmpty) "no directory"
    else scope.map(d => if (d.isEmpty) "the whole table" else s"'$d'").mkString(", ")

  def describe(r: CommitRecord): String =
    describe(r.operation, r.replacement.map(_.scope).getOrElse(Nil), r.writeId)

  def describe(operation: String, scope: Seq[String], writeId: Option[String]): String =
    (if (scope.isEmpty) operation else s"$operation of ${scopeText(scope)}") +
      writeId.map(w => s", write id '$w'").getOrElse("")
}
