package io.txcommit.log

/** One data file a transaction adds, relative to the table directory. */
final case class AddedFile(path: String, size: Long)
