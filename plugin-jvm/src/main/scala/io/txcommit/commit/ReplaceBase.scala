package io.txcommit.commit

/**
 * What a replacing job saw when it started: the highest sequence of the replacement log and
 * the transactions then committed. Commits after it are checked for conflicts, and files of
 * appends committed after it are never removed (they are serialized after this job).
 */
final case class ReplaceBase(sequence: Long, committedTxns: Set[String]) {

  /** Whether `txn` committed before the job started (later commits are serialized after it: their files survive). */
  def precedes(txn: String, log: io.txcommit.log.ReplaceLog): Boolean =
    committedTxns(txn) || log.byTxn.get(txn).exists(_.sequence.exists(_ <= sequence))
}
