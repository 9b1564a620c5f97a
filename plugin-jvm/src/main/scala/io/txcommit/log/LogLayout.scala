package io.txcommit.log

import org.apache.hadoop.fs.Path

/**
 * Where a table's transaction log lives. Everything sits under `<table>/_txcommit/`, which
 * Spark's listing skips (leading underscore):
 *
 *  - `commits/<txn>.json`  the commit record: its existence IS the commit (created exclusively)
 *  - `pending/<txn>.json`  written at job setup: the transaction started (for history, VACUUM)
 *  - `aborted/<txn>.json`  written on abort (history; best effort)
 *  - `replace/<seq>.json`  the record of a replacing commit (overwrite, write id), `<seq>` its
 *                          place in their total order, 20 digits: creating it IS that commit
 *  - `checkpoints/<n>.json` a [[Checkpoint]] of the committed state (derived, created
 *                          exclusively, never rewritten), `<n>` 20 digits, the newest highest
 *  - `rows/<txn>.json`     the rows a job wrote, as Spark counted them (derived)
 *  - `streaming/<batch>/<k>.json` a streaming sink's claims of a micro-batch (created
 *                          exclusively); `streaming/<batch>.json` the txn a batch used, as
 *                          versions before claims wrote it
 *  - `properties/<n>.json` the table's properties as of change `<n>` (20 digits; created
 *                          exclusively, the highest in force; [[TableProperties]])
 *  - `vacuum/<horizon>.json` a VACUUM run's retention horizon (epoch ms, 20 digits): a
 *                          replaced file older than it may be gone, so a past snapshot holding
 *                          one cannot be read ([[io.txcommit.read.SnapshotAsOf]])
 *  - `groups/<group>.json` the decision of a multi-table transaction whose first table this is
 *                          (created exclusively, never rewritten: docs/protocol.md, I33), and
 *                          `groups/<group>/lease.json` its lease (rewritten while it lives)
 *  - `probe/<uuid>.json`   a conditional-put adapter's proof of the primitive (deleted after)
 *  - `manifests.json`      which log the symlink manifests were last made whole from (derived,
 *                          rewritable; [[io.txcommit.manifest.ManifestState]])
 *
 * plus `<table>/_SUCCESS`, a JSON summary of the newest commit (derived, rewritable), and, for
 * engines that read file lists, `<table>/_symlink_format_manifest/<partition>/manifest`: the
 * visible data files of one partition directory, one qualified path a line (derived, rewritable).
 */
final case class LogLayout(table: Path) {
  val logDir: Path = new Path(table, LogLayout.LogDirName)
  val commitsDir: Path = new Path(logDir, "commits")
  val pendingDir: Path = new Path(logDir, "pending")
  val abortedDir: Path = new Path(logDir, "aborted")
  val replaceDir: Path = new Path(logDir, "replace")
  val checkpointsDir: Path = new Path(logDir, "checkpoints")
  val rowsDir: Path = new Path(logDir, "rows")
  val streamingDir: Path = new Path(logDir, "streaming")
  val probeDir: Path = new Path(logDir, "probe")
  val propertiesDir: Path = new Path(logDir, "properties")
  val vacuumDir: Path = new Path(logDir, "vacuum")
  val groupsDir: Path = new Path(logDir, "groups")
  val success: Path = new Path(table, "_SUCCESS")
  val manifestsDir: Path = new Path(table, LogLayout.ManifestsDirName)
  val manifestState: Path = new Path(logDir, "manifests.json")

  def commitRecord(txn: String): Path = new Path(commitsDir, s"$txn.json")
  def pendingRecord(txn: String): Path = new Path(pendingDir, s"$txn.json")
  def abortedRecord(txn: String): Path = new Path(abortedDir, s"$txn.json")
  def replaceRecord(sequence: Long): Path = new Path(replaceDir, LogLayout.replaceRecordName(sequence))
  def rowCount(txn: String): Path = new Path(rowsDir, s"$txn.json")
  def checkpoint(number: Long): Path = new Path(checkpointsDir, LogLayout.replaceRecordName(number))
  def properties(number: Long): Path = new Path(propertiesDir, LogLayout.replaceRecordName(number))
  def vacuumHorizon(horizon: Long): Path = new Path(vacuumDir, LogLayout.replaceRecordName(horizon))
  def batchClaims(batch: Long): Path = new Path(streamingDir, batch.toString)
  def batchMarker(batch: Long): Path = new Path(streamingDir, s"$batch.json")

  /** The symlink manifest of one partition directory (relative to the table; "" is the table). */
  def manifest(partition: String): Path =
    if (partition.isEmpty) new Path(manifestsDir, LogLayout.ManifestName)
    else new Path(new Path(manifestsDir, partition), LogLayout.ManifestName)

  /** A fresh name for a readiness probe's object ([[io.txcommit.store.ExclusiveCreateProbe]]). */
  def newProbe(): Path = new Path(probeDir, s"${java.util.UUID.randomUUID()}.json")
}

object LogLayout {
  val LogDirName = "_txcommit"

  /** Where Hive's `SymlinkTextInputFormat` finds a table's file lists (the name Delta Lake uses). */
  val ManifestsDirName = "_symlink_format_manifest"
  val ManifestName = "manifest"

  /** The partition directory a manifest (path relative to the table) lists; None for any other file. */
  def partitionOfManifest(rel: String): Option[String] =
    if (rel == s"$ManifestsDirName/$ManifestName") Some("")
    else if (rel.startsWith(ManifestsDirName + "/") && rel.endsWith("/" + ManifestName))
      Some(rel.substring(ManifestsDirName.length + 1, rel.length - ManifestName.length - 1))
    else None

  /** A commit record's path relative to its table, as `_SUCCESS` names it. */
  def commitRecordRelative(txn: String): String = s"$LogDirName/commits/$txn.json"

  /** The txn of a file in `commits/`, when its name is `<valid txn>.json`. */
  def txnOfRecordName(name: String): Option[String] =
    if (name.endsWith(".json")) Some(name.stripSuffix(".json")).filter(TxnId.isValid) else None

  private val ReplaceName = "^([0-9]{20})\\.json$".r

  def replaceRecordName(sequence: Long): String = f"$sequence%020d.json"

  /** The sequence of a file in `replace/` (or number of one in `checkpoints/`, `properties/`): `<20 digits>.json`. */
  def sequenceOfRecordName(name: String): Option[Long] = name match {
    case ReplaceName(digits) => scala.util.Try(digits.toLong).toOption.filter(_ > 0)
    case _ => None
  }
}
