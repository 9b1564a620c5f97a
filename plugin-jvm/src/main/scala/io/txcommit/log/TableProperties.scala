package io.txcommit.log

import java.util.Locale

import scala.annotation.tailrec
import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import io.txcommit.{CommitConflictException, CorruptTablePropertiesException, MaintenanceException, Paths}
import io.txcommit.store.CommitStore

/**
 * The table's properties: settings every writer of the table follows, whatever its session
 * says. `_txcommit/properties/<n>.json` holds all of them as of change `n` (20 digits, from 1),
 * created exclusively and never rewritten; the highest number is in force. A change reads the
 * newest and creates the next number: of two racing changes one creates it, the other reads the
 * winner's and applies its own change on top under the number after (both apply, in number
 * order; for one key the higher number's value stays). `values` keeps keys this version does
 * not know, so a change made by it never drops what a newer version set.
 */
final case class TableProperties(number: Long, values: Map[String, String], setAt: Long,
    appId: Option[String], writer: String) {

  /** `manifests`: whether every commit writes the symlink manifests; None when never set. */
  def manifests: Option[Boolean] = values.get(TableProperties.Manifests).map(_ == "true")
}

object TableProperties {
  val Format = "txcommit-properties"
  val FormatVersion = 1L
  val Manifests = "manifests"

  /**
   * How the table is read (I32): set with `TXCOMMIT ALTER` like a property, but kept in the
   * table's checkpoints ([[TableReads]]), never in `properties/`.
   */
  val Reads = "reads"

  /** The keys `TXCOMMIT ALTER` knows, with the values each takes (as written: lower case). */
  val Known: Map[String, Set[String]] = Map(Manifests -> Set("true", "false"), Reads -> ReadMode.All)

  /** How many times a change is tried against newer changes before it gives up. */
  val MaxTries = 16

  private val mapper = new ObjectMapper()

  def encode(p: TableProperties): Array[Byte] = {
    val root = mapper.createObjectNode()
    root.put("format", Format)
    root.put("version", FormatVersion)
    root.put("number", p.number)
    val props = root.putObject("properties")
    p.values.toSeq.sortBy(_._1).foreach { case (k, v) => props.put(k, v) }
    root.put("setAt", p.setAt)
    p.appId.foreach(root.put("appId", _))
    root.put("writer", p.writer)
    mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(root)
  }

  /** Decodes `properties/<number>.json`, stored at `where` (named in errors). */
  def decode(bytes: Array[Byte], where: String, number: Long): TableProperties = {
    def corrupt(why: String, cause: Option[Throwable] = None) = new CorruptTablePropertiesException(
      s"table properties $where are corrupt: $why. Writers cannot tell what the table asks of " +
        "them; restore the file from a backup, or move it out of _txcommit/properties/ (the " +
        "previous number is then in force) and set the properties again with TXCOMMIT ALTER.", cause.orNull)
    val json = new StrictJson(corrupt)
    val root = json.root(bytes)
    def text(field: String): String = json.text(root, field)
    def long(field: String): Long = json.long(root, field)
    json.header(root, Format, FormatVersion)
    val recorded = long("number")
    if (recorded != number) throw corrupt(s"its file name says number $number but it records $recorded")
    val props = root.get("properties")
    if (props == null || !props.isObject) throw corrupt("field 'properties' is missing or not an object")
    val values = props.properties().asScala.map { e =>
      if (!e.getValue.isTextual) throw corrupt(s"property '${e.getKey}' is not a string")
      val v = e.getValue.asText()
      Known.get(e.getKey).filterNot(_.contains(v)).foreach { allowed =>
        throw corrupt(s"property '${e.getKey}' is '$v', not one of ${allowed.toSeq.sorted.mkString(", ")}")
      }
      e.getKey -> v
    }.toMap
    TableProperties(number, values, long("setAt"), Option(root.get("appId")).filter(_.isTextual).map(_.asText()),
      text("writer"))
  }

  /** `key` and `value` as a property of `table` is set: a known key, one of its values (any case). */
  def validated(table: String, key: String, value: String): (String, String) = {
    val k = key.trim.toLowerCase(Locale.ROOT)
    val allowed = Known.getOrElse(k,
      throw new MaintenanceException(s"TXCOMMIT ALTER '$table': unknown " +
        s"table property '$key'; the properties are ${Known.keys.toSeq.sorted.mkString(", ")}. Nothing was changed."))
    val v = value.trim.toLowerCase(Locale.ROOT)
    if (!allowed(v)) throw new MaintenanceException(s"TXCOMMIT ALTER '$table': table property '$k' cannot " +
      s"be '$value'; it takes ${allowed.toSeq.sorted.mkString(" or ")}. Nothing was changed.")
    k -> v
  }

  /** The numbers in `properties/`, highest first. */
  private def listed(store: CommitStore, layout: LogLayout): Seq[Long] =
    store.list(layout.propertiesDir).flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName))
      .sortBy(-_)

  /**
   * The properties in force: the highest number listed (None: never set). One that does not
   * decode is an error, never skipped: an older one may say the opposite of what was set last.
   */
  def read(store: CommitStore, layout: LogLayout): Option[TableProperties] =
    listed(store, layout).headOption.flatMap(n => readNumber(store, layout, n))

  private def readNumber(store: CommitStore, layout: LogLayout, n: Long): Option[TableProperties] =
    store.read(layout.properties(n)).map(decode(_, Paths.display(layout.properties(n)), n))

  /**
   * Sets `changes` on the table's properties: the next number, created exclusively, holding
   * the properties in force with `changes` applied; retried on a newer change that won the
   * number. Nothing is written when the properties in force already hold `changes`. Returns
   * the properties in force after it.
   */
  def set(store: CommitStore, layout: LogLayout, changes: Map[String, String],
      appId: Option[String]): TableProperties = {
    @tailrec def attempt(tries: Int): TableProperties = {
      val current = read(store, layout)
      val merged = current.map(_.values).getOrElse(Map.empty) ++ changes
      current match {
        case Some(c) if c.values == merged => c
        case _ =>
          val next = TableProperties(current.map(_.number).getOrElse(0L) + 1, merged,
            System.currentTimeMillis(), appId, io.txcommit.Version.writer)
          val won =
            try { store.createExclusive(layout.properties(next.number), encode(next)); true }
            catch { case _: CommitConflictException => false }
          if (won) next
          else if (tries >= MaxTries) throw new CommitConflictException(s"the table properties of " +
            s"${Paths.display(layout.table)} changed $tries times while this change was applied; " +
            "it was not recorded. Run it again.")
          else attempt(tries + 1)
      }
    }
    attempt(1)
  }
}
