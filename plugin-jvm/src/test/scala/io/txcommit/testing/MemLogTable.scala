package io.txcommit.testing

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path => JPath}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.commit.TxnContext
import io.txcommit.log.{AddedFile, CommitRecord, DataFileName, LogLayout, RecordCodec, RemovedFile, Replacement, TxnId}

/**
 * A table whose data files lie in a local directory (listed through Hadoop, as `TableState`
 * lists data) and whose log and derived files (`_SUCCESS`, manifests) are held by an
 * [[InMemoryCommitStore]], so a stage that reads both runs alone with the store's failures
 * and call log at hand.
 */
final class MemLogTable {
  val dir: JPath = Files.createTempDirectory("txcommit-memlog")
  val table: Path = new Path(dir.toUri.toString.stripSuffix("/"))
  val conf = new Configuration()
  val layout: LogLayout = LogLayout(table)
  val store = new InMemoryCommitStore

  def context(txn: String = TxnId.generate()): TxnContext =
    TxnContext(table, txn, TempTable.tokenOf(txn), "job", 1L, conf, store)

  /** A file on disk (a data file, or anything else a directory may hold). */
  def touch(rel: String): String = {
    val f = dir.resolve(rel)
    Files.createDirectories(f.getParent)
    Files.write(f, Array.fill[Byte](3)(1))
    rel
  }

  /** A data file of `txn` in partition directory `partition` ("" for the table's own). */
  def dataFile(partition: String, txn: String, split: Int = 0, attempt: Long = 1L): String =
    touch((if (partition.isEmpty) "" else partition + "/") + DataFileName("", split, txn, attempt, "-c000.parquet"))

  /** An append with one data file for each partition given, written and committed. */
  def append(partitions: String*): CommitRecord = {
    val txn = TxnId.generate()
    val r = record(txn, partitions.zipWithIndex.map { case (p, i) => dataFile(p, txn, split = i) })
    store.createExclusive(layout.commitRecord(txn), RecordCodec.encode(r))
    r
  }

  /**
   * A replacing commit of `scope` adding one file to each of `partitions` and removing `removed`,
   * published as PublishReplaceRecord and CopyReplaceRecord publish it.
   */
  def replace(sequence: Long, scope: Seq[String], partitions: Seq[String], removed: Seq[String]): CommitRecord = {
    val txn = TxnId.generate()
    val r = record(txn, partitions.map(dataFile(_, txn))).copy(
      operation = if (scope == Seq("")) CommitRecord.Overwrite else CommitRecord.OverwritePartitions,
      replacement = Some(Replacement(sequence, scope, removed.map(RemovedFile(_, 3L)))))
    store.createExclusive(layout.replaceRecord(sequence), RecordCodec.encode(r))
    store.createExclusive(layout.commitRecord(txn), RecordCodec.encode(r))
    r
  }

  def record(txn: String, files: Seq[String]): CommitRecord =
    CommitRecord(txn, TempTable.tokenOf(txn), "job", 1L, 2L, files.map(AddedFile(_, 3L)), None, "test")

  /** A file as a manifest names it: fully qualified by the table's file system. */
  def qualified(rel: String): String = table.getFileSystem(conf).makeQualified(new Path(table, rel)).toString

  /** The lines of a partition's manifest; None when it has none. */
  def manifest(partition: String): Option[Seq[String]] =
    store.read(layout.manifest(partition)).map(b => new String(b, UTF_8).split("\n").toSeq.filter(_.nonEmpty))
}
