package io.txcommit.commit

import io.txcommit.log.{CommitRecord, RecordCodec}

/**
 * Derived work of a replacing commit: writes `commits/<txn>.json` with the bytes of its
 * `replace/<sequence>.json`, so tools that look only at `commits/` find it. Readers do not need
 * it (a record in `replace/` commits its transaction); rerunnable from the log (roll forward).
 */
object CopyReplaceRecord extends CommitStage[CommitRecord, Unit] {
  override protected def execute(ctx: TxnContext, record: CommitRecord): Unit =
    if (record.isReplacing && !ctx.store.exists(ctx.layout.commitRecord(record.txn))) {
      ctx.store.writeReplacing(ctx.layout.commitRecord(record.txn), RecordCodec.encode(record))
    }
}
