package io.txcommit.manifest

import java.nio.charset.StandardCharsets.UTF_8

import scala.annotation.tailrec

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.log.{CommitRecord, LogLayout, TableFile, TableState}
import io.txcommit.manifest.ManifestScope.{AllPartitions, Partitions}
import io.txcommit.store.CommitStore

/**
 * Symlink manifests for engines that read file lists (Hive's `SymlinkTextInputFormat`: Hive,
 * Trino, Athena, Presto): `<table>/_symlink_format_manifest/<partition>/manifest` names the
 * visible data files of one partition directory, one fully qualified path a line, as the
 * table's file system qualifies it (`_symlink_format_manifest/manifest` for files in the table
 * directory itself). The same layout Delta Lake writes.
 *
 * Each manifest is replaced whole with the store's `writeReplacing` (a reader sees the old or
 * the new list, never part of one); across partitions a reader may see some new and some old.
 * A partition with no visible file has its manifest deleted, as Delta does: an empty manifest
 * would keep a partition that Spark's own listing no longer shows (a partition whose files are
 * all hidden disappears), and a deleted one makes partition discovery agree with Spark.
 *
 * Manifests are derived from the log: the log is listed before the data (as a log-first read
 * does, so every file of a listed record is in the data listing), and listed again after the
 * manifests are written. A commit that landed in between may have been missed by a manifest
 * written meanwhile, so its partitions are rewritten from the newer log, at most [[MaxRounds]]
 * times; a pass that ends with the log still changing leaves [[ManifestState]] as it was, and
 * the next pass rewrites every partition.
 */
object ManifestWriter {
  private val log = LoggerFactory.getLogger(getClass)
  val MaxRounds = 3

  /** What a pass did; `whole` when the manifests matched the log it last listed. */
  final case class Outcome(manifests: Seq[PartitionManifest], whole: Boolean)

  /**
   * Every partition's manifest (or those of `scope`), from the log as it is now. A pass over
   * every partition records the log it made the manifests whole from.
   */
  def generate(table: Path, store: CommitStore, conf: Configuration,
      scope: ManifestScope = AllPartitions): Outcome =
    refresh(table, store, conf, None)(_ => (scope, scope == AllPartitions))

  /**
   * After `record` committed: the partitions it added files to or removed files from, when the
   * manifests were whole as of the log without it; otherwise every partition (roll forward).
   */
  def afterCommit(table: Path, store: CommitStore, conf: Configuration, record: CommitRecord): Outcome = {
    val layout = LogLayout(table)
    refresh(table, store, conf, Some(record.txn)) { names =>
      val before = ManifestState.digest(names -- ManifestState.ownNames(record))
      (if (ManifestState.read(store, layout).contains(before)) Partitions(partitionsOf(record)) else AllPartitions,
        true)
    }
  }

  /** The partition directories a commit changed: where it added, removed or restored files. */
  def partitionsOf(record: CommitRecord): Set[String] =
    (record.added.iterator.map(f => CommitRecord.dirOf(f.path)) ++
      (record.removed.iterator ++ record.restored.iterator).map(f => CommitRecord.dirOf(f.path))).toSet

  /**
   * `plan` chooses the first round's scope from the record names listed, and whether the
   * manifests will be whole once it is written (every partition, or those changed since the
   * recorded state).
   */
  private def refresh(table: Path, store: CommitStore, conf: Configuration, txn: Option[String])(
      plan: Set[String] => (ManifestScope, Boolean)): Outcome = {
    val layout = LogLayout(table)
    val fs = table.getFileSystem(conf)

    @tailrec def round(n: Int, state: TableState, names: Set[String], scope: ManifestScope, whole: Boolean,
        done: Vector[PartitionManifest]): Outcome = {
      val written = done ++ rewrite(state, fs, store, scope)
      val again = new TableState(table, store, conf)
      val namesAgain = ManifestState.recordNames(again)
      if (namesAgain == names) {
        if (whole) ManifestState.write(store, layout, names, txn)
        Outcome(written, whole)
      } else if (n >= MaxRounds) {
        log.warn(s"txcommit: manifests of ${Paths.display(table)}: the log kept changing over $n rounds; " +
          "the next manifest pass (a commit with manifests on, or TXCOMMIT GENERATE MANIFEST) rewrites them all")
        Outcome(written, whole = false)
      } else {
        val next =
          if (!names.subsetOf(namesAgain)) AllPartitions
          else changedBy(again, namesAgain -- names).fold[ManifestScope](AllPartitions)(Partitions(_))
        round(n + 1, again, namesAgain, next, whole, written)
      }
    }

    val state = new TableState(table, store, conf)
    val names = ManifestState.recordNames(state)
    val (scope, whole) = plan(names)
    round(1, state, names, scope, whole, Vector.empty)
  }

  /** The partitions the records named `names` changed; None if one of them cannot be read. */
  private def changedBy(state: TableState, names: Set[String]): Option[Set[String]] = {
    val records = names.toSeq.map { n =>
      if (n.startsWith("commits/")) {
        state.record(n.stripPrefix("commits/")) // a replacing commit's copy: its replace/ record
      } else {
        val sequence = LogLayout.sequenceOfRecordName(n.stripPrefix("replace/"))
        state.replaceLog.records.find(r => sequence.isDefined && r.sequence == sequence)
      }
    }
    if (records.exists(_.isEmpty)) None else Some(records.flatten.flatMap(partitionsOf).toSet)
  }

  /** Writes (or deletes) the manifests of `scope` as `state` shows the table. */
  private def rewrite(state: TableState, fs: FileSystem, store: CommitStore,
      scope: ManifestScope): Vector[PartitionManifest] = {
    val (visible, dirs) = scope match {
      case AllPartitions =>
        val all = state.allFiles() // one listing: the data and the manifests already there
        val files = all.filter(f => TableState.isData(f.path))
        val byDir = files.filter(state.isVisible).groupBy(f => CommitRecord.dirOf(f.path))
        // A manifest is stale where nothing is visible any more: a partition whose files were all
        // removed (still listed until VACUUM), or one only an older manifest names.
        val stale =
          files.map(f => CommitRecord.dirOf(f.path)) ++ all.flatMap(f => LogLayout.partitionOfManifest(f.path))
        (byDir, byDir.keySet ++ stale)
      case Partitions(ds) =>
        (ds.iterator.map(d =>
            d -> state.dataFiles(d).filter(f => CommitRecord.dirOf(f.path) == d && state.isVisible(f)))
            .toMap, ds)
    }
    dirs.toVector.sorted.flatMap { d =>
      val target = state.layout.manifest(d)
      val files = visible.getOrElse(d, Nil)
      if (files.isEmpty) {
        if (store.delete(target)) Some(PartitionManifest(d, 0, target, deleted = true)) else None
      } else {
        store.writeReplacing(target, render(fs, state.table, files))
        Some(PartitionManifest(d, files.size, target, deleted = false))
      }
    }
  }

  /** A manifest's text: each file's qualified path on a line of its own, sorted. */
  def render(fs: FileSystem, table: Path, files: Seq[TableFile]): Array[Byte] =
    files.map(f => fs.makeQualified(new Path(table, f.path)).toString).sorted.mkString("", "\n", "\n").getBytes(UTF_8)
}
