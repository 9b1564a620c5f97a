package io.txcommit.maintenance

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.commit.{
  CopyReplaceRecord,
  PublishRestoreRecord,
  ReplaceBase,
  RestoreRequest,
  StageTimings,
  TxnContext
}
import io.txcommit.log.{CommitRecord, RemovedFile, TableState, TxnId}
import io.txcommit.store.CommitStore

/**
 * Restores a table to a set of files without copying data (docs/protocol.md, I31): one
 * replacing commit of the whole table that removes every file visible now outside `target` and
 * re-adds every file of `target` a later replacing commit removed. `target` is what the table
 * showed at the version restored to, each file by path and, without a txn id, its identity.
 */
object Restore {
  private val log = LoggerFactory.getLogger(getClass)

  /** The restore's committed record; `schema`: the schema of the version restored to, when known (I27). */
  def run(table: Path, store: CommitStore, conf: Configuration, target: Seq[RemovedFile],
      schema: Option[String] = None, now: () => Long = () => System.currentTimeMillis()): CommitRecord = {
    val state = new TableState(table, store, conf)
    val base = ReplaceBase(state.replaceLog.highest, state.commitTxns ++ state.replaceLog.byTxn.keySet)
    val startedAt = now()
    val txn = TxnId.generate(startedAt)
    val ctx = TxnContext(table, txn, s"restore-${java.util.UUID.randomUUID()}", "restore", startedAt, conf, store)
    val timings = new StageTimings
    val record = PublishRestoreRecord.run(ctx, RestoreRequest(ctx.record(Nil, schema), target, base), timings)
    log.info(s"txcommit: restore of ${Paths.display(table)}: committed as txn $txn (sequence " +
      s"${record.sequence.getOrElse(0L)}): removed ${record.removed.size} file(s), re-added ${record.restored.size}")
    // Derived, as after any replacing commit: the next write rolls it forward if this fails.
    try CopyReplaceRecord.run(ctx, record, timings)
    catch {
      case scala.util.control.NonFatal(e) =>
        log.warn(s"txcommit: restore of ${Paths.display(table)}: commits/$txn.json not written (${e.getMessage}); " +
          "readers do not need it and the next write rolls it forward")
    }
    record
  }
}
