package io.txcommit.maintenance

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.log.{TableState, TxnId}
import io.txcommit.store.Adapters

object History {

  /** Every transaction the log knows, oldest first: committed, pending, aborted and fenced
   *  (VACUUM's claim on a transaction it cleaned up as never committed; committedAt is then
   *  when it was fenced). */
  def rows(table: Path, conf: Configuration): Seq[HistoryRow] = {
    val state = new TableState(table, Adapters.open(table, conf), conf)
    val committed = state.committedRecords.map { r =>
      HistoryRow(r.txn, if (r.isFence) "fenced" else "committed", r.startedAt, Some(r.committedAt), Some(r.operation),
        r.writeId,
        Some(r.files.toLong), Some(r.bytes), state.rowCounts.get(r.txn), r.replacement.map(_.removedFiles.toLong),
        r.replacement.map(_.removedBytes), r.sequence)
    }
    val done = committed.map(_.txn).toSet
    val others = (state.pendingTxns ++ state.abortedTxns).toSeq.filterNot(done).map { t =>
      HistoryRow(t, if (state.abortedTxns(t)) "aborted" else "pending", TxnId.startedAt(t).getOrElse(0L),
        None, None, None, None, None, None, None, None, None)
    }
    (committed ++ others).sortBy(r => (r.startedAt, r.txn))
  }

  /** The files a reader with the filter sees, by path. */
  def committedFiles(table: Path, conf: Configuration): Seq[CommittedFile] = {
    val state = new TableState(table, Adapters.open(table, conf), conf)
    state.dataFiles().filter(state.isVisible).map(f => CommittedFile(f.path, f.size, f.txn))
  }
}
