package io.txcommit.testing

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.commit.TxnContext
import io.txcommit.log.{AddedFile, CommitRecord, LogLayout, RecordCodec, RemovedFile, Replacement, TxnId}

/**
 * A table whose store is an [[InMemoryCommitStore]], for running one commit stage alone. Its
 * path names no real directory, so what a stage lists through Hadoop (data files for
 * `TableState.dataFiles`) is empty.
 */
final class MemTable(staging: Boolean = false) {
  val table: Path = new Path(s"file:/in-memory/t-${UUID.randomUUID()}")
  val store = new InMemoryCommitStore(staging = staging)
  val conf = new Configuration()
  val layout: LogLayout = LogLayout(table)

  def context(txn: String = TxnId.generate(), token: String = ""): TxnContext =
    TxnContext(table, txn, if (token.isEmpty) TempTable.tokenOf(txn) else token, "job", 1L, conf, store)

  def path(rel: String): Path = new Path(table, rel)

  /** A data file written in place (stores that do not stage). */
  def put(rel: String, bytes: Int = 3): Path = {
    store.writeReplacing(path(rel), Array.fill[Byte](bytes)(1))
    path(rel)
  }

  def text(p: Path): Option[String] = store.read(p).map(new String(_, UTF_8))

  def record(txn: String, files: String*): CommitRecord =
    CommitRecord(txn, TempTable.tokenOf(txn), "job", 1L, 2L, files.map(AddedFile(_, 3L)), None, "test")

  /** An append committed in `commits/`. */
  def commit(record: CommitRecord): Unit =
    store.createExclusive(layout.commitRecord(record.txn), RecordCodec.encode(record))

  /** A replacing commit in `replace/<sequence>.json`. */
  def commitReplacing(txn: String, sequence: Long, scope: Seq[String], writeId: Option[String] = None,
      files: Seq[String] = Nil, removed: Seq[String] = Nil): CommitRecord = {
    val r = record(txn, files: _*).copy(
      operation = if (writeId.isDefined && scope.isEmpty) CommitRecord.WriteIdOp else CommitRecord.OverwritePartitions,
      writeId = writeId, replacement = Some(Replacement(sequence, scope, removed.map(RemovedFile(_, 3L)))))
    store.createExclusive(layout.replaceRecord(sequence), RecordCodec.encode(r))
    r
  }
}
