package io.txcommit.log

/** One data file a transaction adds, relative to the table directory. */
final case class AddedFile(path: String, size: Long)

/**
 * The commit record: the single point of truth for one transaction. Once the file
 * `_txcommit/commits/<txn>.json` exists, every file in `added` is visible and nothing else of
 * that transaction ever is. It is immutable: nothing rewrites it.
 *
 * @param token a random id of the job attempt that wrote it, so a driver whose publish call
 *              failed ambiguously can tell its own record from a rival's.
 */
final case class CommitRecord(
    txn: String,
    token: String,
    jobId: String,
    startedAt: Long,
    committedAt: Long,
    added: Seq[AddedFile],
    appId: Option[String],
    writer: String) {

  def files: Int = added.size
  def bytes: Long = added.iterator.map(_.size).sum
  /** The distinct directories (relative to the table; "" is the table itself) holding files. */
  def directories: Seq[String] =
    added.map(f => f.path.lastIndexOf('/') match {
      case -1 => ""
      case i => f.path.substring(0, i)
    }).distinct.sorted
}

object CommitRecord {
  val Format = "txcommit-commit-record"
  val FormatVersion = 1
}
