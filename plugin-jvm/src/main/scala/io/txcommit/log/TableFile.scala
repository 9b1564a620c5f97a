package io.txcommit.log

/** A file under a table: its path relative to the table, size and modification time. */
final case class TableFile(path: String, size: Long, modifiedAt: Long) {
  def name: String = path.substring(path.lastIndexOf('/') + 1)
  def txn: Option[String] = DataFileName.txnOf(name)
}
