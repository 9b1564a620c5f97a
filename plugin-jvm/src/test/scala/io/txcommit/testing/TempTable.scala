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

  def commit(record: CommitRecord): Unit =
    store.createExclusive(layout.commitRecord(record.txn), RecordCodec.encode(record))

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
}
