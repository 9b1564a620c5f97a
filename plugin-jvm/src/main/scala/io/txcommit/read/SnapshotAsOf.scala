package io.txcommit.read

import java.time.Instant

import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.log.{
  Checkpoint,
  CheckpointLog,
  DataFileName,
  LogLayout,
  NetRemovals,
  RecordCodec,
  ReplaceLog,
  TableVersion,
  TableVersions
}
import io.txcommit.log.TableVersions.{AsOf, AsOfTime, AsOfTxn}
import io.txcommit.store.CommitStore

/**
 * A table's state as of one of its versions (docs/protocol.md, I30), from one listing of its log:
 * the version `asOf` names, and the snapshot that holds exactly the versions up to it, in the form
 * a read carries ([[TableSnapshot]]: a checkpoint covering none of the later versions, the
 * `replace/` records up to the version's sequence, the appends up to it the checkpoint does not
 * cover). Written once for every user of "the table as of version V": reads (`txcommit.asOf`,
 * `VERSION AS OF`, `TIMESTAMP AS OF`) today, a later `TXCOMMIT RESTORE` (which would commit the
 * difference between now and [[SnapshotAsOf.Resolved.snapshot]]).
 *
 * Costs what a read of now costs (the same three listings of the log in two round trips, no
 * listing of data; a read of now of a known table makes them in one) plus
 * the `replace/` records a checkpoint would have spared (read once per JVM, cached by file), one
 * GET when a transaction id is named (a fence is no version), and, only when a later replacing
 * commit removed a file of the snapshot, one listing of `vacuum/`.
 */
object SnapshotAsOf {

  /** The version `asOf` named, every version of the table, and the snapshot at it. */
  final case class Resolved(version: TableVersion, versions: TableVersions, snapshot: TableSnapshot,
      checkpoint: Option[Checkpoint], replaced: ReplaceLog)

  /**
   * The table at `dir` as of `asOf` (the text `option` gave), listed now through `store`; None
   * when `dir` holds no committed record. Fails with [[TimeTravelException]] when `asOf` names no
   * version of the table or the snapshot's files are gone.
   */
  def resolve(dir: Path, store: CommitStore, asOf: AsOf, option: String, ignoreCorrupt: Boolean)
      : Option[Resolved] = {
    val layout = LogLayout(dir)
    val table = Paths.display(dir)
    val commits =
      store.list(layout.commitsDir).flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName).map(_ -> st))
    if (commits.isEmpty) return None
    // After commits/ (a replacing commit's copy listed there has its replace/ record listed
    // next); checkpoints/ beside replace/: a checkpoint beyond the version's sequence is unused.
    val (checkpoints, replaceListing) =
      LogRequests.atOnce(CheckpointLog.list(layout, store.list), store.list(layout.replaceDir))
    val replaced = ReplaceLog.load(layout, _ => replaceListing, p => store.read(p), Paths.display,
      e => if (!ignoreCorrupt) throw e)
    val versions = versionsOf(commits, replaceListing, replaced)
    def fail(why: String): Nothing =
      throw new TimeTravelException(s"$option '${asOf.text}' of table $table: $why")
    val version = asOf match {
      case AsOfTxn(txn) =>
        val v = versions.ofTxn(txn).getOrElse(fail(s"transaction $txn is not committed in this table " +
            "(TXCOMMIT HISTORY lists its transactions; a pending or aborted one has no snapshot)"))
        if (isFence(store, layout, txn, replaced))
          fail(s"transaction $txn never committed: VACUUM fenced it, so it has no snapshot")
        v
      case AsOfTime(_, at) =>
        versions.atTime(at).getOrElse(fail(s"no commit of this table is dated at or before " +
            s"${Instant.ofEpochMilli(at)} by the store; its first is dated " +
            s"${versions.versions.headOption.fold("never")(v => Instant.ofEpochMilli(v.storeTime).toString)}"))
    }
    val upTo = versions.upTo(version)
    val through = upTo.flatMap(_.sequence).foldLeft(0L)(math.max)
    val later = versions.versions.drop(upTo.size).map(_.txn).toSet
    // A checkpoint folds in a set of versions: usable when they are all in the snapshot.
    val checkpoint = CheckpointLog.newest(checkpoints, p => store.read(p), Paths.display,
      c => c.through <= through && !c.committed.keysIterator.exists(later))
    val after = checkpoint.fold(0L)(_.through)
    val inSnapshot = ReplaceLog(replaced.records.filter(_.sequence.exists(s => s > after && s <= through)))
    val appends = upTo.filter(v => v.sequence.isEmpty && !checkpoint.exists(_.covers(v.txn))).map(_.txn)
    vacuumed(store, layout, upTo.map(_.txn).toSet, replaced, through).foreach { horizon =>
      fail(s"the snapshot (version ${version.number}, transaction ${version.txn}) held files that a later " +
        s"replacing commit removed and VACUUM has deleted (its horizon: ${Instant.ofEpochMilli(horizon)}); " +
        "it cannot be read whole. Snapshots newer than the horizon can be read")
    }
    Some(Resolved(version, versions,
        TableSnapshot(dir.toString, checkpoint.fold(0L)(_.number), through, appends.distinct.sorted),
        checkpoint, inSnapshot))
  }

  /** The versions of a table from its listings (`commits/`, `replace/`) and its `replace/` records. */
  def versionsOf(commits: Seq[(String, FileStatus)], replaceListing: Seq[FileStatus],
      replaced: ReplaceLog): TableVersions = {
    val times = replaceListing.flatMap(st =>
      LogLayout.sequenceOfRecordName(st.getPath.getName).map(_ -> st.getModificationTime)).toMap
    TableVersions.order(
      commits.collect { case (txn, st) if !replaced.byTxn.contains(txn) => txn -> st.getModificationTime },
      replaced.records.flatMap(r => r.sequence.map(s => (s, r.txn, times.getOrElse(s, 0L)))))
  }

  private def isFence(store: CommitStore, layout: LogLayout, txn: String, replaced: ReplaceLog): Boolean =
    replaced.byTxn.get(txn).map(_.isFence).getOrElse {
      val path = layout.commitRecord(txn)
      store.read(path).exists(b => RecordCodec.decode(b, Paths.display(path), txn).isFence)
    }

  /**
   * VACUUM's highest horizon, when a file of the snapshot (of transactions `held`, `replace/`
   * records up to `through`) is one VACUUM may have deleted: still removed after every record
   * (a restore may have re-added it, I31), by a replacing commit that committed before the
   * horizon (VACUUM's own rule, [[io.txcommit.maintenance.Vacuum]]).
   */
  private def vacuumed(store: CommitStore, layout: LogLayout, held: Set[String], replaced: ReplaceLog,
      through: Long): Option[Long] = {
    val (upTo, later) = replaced.records.partition(_.sequence.exists(_ <= through))
    val goneBefore = NetRemovals.fold(Nil, upTo).removals
    def inSnapshot(path: String): Boolean =
      !goneBefore.names(path) && DataFileName.txnOf(path.substring(path.lastIndexOf('/') + 1)).forall(held)
    val removers = NetRemovals.fold(Nil, replaced.records).removed.collect {
      case (f, Some(r)) if later.contains(r) && inSnapshot(f.path) => r
    }
    if (removers.isEmpty) None
    else {
      val horizon = store.list(layout.vacuumDir).flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName))
        .foldLeft(0L)(math.max)
      if (removers.exists(_.committedAt < horizon)) Some(horizon) else None
    }
  }
}
