package io.txcommit.log

import scala.jdk.CollectionConverters._

import io.txcommit.{CorruptDecisionException, Paths}

/**
 * A job's part of a committed group: the table it wrote, its txn, and the `replace/` sequence of
 * its record (None for an append, whose record is `commits/<txn>.json`).
 */
final case class Participant(table: String, txn: String, sequence: Option[Long])

/**
 * The decision of a group, a multi-table transaction (`<dir>/_txcommit/groups/<group>.json`,
 * docs/protocol.md, I33): created once, with the exclusive primitive of the store it lives on,
 * and never rewritten, so a decided outcome may be cached forever. `committed` makes visible the
 * prepared records it names in `participants`, in every table at once; `aborted` (or a record it
 * does not name) makes them never committed.
 *
 * @param token      random per decider, so a decider whose create was answered ambiguously can
 *                   tell its own decision from a rival's (I17)
 * @param decidedBy  who decided: `commit` and `rollback` (the group's driver), `lease-expired` (a
 *                   replacing writer or VACUUM that found the lease run out; readers never decide)
 */
final case class Decision(
    group: String,
    outcome: String,
    token: String,
    decidedAt: Long,
    decidedBy: String,
    appId: Option[String],
    writer: String,
    participants: Seq[Participant]) {
  def committed: Boolean = outcome == Decision.Committed
  private lazy val txns: Set[String] = participants.iterator.map(_.txn).toSet

  /** Whether `txn`'s prepared record is committed by this decision. */
  def commits(txn: String): Boolean = committed && txns(txn)

  /** As a record for [[io.txcommit.read.ReadCut.precedes]]: the group committed when it was decided. */
  def asOf: CommitRecord = CommitRecord("", "", "", decidedAt, decidedAt, Nil, appId, writer)
}

object Decision {
  val Format = "txcommit-decision"
  val FormatVersion = 1L
  val Committed = "committed"
  val Aborted = "aborted"
  val ByCommit = "commit"
  val ByRollback = "rollback"
  val ByLeaseExpiry = "lease-expired"

  def encode(d: Decision): Array[Byte] = {
    val root = RecordCodec.objectNode()
    root.put("format", Format)
    root.put("version", FormatVersion)
    root.put("group", d.group)
    root.put("outcome", d.outcome)
    root.put("token", d.token)
    root.put("decidedAt", d.decidedAt)
    root.put("decidedBy", d.decidedBy)
    d.appId.foreach(root.put("appId", _))
    root.put("writer", d.writer)
    val ps = root.putArray("participants")
    d.participants.foreach { p =>
      val n = ps.addObject().put("table", p.table).put("txn", p.txn)
      p.sequence.foreach(n.put("sequence", _))
    }
    RecordCodec.write(root)
  }

  /** Decodes the decision of `group` stored at `where` (named in errors). */
  def decode(bytes: Array[Byte], where: String, group: String): Decision = {
    def corrupt(why: String, cause: Throwable = null) = new CorruptDecisionException(
      s"decision $where is corrupt: $why. The transaction it decides stays undecided (its writes " +
        "invisible) until it is repaired: restore it from a backup, or delete it to let the " +
        "transaction be decided again (aborted, once its lease ran out).", cause)
    val json = new StrictJson((why, cause) => corrupt(why, cause.orNull))
    val root = json.root(bytes)
    json.header(root, Format, FormatVersion)
    val g = json.text(root, "group")
    if (g != group) throw corrupt(s"it decides group '$g' but its file name says '$group'")
    val outcome = json.text(root, "outcome")
    if (outcome != Committed && outcome != Aborted) {
      throw corrupt(s"field 'outcome' is '$outcome', not $Committed or $Aborted")
    }
    val node = root.get("participants")
    if (node == null || !node.isArray) throw corrupt("field 'participants' is missing or not a list")
    val participants = node.elements().asScala.toVector.map { p =>
      if (!p.isObject) throw corrupt("an entry of 'participants' is not an object")
      val txn = json.text(p, "txn")
      if (!TxnId.isValid(txn)) throw corrupt(s"participant txn '$txn' is not a transaction id")
      val table = json.text(p, "table")
      if (table.isEmpty) throw corrupt(s"participant $txn names no table")
      val seq = Option(p.get("sequence")).map { _ =>
        val s = json.long(p, "sequence")
        if (s < 1) throw corrupt(s"participant $txn has sequence $s; sequences start at 1")
        s
      }
      Participant(table, txn, seq)
    }
    Decision(g, outcome, json.text(root, "token"), json.long(root, "decidedAt"), json.text(root, "decidedBy"),
      Option(root.get("appId")).filter(_.isTextual).map(_.asText()), json.text(root, "writer"), participants)
  }

  /** Decodes the decision at `path` for `ref`'s group. */
  def read(bytes: Array[Byte], ref: GroupRef): Decision = decode(bytes, Paths.display(ref.decisionPath), ref.id)
}
