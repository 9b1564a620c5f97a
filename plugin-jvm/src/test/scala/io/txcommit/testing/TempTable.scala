package io.txcommit.testing

import java.nio.file.{Files, Path => JPath}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.commit.TxnContext
import io.txcommit.log.{AddedFile, CommitRecord, LogLayout, RecordCodec, TxnId}
import io.txcommit.store.Adapters

/** A table directory on the local file system, and helpers to lay out a log in it. */
final class TempTable {
  val dir: JPath = Files.createTempDirectory("txcommit-test")
  val table: Path = new Path(dir.toUri.toString.stripSuffix("/"))
  val conf = new Configuration()
  val layout: LogLayout = LogLayout(table)
  val store = Adapters.open(table, conf)

  def touch(rel: String, bytes: Int = 3): Path = {
    val f = dir.resolve(rel)
    Files.createDirectories(f.getParent)
    Files.write(f, Array.fill[Byte](bytes)(1))
    new Path(table, rel)
  }

  def record(txn: String, files: String*): CommitRecord =
    CommitRecord(txn, TempTable.tokenOf(txn), "job", 1L, 2L, files.map(AddedFile(_, 3L)), None, "test")

  def commit(record: CommitRecord): Unit = publishRecord(layout.commitRecord(record.txn), record)

  /**
   * Publishes a log file as the store stamps it, at `storedAt`: reads without a log-first
   * snapshot take another application's commit at its store time ([[io.txcommit.read.ReadCut]]).
   * A record's is its `committedAt` here, as a store stamps a writer whose clock is right.
   */
  def publish(path: Path, bytes: Array[Byte], storedAt: Long): Unit = {
    store.createExclusive(path, bytes)
    TempTable.stamp(path, storedAt)
  }

  def publishRecord(path: Path, record: CommitRecord): Unit =
    publish(path, RecordCodec.encode(record), record.committedAt)

  def writeRaw(rel: String, text: String): Unit = {
    val f = dir.resolve(rel)
    Files.createDirectories(f.getParent)
    Files.write(f, text.getBytes("UTF-8"))
  }

  def context(txn: String = TxnId.generate()): TxnContext =
    TxnContext(table, txn, TempTable.tokenOf(txn), "job", 1L, conf, store)
}

object TempTable {

  /** Each transaction's driver has its own token (a random UUID in the plugin). */
  def tokenOf(txn: String): String = s"token-$txn"

  /** Sets a local file's modification time (its store time). */
  def stamp(path: Path, storedAt: Long): Unit =
    if (!new java.io.File(path.toUri).setLastModified(storedAt)) sys.error(s"cannot date $path")
}
