package io.txcommit.commit

import io.txcommit.log.CommitRecord

/**
 * What a replacing job saw when it started: the highest sequence of the replacement log, the
 * transactions then committed, and the prepared records of groups then undecided (`open`: they
 * may commit while the job runs). Commits after it are checked for conflicts, and files of
 * appends committed after it are never removed (they are serialized after this job).
 */
final case class ReplaceBase(sequence: Long, committedTxns: Set[String], open: Set[String] = Set.empty) {

  /** Whether `txn` committed before the job started (later commits are serialized after it: their files survive). */
  def precedes(txn: String, log: io.txcommit.log.ReplaceLog): Boolean =
    !open(txn) && (committedTxns(txn) || log.byTxn.get(txn).exists(_.sequence.exists(_ <= sequence)))

  /** Whether the replacing commit `r` committed after the job started: after its base, or a group's decided since. */
  def since(r: CommitRecord): Boolean = r.sequence.exists(_ > sequence) || open(r.txn)
}
