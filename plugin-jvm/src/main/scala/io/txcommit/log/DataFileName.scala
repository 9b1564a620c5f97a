package io.txcommit.log

/**
 * Names of data files written by txcommit:
 * `{prefix}part-{split:05d}-tid-{txn}-{attempt}{suffix}`, for example
 * `part-00003-tid-0m3k9z1cq4x8b2ad-117-c000.snappy.parquet`.
 *
 * `attempt` is Spark's task attempt id, unique within the application, so two attempts of one
 * task (retries, speculation) never share a file; `txn` ties the file to its transaction.
 */
object DataFileName {
  private val Pattern = ".*-tid-([0-9a-z]{16})-([0-9]+)(?:[-.].*)?$".r

  def apply(prefix: String, split: Int, txn: String, attempt: Long, suffix: String): String =
    f"${prefix}part-$split%05d-tid-$txn-$attempt$suffix"

  /** The transaction id of a txcommit data file, or None for any other file. */
  def txnOf(name: String): Option[String] = name match {
    case Pattern(txn, _) => Some(txn)
    case _ => None
  }
}
