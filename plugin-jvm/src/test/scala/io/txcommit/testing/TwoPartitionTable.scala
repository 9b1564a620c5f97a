package io.txcommit.testing

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.fs.Path

import io.txcommit.log.{AddedFile, CommitRecord, DataFileName, RemovedFile, Replacement, TxnId}
import io.txcommit.read.CommittedFilesFilter

/**
 * A table of two partitions (`k=1`, `k=2`) appended long ago, for the read suites: overwrites and
 * appends of both partitions at chosen commit times, their records published as the commit
 * stages publish them. `appId` is the writers' application in every record.
 */
class TwoPartitionTable(appId: Option[String] = None) {
  import TwoPartitionTable.{file, record}

  val t = new TempTable
  val old: String = TxnId.generate()
  val oldFiles: Seq[String] = Seq(file(1, old), file(2, old))
  oldFiles.foreach(t.touch(_))
  t.commit(record(old, 2L, oldFiles, appId))

  /** An overwrite of `removed`, as `PublishReplaceRecord` then `CopyReplaceRecord` publish it. */
  def overwrite(sequence: Long, committedAt: Long, removed: Seq[String]): Seq[String] = {
    val (txn, files) = newFiles()
    val r = record(txn, committedAt, files, appId).copy(operation = CommitRecord.Overwrite,
      replacement = Some(Replacement(sequence, Seq(""), removed.map(RemovedFile(_, 3L)))))
    t.publishRecord(t.layout.replaceRecord(sequence), r)
    t.publishRecord(t.layout.commitRecord(txn), r)
    files
  }

  /** An append to both partitions: its files are written now, its record when `publish` runs. */
  def stagedAppend(committedAt: Long): (Seq[String], () => Unit) = {
    val (txn, files) = newFiles()
    (files, () => t.commit(record(txn, committedAt, files, appId)))
  }

  /** An append to both partitions, committed. */
  def append(committedAt: Long): Seq[String] = {
    val (files, publish) = stagedAppend(committedAt)
    publish()
    files
  }

  def visible(f: CommittedFilesFilter, rel: String): Boolean = f.accept(new Path(t.table, rel))

  private def newFiles(): (String, Seq[String]) = {
    val txn = TxnId.generate()
    val files = Seq(file(1, txn), file(2, txn))
    files.foreach(t.touch(_))
    (txn, files)
  }
}

object TwoPartitionTable {
  def file(k: Int, txn: String): String = s"k=$k/" + DataFileName("", k, txn, k.toLong, "-c000.parquet")

  def record(txn: String, committedAt: Long, files: Seq[String], appId: Option[String] = None): CommitRecord =
    CommitRecord(txn, s"token-$txn", "job", committedAt - 1, committedAt, files.map(AddedFile(_, 3L)), appId, "test")

  /** `f` serialised and read back, as Spark ships a filter to the executors that list. */
  def copyOf(f: CommittedFilesFilter): CommittedFilesFilter = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(f); out.close()
    new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[CommittedFilesFilter]
  }
}
