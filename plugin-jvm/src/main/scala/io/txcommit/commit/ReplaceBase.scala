package io.txcommit.commit

/**
 * What a replacing job saw when it started: the highest sequence of the replacement log and
 * the transactions then committed. Commits after it are checked for conflicts, and files of
 * appends committed after it are never removed (they are serialized after this job).
 */
final case class ReplaceBase(sequence: Long, committedTxns: Set[String])
