package io.txcommit.commit

import java.io.IOException
import java.time.Instant

import scala.annotation.tailrec

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.log.{CommitRecord, RecordCodec, RemovedFile, ReplaceLog, Replacement, TableSchema, TableState}

/**
 * Job commit of a replacing transaction (overwrite, dynamic partition overwrite, write id):
 * THE commit. Checks that no replacing commit since the job started overlaps its scope (or
 * carries its write id), computes the files it logically deletes (the files visible now in
 * its scope, and those added by earlier runs with its write id, except files of commits made
 * after it started, which are serialized after it), and creates
 * `_txcommit/replace/<highest+1>.json` exclusively. A lost race for that number re-runs the
 * check against the newcomer and tries the next number.
 *
 * Idempotent like [[PublishCommitRecord]]: a record of this transaction already in `replace/`
 * (a publish whose answer was lost) is this commit when it carries this job's token, and is
 * never counted as a conflict or as an earlier run of its write id; with another token it is
 * another driver's commit of the same transaction (a conflict).
 */
object PublishReplaceRecord extends CommitStage[ReplaceRequest, CommitRecord]("publish-replace-record") {
  override protected def execute(ctx: TxnContext, req: ReplaceRequest): CommitRecord =
    publish(ctx, req)((state, scope) => (toRemove(ctx, state, req, scope), Nil))

  /**
   * The publish loop of every replacing commit (an overwrite, a write-id run, a restore): at a
   * fresh snapshot of the log, the conflict check, the schema guard, then `changes` (the files
   * it removes and restores at that snapshot; it may throw, and then nothing is published), then
   * the exclusive create of the next `replace/` number, tried again on a lost race.
   */
  private[commit] def publish(ctx: TxnContext, req: ReplaceRequest)(
      changes: (TableState, Seq[String]) => (Seq[RemovedFile], Seq[RemovedFile])): CommitRecord =
    attempt(ctx, req, changes, 0)

  @tailrec
  private def attempt(ctx: TxnContext, req: ReplaceRequest,
      changes: (TableState, Seq[String]) => (Seq[RemovedFile], Seq[RemovedFile]), tries: Int): CommitRecord = {
    val state = new TableState(ctx.table, ctx.store, ctx.conf)
    val replaced = state.replaceLog
    replaced.byTxn.get(ctx.txn) match {
      case Some(own) if own.token == req.record.token =>
        log.warn(s"txcommit: ${ctx.describe}: its record is already in replace/ (sequence " +
          s"${own.sequence.getOrElse(0L)}: an earlier attempt landed); the transaction is committed")
        return own
      case Some(other) => throw RecordOwner.taken(ctx, other,
          Paths.display(ctx.layout.replaceRecord(other.sequence.getOrElse(0L))))
      case None =>
    }
    val scope = req.intent.scope(req.record.directories)
    conflict(replaced, req, scope).foreach(winner => throw conflictError(ctx, req, scope, winner))
    // The schema guard again, at this snapshot: a commit since the first check may have changed it.
    val schema = CheckSchema.decide(ctx,
      SchemaCheck(req.record.schema.map(TableSchema.parse),
        req.intent.replacesTable, req.intent.mergeSchema, state, req.intent.enforceNotNull,
        req.record.added.map(_.path)))
    val (removed, restored) = changes(state, scope)
    val seq = replaced.highest + 1
    val record = req.record.copy(
      operation = req.intent.operation,
      writeId = req.intent.writeId,
      committedAt = System.currentTimeMillis(),
      replacement = Some(Replacement(seq, scope, removed, restored)),
      schema = schema)
    val target = ctx.layout.replaceRecord(seq)
    val outcome: Option[CommitRecord] =
      try { ctx.store.createExclusive(target, RecordCodec.encode(record)); Some(record) }
      catch {
        case e: IOException => RecordOwner.ofReplace(ctx, seq, record.token) match {
            case RecordOwner.Mine =>
              log.warn(s"txcommit: ${ctx.describe}: publish reported '${e.getMessage}', but " +
                s"${Paths.display(target)} is this job's own record (its first attempt landed); the " +
                "transaction is committed")
              Some(record)
            // Another commit holds the number, so this job's request can never land there.
            case RecordOwner.Other(_) if tries < 100 =>
              log.debug(s"txcommit: ${ctx.describe}: replacement sequence $seq was taken by another " +
                "commit; checking it for conflicts and trying the next number")
              None
            case RecordOwner.Other(_) => throw e
            case RecordOwner.Absent | RecordOwner.Unreadable => throw RecordOwner.unknown(ctx, target, e)
          }
      }
    outcome match {
      case Some(r) => r
      case None => attempt(ctx, req, changes, tries + 1)
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
    val inScope = scope.flatMap(d => state.dataFiles(d)).filter { f =>
      f.txn match {
        case Some(t) if t == ctx.txn => false
        case Some(t) => req.base.precedes(t, log) && state.isVisible(f)
        case None => state.isVisible(f)
      }
    }.map(RemovedFile.of)
    // Files of earlier runs still visible: never removed, or re-added by a restore since (I31).
    val byWriteId = req.intent.writeId.toSeq.flatMap(log.withWriteId).filter(_.txn != ctx.txn).flatMap(_.added)
      .filterNot(f => log.net.removals.names(f.path))
      .map(f => RemovedFile(f.path, f.size))
    (inScope ++ byWriteId).groupBy(_.path).values.map(_.head).toSeq.sortBy(_.path)
  }

  def scopeText(scope: Seq[String]): String =
    if (scope.isEmpty) "no directory"
    else scope.map(d => if (d.isEmpty) "the whole table" else s"'$d'").mkString(", ")

  def describe(r: CommitRecord): String =
    describe(r.operation, r.replacement.map(_.scope).getOrElse(Nil), r.writeId)

  def describe(operation: String, scope: Seq[String], writeId: Option[String]): String =
    (if (scope.isEmpty) operation else s"$operation of ${scopeText(scope)}") +
      writeId.map(w => s", write id '$w'").getOrElse("")
}
