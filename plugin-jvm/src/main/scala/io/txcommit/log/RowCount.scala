package io.txcommit.log

import scala.util.Try

/**
 * `_txcommit/rows/<txn>.json`: how many rows a committed transaction wrote, as Spark counted
 * them. Spark counts a write's rows only after the job commit returns (its write statistics
 * reach the driver after the commit point), so this is derived work written after the commit,
 * once, never read by the reader rule: a missing or unreadable one means "not counted".
 */
final case class RowCount(txn: String, rows: Long)

object RowCount {
  val Format = "txcommit-rows"
  val FormatVersion = 1L

  def encode(r: RowCount): Array[Byte] = {
    val n = RecordCodec.objectNode()
    n.put("format", Format)
    n.put("version", FormatVersion)
    n.put("txn", r.txn)
    n.put("rows", r.rows)
    RecordCodec.write(n)
  }

  /** The count in `bytes` if it is a row count of `txn`; None otherwise (it only informs). */
  def decode(bytes: Array[Byte], txn: String): Option[RowCount] = Try {
    val n = new com.fasterxml.jackson.databind.ObjectMapper().readTree(bytes)
    val rows = n.get("rows")
    if (n.path("format").asText() == Format && n.path("txn").asText() == txn && rows != null &&
      rows.isIntegralNumber && rows.asLong() >= 0) Some(RowCount(txn, rows.asLong()))
    else None
  }.toOption.flatten
}
