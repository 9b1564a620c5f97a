package io.txcommit.commit

import io.txcommit.CommitConflictException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CommitRecord, GroupRef, Groups, TableState}

/**
 * What a replacing commit does when another group's undecided prepared record overlaps it
 * (docs/protocol.md, I36): it may not publish past it, so it asks the group's decision again
 * until `spark.txcommit.transaction.waitMs` has passed, deciding the group aborted itself once
 * its lease ran out (by this driver's clock against the store's time of the lease, I26). A
 * group still undecided then fails the commit with a conflict naming it; nothing is published.
 */
private[commit] object WaitForGroups {

  def decided(ctx: TxnContext, state: TableState, blocking: Seq[CommitRecord], scope: String): Unit = {
    val waitMs = TxCommitConf.groupWaitMs(ctx.conf)
    val allowance = TxCommitConf.maxClockSkewMs(ctx.conf)
    val deadline = System.currentTimeMillis() + waitMs
    val since = blocking.flatMap(r => r.group.map(_.id -> state.storeTime(r))).groupMapReduce(_._1)(_._2)(math.max)
    def undecided(ref: GroupRef): Boolean =
      state.groups.askAgain(ref).isEmpty && Groups.abortIfExpired(ref, state.groups.store(ref),
        since.getOrElse(ref.id, 0L), System.currentTimeMillis(), allowance).isEmpty
    var open = blocking.flatMap(_.group).distinctBy(_.id).filter(undecided)
    while (open.nonEmpty) {
      if (System.currentTimeMillis() >= deadline) {
        val g = open.head
        val r = blocking.find(_.group.exists(_.id == g.id)).get
        throw new CommitConflictException(s"${ctx.describe} replaces $scope, where the open " +
          s"${Groups.describe(g)} holds an overwrite not decided yet (txn ${r.txn}, replacement sequence " +
          s"${r.sequence.getOrElse(0L)}), still undecided after $waitMs ms (${TxCommitConf.GroupWaitMs}). This job's " +
          "files stay hidden; re-run it once that transaction committed or rolled back (or its lease of " +
          s"${g.leaseMs} ms ran out).")
      }
      Thread.sleep(math.max(1L, math.min(200L, deadline - System.currentTimeMillis())))
      open = open.filter(undecided)
    }
  }
}
