package io.txcommit.log

/** One file a replacing transaction logically deletes, relative to the table directory. */
final case class RemovedFile(path: String, size: Long)
