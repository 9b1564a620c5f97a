package io.txcommit.commit

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.Paths
import io.txcommit.log.{AddedFile, CommitRecord, LogLayout}
import io.txcommit.store.CommitStore

/** Everything a job-level stage needs: one transaction on one table. */
final case class TxnContext(
    table: Path,
    txn: String,
    token: String,
    sparkJobId: String,
    startedAt: Long,
    conf: Configuration,
    store: CommitStore) {
  val layout: LogLayout = LogLayout(table)
  def describe: String = s"txn $txn on ${Paths.display(table)}"

  /** This transaction's commit record of `added`, committed now. */
  def record(added: Seq[AddedFile], schema: Option[String] = None): CommitRecord =
    CommitRecord.written(txn, token, sparkJobId, startedAt, added, schema = schema)
}
