package io.txcommit.commit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.Paths
import io.txcommit.log.{AddedFile, CommitRecord, GroupDecisions, GroupRef, LogLayout, TableState}
import io.txcommit.store.CommitStore

/**
 * Everything a job-level stage needs: one transaction on one table. `group` is set for a job of
 * a multi-table transaction: it publishes a prepared record, which its group's decision commits
 * (docs/protocol.md, I33).
 */
final case class TxnContext(
    table: Path,
    txn: String,
    token: String,
    sparkJobId: String,
    startedAt: Long,
    conf: Configuration,
    store: CommitStore,
    group: Option[GroupRef] = None) {
  val layout: LogLayout = LogLayout(table)
  def describe: String = s"txn $txn on ${Paths.display(table)}" + group.fold("")(g => s" (transaction ${g.id})")

  /** This transaction's commit record of `added`, committed now (prepared, for a job of a group). */
  def record(added: Seq[AddedFile], schema: Option[String] = None): CommitRecord =
    CommitRecord.written(txn, token, sparkJobId, startedAt, added, schema = schema).copy(group = group)

  /** A snapshot of the table's log as this job judges it: its own group's earlier records count as committed. */
  def state(): TableState =
    new TableState(table, store, conf, Some(GroupDecisions.of(conf, table, store, group.map(_.id))))
}
