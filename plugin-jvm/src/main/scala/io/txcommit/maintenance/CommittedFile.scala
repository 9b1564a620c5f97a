package io.txcommit.maintenance

/** A visible (committed) file of a table: path relative to the table, size, transaction. */
final case class CommittedFile(path: String, size: Long, txn: Option[String])
