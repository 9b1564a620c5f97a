package io.txcommit.maintenance

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.log.{CommitRecord, LogLayout, TableState, TxnId}
import io.txcommit.read.SnapshotAsOf
import io.txcommit.store.Adapters

object History {

  /** Every transaction the log knows: committed and fenced ones (VACUUM's claim on a
   *  transaction it cleaned up as never committed; committedAt is then when it was fenced) in
   *  version order (docs/protocol.md, I30), then pending and aborted ones, oldest first. */
  def rows(table: Path, conf: Configuration): Seq[HistoryRow] = {
    val store = Adapters.open(table, conf)
    val state = new TableState(table, store, conf)
    val commits = state.commitsListing.flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName).map(_ -> st))
    // Writes of multi-table transactions (I33): one row per table, naming the transaction.
    val prepared =
      (state.replaceListed.records ++ commits.flatMap(c => state.commitRecordOf(c._1))).filter(_.isPrepared)
    val groupOf = prepared.map(r => r.txn -> r.group.get).toMap
    val versions = SnapshotAsOf.versionsOf(commits, state.replaceListing, state.replaceLog,
      groupOf.filter(g => !state.replaceListed.byTxn.contains(g._1)), state.groups)
    val byTxn = versions.versions.map(v => v.txn -> v).toMap // a txn's last version
    val records = state.committedRecords
    val changed = schemaChanges(records)
    val committed = records.map { r =>
      HistoryRow(r.txn, if (r.isFence) "fenced" else "committed", r.startedAt, Some(r.committedAt), Some(r.operation),
        r.writeId,
        Some(r.files.toLong), Some(r.bytes), state.rowCounts.get(r.txn), r.replacement.map(_.removedFiles.toLong),
        r.replacement.map(_.removedBytes), r.sequence, changed.get(r.txn), byTxn.get(r.txn).map(_.number),
        byTxn.get(r.txn).map(_.storeTime), r.replacement.map(_.restored.size.toLong), r.group.map(_.id))
    }.sortBy(r => (r.version.getOrElse(Long.MaxValue), r.txn))
    val done = committed.map(_.txn).toSet
    // A prepared write not committed: `prepared` while its transaction is undecided, else
    // `aborted` (decided aborted, or a write its decision does not name).
    val undecided = prepared.filterNot(r => done(r.txn)).map { r =>
      HistoryRow(r.txn, if (state.groups.undecided(r)) "prepared" else "aborted", r.startedAt, None, Some(r.operation),
        r.writeId, Some(r.files.toLong),
        Some(r.bytes), None, r.replacement.map(_.removedFiles.toLong), r.replacement.map(_.removedBytes), r.sequence,
        transaction = r.group.map(_.id))
    }
    val others = (state.pendingTxns ++ state.abortedTxns).toSeq.filterNot(t => done(t) || groupOf.contains(t)).map {
      t =>
        HistoryRow(t, if (state.abortedTxns(t)) "aborted" else "pending", TxnId.startedAt(t).getOrElse(0L),
          None, None, None, None, None, None, None, None, None)
    }
    committed ++ (undecided ++ others).sortBy(r => (r.startedAt, r.txn))
  }

  /**
   * The commits that changed the table's schema, with the schema each set: in commit order, a
   * record's schema when it differs from the one in force before it (records without one
   * change nothing). The same rule as `TableView.history` in Python.
   */
  def schemaChanges(records: Seq[CommitRecord]): Map[String, String] =
    records.sortBy(r => (r.committedAt, r.txn)).foldLeft((Option.empty[String], Map.empty[String, String])) {
      case ((current, out), r) => r.schema.filterNot(current.contains) match {
          case Some(s) => (Some(s), out + (r.txn -> s))
          case None => (current, out)
        }
    }._2

  /** The files a reader with the filter sees, by path. */
  def committedFiles(table: Path, conf: Configuration): Seq[CommittedFile] = {
    val state = new TableState(table, Adapters.open(table, conf), conf)
    state.dataFiles().filter(state.isVisible).map(f => CommittedFile(f.path, f.size, f.txn))
  }
}
