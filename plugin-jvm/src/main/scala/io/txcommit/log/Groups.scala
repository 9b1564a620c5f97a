package io.txcommit.log

import java.io.IOException
import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.{CommitConflictException, Paths}
import io.txcommit.store.{Adapters, CommitStore}

/**
 * How one snapshot of a table's log judges its prepared records (docs/protocol.md, I33): a
 * record of a group is committed iff the group's decision says `committed` and names its txn.
 * Each group's decision is asked once per snapshot: an answer "not decided yet" holds for the
 * whole snapshot (a group deciding meanwhile is not in it), a decided outcome is kept JVM-wide
 * forever ([[Groups.known]]): a decision is never rewritten.
 *
 * `own` is the group of the job this snapshot serves: its own earlier records count as committed
 * for it (a transaction's later writes see its earlier ones as done: an overwrite after an append
 * of the same transaction removes the append's files, and two of its overwrites never conflict).
 */
final class GroupDecisions(storeOf: Path => CommitStore, val own: Option[String] = None) {
  private val asked = new ConcurrentHashMap[String, Option[Decision]]()
  private val stores = new ConcurrentHashMap[Path, CommitStore]()

  /** The store holding `ref`'s decision and lease. */
  def store(ref: GroupRef): CommitStore = stores.computeIfAbsent(ref.root, r => storeOf(r))

  /**
   * The decision of `ref`'s group as this snapshot knows it (None: not decided when asked). The
   * first answer holds for the snapshot, also when this JVM learns the decision afterwards (a
   * COMMIT in the same JVM): judged committed in one place and undecided in none, a record was
   * taken for never committed (VACUUM deleted a committed overwrite's files).
   */
  def decision(ref: GroupRef): Option[Decision] =
    asked.computeIfAbsent(ref.decision, _ => Groups.lookup(ref, store(ref)))

  /** Asks `ref`'s group again (a writer waiting for an undecided group to be decided). */
  def askAgain(ref: GroupRef): Option[Decision] = { asked.remove(ref.decision); decision(ref) }

  def isOwn(r: CommitRecord): Boolean = r.group.exists(g => own.contains(g.id))

  /** Whether `r` commits in this snapshot: not prepared, of the own group, or its group committed it. */
  def committed(r: CommitRecord): Boolean = r.group.forall(commits(_, r.txn))

  /** Whether the prepared record of `txn` in group `ref` commits in this snapshot. */
  def commits(ref: GroupRef, txn: String): Boolean = own.contains(ref.id) || decision(ref).exists(_.commits(txn))

  /** Whether `r` is another group's prepared record, not decided when this snapshot asked. */
  def undecided(r: CommitRecord): Boolean =
    r.group.exists(g => !own.contains(g.id) && decision(g).isEmpty)
}

object GroupDecisions {

  /** The decisions of groups met in `table`'s log, their stores opened from `conf` (`table`'s is `tableStore`). */
  def of(conf: Configuration, table: Path, tableStore: CommitStore, own: Option[String] = None): GroupDecisions =
    new GroupDecisions(root => if (root == table) tableStore else Adapters.open(root, conf), own)
}

/** Reading, deciding and keeping alive groups' decisions (docs/protocol.md, I33, I34). */
object Groups {

  /** At most this many decided outcomes (weighed by participants) stay cached in a JVM. */
  val CacheMaxWeight: Long = 1000000L
  private val Decided = new BoundedCache[String, Decision](CacheMaxWeight, d => 1L + d.participants.size)

  /** Forgets `ref`'s decision in this JVM (tests: a JVM that has not read it yet). */
  private[txcommit] def forget(ref: GroupRef): Unit = Decided.remove(ref.decision)

  /** The decision of `ref`'s group if this JVM has read it: decided outcomes never change. */
  def known(ref: GroupRef): Option[Decision] = Decided.get(ref.decision)

  /** Reads `ref`'s decision (one GET); None when it does not exist yet. A decided one is kept. */
  def lookup(ref: GroupRef, store: CommitStore): Option[Decision] =
    known(ref).orElse(store.read(ref.decisionPath).map { b =>
      val d = Decision.read(b, ref)
      Decided.put(ref.decision, d)
      d
    })

  /**
   * Creates `d` as `ref`'s decision with the store's exclusive primitive, and returns the decision
   * in force: `d`, or the one a rival created first (a caller compares tokens). An error whose
   * outcome the read-back cannot tell (nothing there yet, or unreadable) is thrown as it came:
   * the request may still land.
   */
  def decide(ref: GroupRef, store: CommitStore, d: Decision): Decision = {
    try {
      store.createExclusive(ref.decisionPath, Decision.encode(d))
      Decided.put(ref.decision, d)
      d
    } catch {
      case e: IOException =>
        val found =
          try store.read(ref.decisionPath).map(Decision.read(_, ref))
          catch { case scala.util.control.NonFatal(_) => None }
        found match {
          case Some(f) => Decided.put(ref.decision, f); f
          case None => throw e
        }
    }
  }

  /**
   * The store's times of the decisions of `refs` (by decision URL): one listing per directory of
   * decisions. A decision the listing lacks, or a store that keeps no time, is left out.
   */
  def decisionTimes(refs: Seq[GroupRef], storeOf: GroupRef => CommitStore): Map[String, Long] =
    refs.distinctBy(_.decision).groupBy(_.decisionPath.getParent).flatMap { case (dir, rs) =>
      val listed = storeOf(rs.head).list(dir).map(st => st.getPath.getName -> st.getModificationTime).toMap
      rs.flatMap(r => listed.get(r.decisionPath.getName).filter(_ > 0L).map(r.decision -> _))
    }

  /** Rewrites the group's lease: its store time is the group's newest sign of life. */
  def renewLease(ref: GroupRef, store: CommitStore): Unit =
    store.writeReplacing(ref.leasePath,
      RecordCodec.marker("group" -> ref.id, "leaseMs" -> ref.leaseMs,
        "renewedAt" -> System.currentTimeMillis()))

  /** The store's time of the group's lease (None: none written, or the store keeps no time). */
  def leaseTime(ref: GroupRef, store: CommitStore): Option[Long] =
    store.list(ref.leasePath.getParent).find(_.getPath.getName == ref.leasePath.getName)
      .map(_.getModificationTime).filter(_ > 0L)

  /**
   * Decides `ref`'s group `aborted` when its lease ran out: the group showed no life (its lease,
   * else `since`, the store time of a prepared record of it) for longer than its `leaseMs` plus
   * `allowanceMs`, by `now` (the caller's clock against the store's, I26). Returns the decision
   * in force (this abort, or whatever was decided first), or None when the lease still lives.
   */
  def abortIfExpired(ref: GroupRef, store: CommitStore, since: Long, now: Long, allowanceMs: Long): Option[Decision] =
    lookup(ref, store).orElse {
      val last = math.max(leaseTime(ref, store).getOrElse(0L), since)
      if (last + ref.leaseMs + allowanceMs >= now) None
      else Some(decide(ref, store, aborted(ref, Decision.ByLeaseExpiry, now)))
    }

  /** An `aborted` decision of `ref`'s group by `by`, at `now`. */
  def aborted(ref: GroupRef, by: String, now: Long): Decision =
    Decision(ref.id, Decision.Aborted, s"abort-${java.util.UUID.randomUUID()}", now, by, io.txcommit.SparkApp.id,
      io.txcommit.Version.writer, Nil)

  /** What an error names a group by. */
  def describe(ref: GroupRef): String = s"transaction ${ref.id} (decision ${Paths.display(ref.decisionPath)})"

  /** A decision that exists with another token than the decider's. */
  def taken(ref: GroupRef, found: Decision): CommitConflictException =
    new CommitConflictException(s"${describe(ref)} was already decided ${found.outcome} " +
      s"(${found.decidedBy}, at ${java.time.Instant.ofEpochMilli(found.decidedAt)})")
}
