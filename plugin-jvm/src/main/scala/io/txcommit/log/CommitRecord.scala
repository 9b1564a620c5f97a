package io.txcommit.log

/**
 * The commit record: the single point of truth for one transaction. Once the file
 * `_txcommit/commits/<txn>.json` exists (or, for a replacing commit, `_txcommit/replace/<seq>.json`
 * naming it), every file in `added` is visible, every file in `removed` is hidden, every file in
 * `restored` is visible again (I31), and nothing else of that transaction ever is visible. It
 * is immutable: nothing rewrites it.
 *
 * @param token a random id of the job attempt that wrote it, so a driver whose publish call
 *              failed ambiguously can tell its own record from a rival's.
 * @param operation `append`, `overwrite`, `overwrite-partitions` or `write-id` (format 1
 *              records are appends); `fence` for VACUUM's claim on a transaction it cleaned up
 *              as never committed: a record that commits nothing, so the transaction's late
 *              commit loses (docs/protocol.md, I19).
 * @param schema the table's schema as of this commit (Spark DDL), when the write gave one
 *              (Parquet writes do); absent in records written before the schema guard and in
 *              writes of formats that give none: "unknown", never checked against
 *              (docs/protocol.md, I27).
 * @param group  set on a *prepared* record, a job of a multi-table transaction (a group): the
 *              record commits nothing by itself; its group's decision does (docs/protocol.md,
 *              I33). Format version 4.
 */
final case class CommitRecord(
    txn: String,
    token: String,
    jobId: String,
    startedAt: Long,
    committedAt: Long,
    added: Seq[AddedFile],
    appId: Option[String],
    writer: String,
    operation: String = CommitRecord.Append,
    writeId: Option[String] = None,
    replacement: Option[Replacement] = None,
    schema: Option[String] = None,
    group: Option[GroupRef] = None) {

  def files: Int = added.size
  def bytes: Long = added.iterator.map(_.size).sum
  def removed: Seq[RemovedFile] = replacement.map(_.removed).getOrElse(Nil)
  def restored: Seq[RemovedFile] = replacement.map(_.restored).getOrElse(Nil)

  /** The format version its bytes carry: 3 only for a record that restores files (I31), so a
   *  table without a restore stays readable by a txcommit that reads versions 1 and 2. */
  def formatVersion: Int =
    if (group.isDefined) CommitRecord.GroupVersion
    else if (restored.nonEmpty) CommitRecord.RestoreVersion
    else CommitRecord.FormatVersion

  /** Whether the record is a job's part of a group, committed only by the group's decision (I33). */
  def isPrepared: Boolean = group.isDefined
  def sequence: Option[Long] = replacement.map(_.sequence)
  def isReplacing: Boolean = replacement.isDefined
  def isFence: Boolean = operation == CommitRecord.Fence

  /** A restore's record (I31): a replacing commit whose `jobId` is [[CommitRecord.RestoreJobId]]. */
  def isRestore: Boolean = isReplacing && jobId == CommitRecord.RestoreJobId

  /** The distinct directories (relative to the table; "" is the table itself) holding files. */
  def directories: Seq[String] = added.map(f => CommitRecord.dirOf(f.path)).distinct.sorted
}

object CommitRecord {

  /**
   * A record this JVM writes, the one way every commit, streaming batch and fence builds its
   * own: stamped with this JVM's Spark application and txcommit version.
   */
  def written(txn: String, token: String, jobId: String, startedAt: Long, added: Seq[AddedFile],
      committedAt: Long = System.currentTimeMillis(), operation: String = Append,
      schema: Option[String] = None): CommitRecord =
    CommitRecord(txn, token, jobId, startedAt, committedAt, added, io.txcommit.SparkApp.id,
      io.txcommit.Version.writer, operation, schema = schema)

  val Format = "txcommit-commit-record"
  val FormatVersion = 2

  /** The version of a record that re-adds files (`restored`, I31). */
  val RestoreVersion = 3

  /** The version of a prepared record: a job's part of a multi-table transaction (`group`, I33). */
  val GroupVersion = 4
  val ReadableVersions: Set[Long] = Set(1L, 2L, 3L, 4L)

  val Append = "append"
  val Overwrite = "overwrite"
  val OverwritePartitions = "overwrite-partitions"
  val WriteIdOp = "write-id"
  val Fence = "fence"

  /** The `jobId` of a restore's record (it runs no Spark job): what tells a restore that
   *  re-adds nothing (a version 2 record) from an overwrite adding nothing (I31). */
  val RestoreJobId = "restore"
  val Operations: Set[String] = Set(Append, Overwrite, OverwritePartitions, WriteIdOp, Fence)

  /** Operations that need a sequence (a fence commits nothing, in commits/ and replace/ alike). */
  val Replacing: Set[String] = Set(Overwrite, OverwritePartitions, WriteIdOp)

  def dirOf(rel: String): String = rel.lastIndexOf('/') match {
    case -1 => ""
    case i => rel.substring(0, i)
  }
}
