package io.txcommit.manifest

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import io.txcommit.log.{CommitRecord, LogLayout, RecordCodec, TableState}
import io.txcommit.store.CommitStore

/**
 * Which log the symlink manifests were last made whole from: `_txcommit/manifests.json` holds a
 * digest of the names of the records (`commits/`, `replace/`) of the snapshot a pass rewrote
 * them from. The log only grows (records are never rewritten or deleted), so a commit whose log,
 * less its own records, has that digest knows every earlier commit is in the manifests already
 * and rewrites only the partitions it changed; any other difference (a commit written with
 * manifests off, a driver that died before its pass, a fence) makes it rewrite them all.
 * Derived and rewritable: a missing or unreadable state only costs a full pass.
 */
object ManifestState {
  val Format = "txcommit-manifests"

  /**
   * The names of the records `state` lists, its log listing forced before any data listing,
   * less the prepared records of multi-table transactions not decided yet (I33): they change
   * nothing yet and may later, so a pass counts them only once their transaction decided.
   */
  def recordNames(state: TableState): Set[String] = {
    val open =
      state.undecided.map(r => r.sequence.fold(s"commits/${r.txn}")(s => s"replace/${LogLayout.replaceRecordName(s)}"))
    state.commitTxns.map(t => s"commits/$t") ++ state.replaceListing.map(_.getPath.getName)
      .filter(n => LogLayout.sequenceOfRecordName(n).isDefined).map(n => s"replace/$n") -- open
  }

  /** The names a commit's own records have (its `replace/` record and its `commits/` one or copy). */
  def ownNames(record: CommitRecord): Set[String] =
    Set(s"commits/${record.txn}") ++ record.sequence.map(s => s"replace/${LogLayout.replaceRecordName(s)}")

  def digest(names: Set[String]): String =
    MessageDigest.getInstance("SHA-256").digest(names.toSeq.sorted.mkString("\n").getBytes(UTF_8))
      .map(b => f"${b & 0xff}%02x").mkString

  /** The digest the manifests were last made whole from; None when never (or unreadable). */
  def read(store: CommitStore, layout: LogLayout): Option[String] =
    store.read(layout.manifestState).flatMap(RecordCodec.markerText(_, "log"))

  def write(store: CommitStore, layout: LogLayout, names: Set[String], txn: Option[String]): Unit =
    store.writeReplacing(layout.manifestState,
      RecordCodec.marker("format" -> Format, "version" -> 1,
        "log" -> digest(names), "records" -> names.size, "writtenAt" -> System.currentTimeMillis(), "txn" -> txn))
}
