package io.txcommit.log

/**
 * What a replacing commit replaces (record format 2): the overwritten directories (`scope`,
 * relative to the table, "" for all of it), its place in the total order of replacing commits
 * (`sequence`, the number of `_txcommit/replace/<sequence>.json`), and the files it logically
 * deletes. Present only on replacing commits; appends without a write id have none.
 */
final case class Replacement(sequence: Long, scope: Seq[String], removed: Seq[RemovedFile]) {
  def removedFiles: Int = removed.size
  def removedBytes: Long = removed.iterator.map(_.size).sum
}
