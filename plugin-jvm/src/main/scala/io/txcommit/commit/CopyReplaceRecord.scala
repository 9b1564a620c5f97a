package io.txcommit.commit

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.log.{CommitRecord, RecordCodec}

/**
 * Derived work of a replacing commit: writes `commits/<txn>.json` with the bytes of its
 * `replace/<sequence>.json`, so tools that look only at `commits/` find it. Readers do not need
 * it (a record in `replace/` commits its transaction); rerunnable from the log (roll forward).
 *
 * `commits/<txn>.json` is also where VACUUM fences a transaction it takes for dead (I19), so the
 * copy is created with the store's exclusive primitive, never a plain PUT over whatever is there.
 * What it may find instead: its own copy (an earlier run: done), or VACUUM's fence, written when
 * VACUUM then lost the race at `replace/` to this commit (VACUUM keeps the files of a commit it
 * finds there). The `replace/` record is the commit point, so that fence is stale and is replaced
 * by the copy, but only after reading back that `replace/` holds this very record; anything else
 * is left as it is and reported.
 */
object CopyReplaceRecord extends CommitStage[CommitRecord, Unit]("copy-replace-record") {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Unit =
    if (record.isReplacing) {
      val target = ctx.layout.commitRecord(record.txn)
      val bytes = RecordCodec.encode(record)
      try ctx.store.createExclusive(target, bytes)
      catch {
        case _: CommitConflictException =>
          val found = ctx.store.read(target).map(RecordCodec.decode(_, Paths.display(target), record.txn))
          found match {
            case Some(f) if f.isReplacing && !f.isFence => () // the copy exists
            case Some(f) if f.isFence && !record.isFence && committedAtReplace(ctx, record) =>
              log.info(s"txcommit: ${ctx.describe}: ${Paths.display(target)} held VACUUM's fence, " +
                s"which lost to ${Paths.display(ctx.layout.replaceRecord(record.sequence.get))}; " +
                "replacing it with the commit's copy")
              ctx.store.writeReplacing(target, bytes)
            case Some(f) if f.isFence && record.isFence => () // a fence copied onto a fence
            case other =>
              throw new CommitConflictException(s"${Paths.display(target)} holds " +
                other.fold("a record that cannot be read back")(f => s"a ${f.operation} record") +
                s" where the copy of replacing commit ${record.txn} belongs, and " +
                s"${Paths.display(ctx.layout.replaceRecord(record.sequence.getOrElse(0L)))} does not hold that " +
                "commit; left as it is. Readers follow replace/; check the table with `txcommit log`.")
          }
      }
    }

  /** Whether `replace/<sequence>.json` holds `record`'s transaction as a commit (not a fence). */
  private def committedAtReplace(ctx: TxnContext, record: CommitRecord): Boolean =
    record.sequence.exists { seq =>
      val path = ctx.layout.replaceRecord(seq)
      ctx.store.read(path).map(RecordCodec.decodeReplacement(_, Paths.display(path), seq))
        .exists(r => r.txn == record.txn && !r.isFence)
    }
}
