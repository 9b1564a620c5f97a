package io.txcommit.store

/**
 * One data file as a committed task attempt left it: its path relative to the table, its size,
 * and, where the store stages data, the opaque state needed to publish or discard it.
 */
final case class StagedFile(path: String, size: Long, pending: Option[String] = None)
