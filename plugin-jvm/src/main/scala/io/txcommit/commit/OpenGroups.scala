package io.txcommit.commit

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.{Paths, TransactionException}
import io.txcommit.log.{CommitRecord, GroupRef, Groups, Participant, TxnId}
import io.txcommit.store.{Adapters, CommitStore}

/**
 * One open multi-table transaction (a group, docs/protocol.md, I33) of this driver: what its
 * write jobs prepared, so that its COMMIT can name them in the decision and run their derived
 * work after it. Held in the driver's memory only: a driver that dies leaves the group
 * undecided, and its lease decides it aborted ([[io.txcommit.log.Groups.abortIfExpired]]).
 *
 * @param location the directory the user named for the decision; None: the first table written
 */
final class OpenGroup private[commit] (val id: String, val location: Option[Path], val leaseMs: Long,
    storeOf: (Path, Configuration) => CommitStore) {
  val token: String = s"transaction-${java.util.UUID.randomUUID()}"
  private var ref: Option[GroupRef] = None
  private var decisionStore: Option[CommitStore] = None
  private val parts = ArrayBuffer.empty[(TxnContext, CommitRecord)]
  private var running = 0
  private var failure: Option[String] = None
  private var closed: Option[String] = None

  /** The group's decision and lease, once its first write fixed where they live. */
  def decisionRef: Option[GroupRef] = synchronized(ref)

  /** The store of the group's decision and lease, once its first write opened it. */
  def store: Option[CommitStore] = synchronized(decisionStore)

  /** The prepared records so far, with the context of the job that wrote each. */
  def prepared: Seq[(TxnContext, CommitRecord)] = synchronized(parts.toSeq)

  def describe: String = s"transaction $id"

  /**
   * A write job of the group starts on `table`: fixes where the decision lives (the first table,
   * unless the user named a directory), renews the lease before anything of the job exists, and
   * returns what the job's prepared record names. Refused once the group failed or was decided.
   */
  def join(table: Path, conf: Configuration, tableStore: CommitStore): GroupRef = synchronized {
    closed.foreach(how =>
      throw new TransactionException(s"$describe was $how; the write to " +
        s"${Paths.display(table)} cannot join it. Begin a new transaction (TXCOMMIT BEGIN)."))
    failure.foreach(why =>
      throw new TransactionException(s"a write of $describe failed ($why), so it " +
        s"can only roll back; the write to ${Paths.display(table)} was refused. Run TXCOMMIT ROLLBACK."))
    val r = ref.getOrElse(GroupRef(id, GroupRef.decisionUnder(location.getOrElse(table), id).toString, leaseMs))
    val s = decisionStore.getOrElse(if (r.root == table) tableStore else storeOf(r.root, conf))
    Groups.renewLease(r, s)
    ref = Some(r)
    decisionStore = Some(s)
    running += 1
    r
  }

  /** A job of the group published its prepared record. */
  def add(ctx: TxnContext, record: CommitRecord): Unit = synchronized { parts += (ctx -> record) }

  /** A job of the group ended: `failed` with why, or None when its record is prepared (or it had nothing to write). */
  def ended(failed: Option[String]): Unit = synchronized {
    running = math.max(0, running - 1)
    if (failure.isEmpty) failure = failed
  }

  /** Why the group cannot commit now, if it cannot. */
  private[commit] def refusal: Option[String] = synchronized {
    closed.map(how => s"it was $how")
      .orElse(failure.map(why => s"one of its writes failed ($why); it can only roll back"))
      .orElse(if (running > 0) Some(s"$running of its writes are still running") else None)
  }

  private[commit] def close(how: String): Unit = synchronized { closed = Some(how) }

  private[commit] def participants: Seq[Participant] =
    prepared.map { case (ctx, r) => Participant(ctx.table.toString, r.txn, r.sequence) }
}

/** The multi-table transactions open in this driver, by id. */
object OpenGroups {
  private val open = new ConcurrentHashMap[String, OpenGroup]()

  /**
   * Opens a new group; `location`: where its decision lives (None: its first table); `storeOf`
   * opens the store of a decision that is not in the table a write joins from.
   */
  def begin(location: Option[Path], leaseMs: Long,
      storeOf: (Path, Configuration) => CommitStore = (p, c) => Adapters.open(p, c)): OpenGroup = {
    val g = new OpenGroup(TxnId.generate(), location, leaseMs, storeOf)
    open.put(g.id, g)
    g
  }

  def get(id: String): Option[OpenGroup] = Option(open.get(id))

  /** The open group `id`, for a write job of a session that names it. */
  def forWrite(id: String): OpenGroup = get(id).getOrElse(throw new TransactionException(s"the session names " +
      s"transaction $id, which is not open in this driver (it was committed or rolled back, or the server " +
      "restarted since TXCOMMIT BEGIN: a restart leaves it undecided, and its lease rolls it back). Nothing " +
      "was written; begin a new transaction."))

  private[commit] def remove(id: String): Unit = open.remove(id)
}
