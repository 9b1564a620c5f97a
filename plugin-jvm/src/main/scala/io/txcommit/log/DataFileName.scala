package io.txcommit.log

/**
 * Names of data files written by txcommit:
 * `{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}`, for example
 * `part-00003-tid-0m3k9z1cq4x8b2ad-117-c000.snappy.parquet`, or for bucket 2 of a bucketed write
 * `part-00003-tid-0m3k9z1cq4x8b2ad-117_00002.c000.snappy.parquet`.
 *
 * `attempt` is Spark's task attempt id, unique within the application, so two attempts of one
 * task (retries, speculation) never share a file; `txn` ties the file to its transaction.
 */
object DataFileName {
  // (?s): a name may hold line terminators (\n, \r, U+0085, U+2028, U+2029); without it Java's `.`
  // stops at each of them and Python's at \n only, so one file would get two verdicts.
  // After the attempt: `-` or `.` (`-c000…`, `.c000…`), or `_` for a bucketed write, whose suffix
  // Spark starts with the bucket id (`_00002.c000.snappy.parquet`).
  private val Pattern = "(?s).*-tid-([0-9a-z]{16})-([0-9]+)(?:[-._].*)?".r

  def apply(prefix: String, split: Int, txn: String, attempt: Long, suffix: String): String =
    f"${prefix}part-$split%05d-tid-$txn-$attempt$suffix"

  /** The transaction id of a txcommit data file, or None for any other file. */
  def txnOf(name: String): Option[String] = name match {
    case Pattern(txn, _) => Some(txn)
    case _ => None
  }
}
