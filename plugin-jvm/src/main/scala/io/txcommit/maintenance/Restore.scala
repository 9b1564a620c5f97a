package io.txcommit.maintenance

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.{MaintenanceException, Paths}
import io.txcommit.commit.{DerivedWork, PublishRestoreRecord, ReplaceBase, RestoreRequest, StageTimings, TxnContext}
import io.txcommit.log.{CommitRecord, RemovedFile, SchemaMark, TableState, TableVersion, TxnId}
import io.txcommit.log.TableVersions.AsOf
import io.txcommit.read.{LogFirstReader, SnapshotAsOf, SnapshotHandle}
import io.txcommit.store.{Adapters, CommitStore, FileSteps}

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
      schema: Option[String] = None, now: () => Long = () => System.currentTimeMillis(),
      steps: FileSteps = FileSteps.Here): CommitRecord = {
    val state = new TableState(table, store, conf)
    val base = ReplaceBase(state.replaceLog.highest, state.commitTxns ++ state.replaceLog.byTxn.keySet)
    val startedAt = now()
    val txn = TxnId.generate(startedAt)
    val ctx = TxnContext(table, txn, s"restore-${java.util.UUID.randomUUID()}", CommitRecord.RestoreJobId, startedAt,
      conf, store)
    val timings = new StageTimings
    val record = PublishRestoreRecord.run(ctx, RestoreRequest(ctx.record(Nil, schema), target, base, steps), timings)
    io.txcommit.metrics.TxCommitMetrics.commits.inc()
    log.info(s"txcommit: restore of ${Paths.display(table)}: committed as txn $txn (sequence " +
      s"${record.sequence.getOrElse(0L)}): removed ${record.removed.size} file(s), re-added ${record.restored.size}")
    // The derived work of every kind of commit (TableCommit): the commits/ copy, _SUCCESS, the
    // checkpoint and the symlink manifests; a failure is logged and the next write rolls it forward.
    DerivedWork.apply(ctx, record, timings, DerivedWork.Inline)
    record
  }

  /**
   * Restores the table at `table` to the version `asOf` names (a transaction id or a time, as
   * `txcommit.asOf` takes them: docs/protocol.md, I30): its target is exactly what a read as of
   * that version shows, and its schema the one in force then. Fails with a
   * `TimeTravelException` when `asOf` names no version or VACUUM deleted files of it, and with
   * `RestoreFilesMissingException` when a file it needs is gone; nothing is published then.
   */
  def toVersion(table: Path, conf: Configuration, asOf: AsOf, statement: String,
      steps: FileSteps = FileSteps.Here): (TableVersion, CommitRecord) = {
    val store = Adapters.open(table, conf)
    val resolved = SnapshotAsOf.resolve(table, store, asOf, statement, ignoreCorrupt = false).getOrElse(
      throw new MaintenanceException(s"$statement: ${Paths.display(table)} has no committed transaction; " +
        "nothing was written. Check the path."))
    val as = new LogFirstReader(conf, false,
      SnapshotHandle(java.util.UUID.randomUUID().toString,
        Vector(resolved.snapshot)), () => throw new IllegalStateException("every file is inside the table"))
    val state = new TableState(table, store, conf)
    val listed = state.dataFiles()
    // Whole or nothing: every file of the version that VACUUM may have deleted is there as it was.
    resolved.listing.verify(Seq(""), listed, _ => None)
    val target = listed.filter(f => as.isVisible(new Path(table, f.path))).map(RemovedFile.of)
    (resolved.version, run(table, store, conf, target, schemaAsOf(resolved, state).map(_.ddl), steps = steps))
  }

  /**
   * The table's schema at the version restored to, by I27's rule (the schema guard's): of the
   * records of the versions up to it, the mark that committed last (`committedAt`, then txn),
   * whatever order the store dated them in. The snapshot's checkpoint, when it carries a mark,
   * stands for the records it covers (as for the guard); only the others are read.
   */
  private def schemaAsOf(resolved: SnapshotAsOf.Resolved, state: TableState): Option[SchemaMark] = {
    val marked = resolved.checkpoint.flatMap(c => c.schema.map(c -> _))
    val uncovered = resolved.versions.upTo(resolved.version).filterNot(v =>
      marked.exists { case (c, _) => v.sequence.fold(c.covers(v.txn))(_ <= c.through) })
    val records = uncovered.flatMap(v =>
      v.sequence.fold(state.record(v.txn))(s => state.replaceLog.records.find(_.sequence.contains(s))))
    SchemaMark.latest(marked.flatMap(_._2) ++ records.flatMap(SchemaMark.of))
  }
}
