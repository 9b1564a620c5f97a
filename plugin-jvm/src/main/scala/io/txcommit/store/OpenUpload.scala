package io.txcommit.store

/** An upload a store holds open under a table: target path relative to the table, its id, start. */
final case class OpenUpload(path: String, uploadId: String, initiatedAt: Long)
