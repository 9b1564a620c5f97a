package io.txcommit.log

import java.time.Instant

import scala.util.Try

/**
 * One version of a table (docs/protocol.md, I30): a commit point, `number` its place in the
 * table's history (1-based). `storeTime` is when the store says the commit point was made (the
 * modification time the log listing gives its record; for a `replace/` record, the highest of
 * it and those of the records before it in sequence order).
 */
final case class TableVersion(number: Long, txn: String, storeTime: Long, sequence: Option[Long])

/**
 * A table's versions in order: the committed transactions by the time the STORE gave their
 * commit point (one clock for every writer: a writer's clock never moves a version), ties by
 * transaction id, with `replace/` records in their sequence order. An append's commit point is
 * its `commits/` record; a replacing commit's is its `replace/` record (its `commits/` copy,
 * written after, is no version); a write of a multi-table transaction's is its transaction's
 * decision (I33), the same in every table it wrote, so a version of any of them holds the whole
 * transaction. No writer ever consults this order: it needs no shared counter.
 */
final case class TableVersions(versions: Vector[TableVersion]) {

  /** The version `txn` committed as (its last, for a txn with several `replace/` records). */
  def ofTxn(txn: String): Option[TableVersion] = versions.findLast(_.txn == txn)

  /** The newest version whose commit point the store dated at or before `time` (epoch ms). */
  def atTime(time: Long): Option[TableVersion] = versions.takeWhile(_.storeTime <= time).lastOption

  /** The versions up to `v`, inclusive. */
  def upTo(v: TableVersion): Vector[TableVersion] = versions.take(v.number.toInt)

  /**
   * The version a snapshot as of `v` ends at: `v`, or a later one where a multi-table
   * transaction (`groupOf`: a version's transaction, for the writes of one) has a write up to
   * `v` and another after it. A transaction's writes to one table are versions of their own, all
   * dated by its one decision; a snapshot holds all of them or none (I37).
   */
  def whole(v: TableVersion, groupOf: String => Option[String]): TableVersion = {
    val groups = versions.map(x => groupOf(x.txn))
    val lastOf = groups.zipWithIndex.collect { case (Some(g), i) => g -> i }.toMap // the last index wins
    @annotation.tailrec
    def end(last: Int, i: Int): Int =
      if (i > last) last else end(groups(i).fold(last)(g => math.max(last, lastOf(g))), i + 1)
    versions(end(v.number.toInt - 1, 0))
  }
}

object TableVersions {

  /**
   * The order of a table's commit points. `appends`: (txn, store time) of every `commits/` record
   * that is not a replacing commit's copy nor a prepared record; `replaces`: (sequence, txn,
   * store time) of every `replace/` record that is not a prepared record; `decided`: (txn, store
   * time of its transaction's decision, sequence of a replacing one) of every prepared record
   * its transaction committed. A store time of 0 or less (a store whose listing gives none) stands for the
   * time in the transaction's id (its driver's clock when it started).
   */
  def order(appends: Seq[(String, Long)], replaces: Seq[(Long, String, Long)],
      decided: Seq[(String, Long, Option[Long])] = Nil): TableVersions = {
    def known(txn: String, t: Long): Long = if (t > 0L) t else TxnId.startedAt(txn).getOrElse(0L)
    // A multi-table transaction's write is dated by its decision, not by its place in replace/:
    // the sequence order of prepared records is the order they were prepared in, not committed.
    val a = (appends.map { case (txn, t) => (known(txn, t), txn, Option.empty[Long]) } ++
      decided.map { case (txn, t, seq) => (known(txn, t), txn, seq) }).sortBy(x => (x._1, x._2))
    // Sequence order is commit order (I23): a record never sorts before one with a lower number.
    val r = replaces.sortBy(_._1).scanLeft((0L, "", Option.empty[Long])) { case ((prev, _, _), (seq, txn, t)) =>
      (math.max(prev, known(txn, t)), txn, Some(seq))
    }.drop(1)
    val merged = Vector.newBuilder[(Long, String, Option[Long])]
    var (i, j) = (0, 0)
    while (i < a.size || j < r.size) {
      val takeAppend =
        j >= r.size || (i < a.size && Ordering[(Long, String)].lt((a(i)._1, a(i)._2), (r(j)._1, r(j)._2)))
      if (takeAppend) { merged += a(i); i += 1 }
      else { merged += r(j); j += 1 }
    }
    TableVersions(merged.result().zipWithIndex.map { case ((t, txn, seq), k) => TableVersion(k + 1L, txn, t, seq) })
  }

  /** What `txcommit.asOf` names: a transaction id, or a time. */
  sealed trait AsOf { def text: String }
  final case class AsOfTxn(text: String) extends AsOf
  final case class AsOfTime(text: String, epochMs: Long) extends AsOf

  /**
   * `value` as a transaction id (16 characters of [0-9a-z], as HISTORY shows them) or an
   * ISO-8601 time (`2026-11-27T20:00:00Z`, an offset, or a local date-time read as UTC, or a
   * date: its start in UTC); None when it is neither.
   */
  def parseAsOf(value: String): Option[AsOf] = {
    val v = value.trim
    if (TxnId.isValid(v)) Some(AsOfTxn(v))
    else parseTime(v).map(AsOfTime(v, _))
  }

  private def parseTime(v: String): Option[Long] = {
    import java.time.{LocalDate, LocalDateTime, OffsetDateTime, ZoneOffset}
    val iso = v.replace(' ', 'T')
    Try(Instant.parse(iso).toEpochMilli)
      .orElse(Try(OffsetDateTime.parse(iso).toInstant.toEpochMilli))
      .orElse(Try(LocalDateTime.parse(iso).toInstant(ZoneOffset.UTC).toEpochMilli))
      .orElse(Try(LocalDate.parse(iso).atStartOfDay(ZoneOffset.UTC).toInstant.toEpochMilli))
      .toOption
  }
}
