package io.txcommit.log

/**
 * What a replacing commit replaces (record format 2): the overwritten directories (`scope`,
 * relative to the table, "" for all of it), its place in the total order of replacing commits
 * (`sequence`, the number of `_txcommit/replace/<sequence>.json`), and the files it logically
 * deletes. A restore also re-adds files an earlier replacing commit removed (`restored`, record
 * format 3, written only when it is not empty: docs/protocol.md, I31). Present only on
 * replacing commits; appends without a write id have none.
 */
final case class Replacement(sequence: Long, scope: Seq[String], removed: Seq[RemovedFile],
    restored: Seq[RemovedFile] = Nil) {
  def removedFiles: Int = removed.size
  def removedBytes: Long = removed.iterator.map(_.size).sum
  def restoredFiles: Int = restored.size
}
