package io.txcommit.read

import java.time.Instant

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.log.{
  Checkpoint,
  CheckpointLog,
  CommitRecord,
  GroupDecisions,
  GroupRef,
  Groups,
  LogLayout,
  NetRemovals,
  RecordCodec,
  RemovedFile,
  ReplaceLog,
  TableVersion,
  TableVersions
}
import io.txcommit.log.TableVersions.{AsOf, AsOfTime, AsOfTxn}
import io.txcommit.store.{Adapters, CommitStore}

/**
 * A table's state as of one of its versions (docs/protocol.md, I30), from one listing of its log:
 * the version `asOf` names, and the snapshot that holds exactly the versions up to it, in the form
 * a read carries ([[TableSnapshot]]: a checkpoint covering none of the later versions, the
 * `replace/` records up to the version's sequence, the appends up to it the checkpoint does not
 * cover). Written once for every user of "the table as of version V": reads (`txcommit.asOf`,
 * `VERSION AS OF`, `TIMESTAMP AS OF`) and `TXCOMMIT RESTORE` (which commits the difference between
 * now and the snapshot). The snapshot is whole or an error: a VACUUM horizon past the removal of
 * one of its files fails here, and every user checks its data listing against
 * [[SnapshotAsOf.Resolved.listing]] once it has listed (a VACUUM meanwhile, one that recorded no
 * horizon, a file replaced under its name).
 *
 * Costs what a read of now costs (the same three listings of the log in two round trips, no
 * listing of data; a read of now of a known table makes them in one) plus
 * the `replace/` records a checkpoint would have spared (read once per JVM, cached by file), one
 * GET when a transaction id is named (a fence is no version), and, only when a later replacing
 * commit removed a file of the snapshot, one listing of `vacuum/`.
 */
object SnapshotAsOf {

  /**
   * The version `asOf` named, every version of the table, and the snapshot at it; `listing`: what
   * a read of the snapshot must find in its data listing (the snapshot's files a later replacing
   * commit removed), checked once the data is listed.
   */
  final case class Resolved(version: TableVersion, versions: TableVersions, snapshot: TableSnapshot,
      checkpoint: Option[Checkpoint], replaced: ReplaceLog, listing: AsOfListing)

  /**
   * The table at `dir` as of `asOf` (the text `option` gave), listed now through `store`; None
   * when `dir` holds no committed record. Fails with [[TimeTravelException]] when `asOf` names no
   * version of the table or the snapshot's files are gone.
   */
  def resolve(dir: Path, store: CommitStore, asOf: AsOf, option: String, ignoreCorrupt: Boolean,
      conf: Configuration = new Configuration()): Option[Resolved] = {
    val layout = LogLayout(dir)
    val table = Paths.display(dir)
    val commits =
      store.list(layout.commitsDir).flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName).map(_ -> st))
    if (commits.isEmpty) return None
    // After commits/ (a replacing commit's copy listed there has its replace/ record listed
    // next); checkpoints/ beside replace/: a checkpoint beyond the version's sequence is unused.
    val (checkpoints, replaceListing) =
      LogRequests.atOnce(CheckpointLog.list(layout, store.list), store.list(layout.replaceDir))
    val listed = ReplaceLog.load(layout, _ => replaceListing, p => store.read(p), Paths.display,
      e => if (!ignoreCorrupt) throw e)
    val groups = new GroupDecisions(root => if (root == dir) store else Adapters.open(root, conf))
    // A prepared record is a version only where its transaction committed it, dated by the decision (I33).
    val prepared = LogRequests.records(dir, store, commits.map(_._1).filterNot(listed.byTxn.contains))
      .collect { case (t, Some(c)) if !c.replacing && c.group.isDefined => t -> c.group.get }
    val replaced = listed.decided(groups.committed)
    val versions = versionsOf(commits, replaceListing, replaced, prepared, groups)
    // The replacing records of the snapshot as of version `v`'s place: up to `through`, and a
    // multi-table transaction's only when it committed by then.
    def heldBy(held: Set[String], through: Long)(r: CommitRecord): Boolean =
      r.sequence.exists(_ <= through) && (!r.isPrepared || held(r.txn))
    def fail(why: String): Nothing =
      throw new TimeTravelException(s"$option '${asOf.text}' of table $table: $why")
    val named = asOf match {
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
    // A transaction's writes to this table, all or none (I37).
    val groupOf = prepared.view.mapValues(_.id).toMap ++ replaced.records.flatMap(r => r.group.map(r.txn -> _.id))
    val version = versions.whole(named, groupOf.get)
    val upTo = versions.upTo(version)
    val through = upTo.flatMap(_.sequence).foldLeft(0L)(math.max)
    val later = versions.versions.drop(upTo.size).map(_.txn).toSet
    // A checkpoint folds in a set of versions: usable when they are all in the snapshot.
    val checkpoint = CheckpointLog.newest(checkpoints, p => store.read(p), Paths.display,
      c => c.through <= through && !c.committed.keysIterator.exists(later))
    val after = checkpoint.fold(0L)(_.through)
    val held = upTo.map(_.txn).toSet
    val inSnapshot = ReplaceLog(replaced.records.filter(r => r.sequence.exists(_ > after) && heldBy(held, through)(r)))
    val open = listed.records.flatMap(_.sequence).filter(s => s > after && s <= through)
      .filterNot(s => inSnapshot.records.exists(_.sequence.contains(s))).toVector
    val appends = upTo.filter(v => v.sequence.isEmpty && !checkpoint.exists(_.covers(v.txn))).map(_.txn)
    val snapshot = s"the snapshot (version ${version.number}, transaction ${version.txn})"
    val removed = removedLater(held, replaced, heldBy(held, through), version.storeTime)
    if (removed.nonEmpty) {
      val horizon = store.list(layout.vacuumDir).flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName))
        .foldLeft(0L)(math.max)
      val deleted = removed.collect { case (f, r) if r.committedAt < horizon => f }
      if (deleted.nonEmpty)
        fail(s"$snapshot held files that a later replacing commit removed and VACUUM has deleted (its horizon: " +
          s"${Instant.ofEpochMilli(horizon)}): ${RemovedFile.names(deleted)}; it cannot be read whole. Snapshots " +
          "newer than the horizon can be read")
    }
    Some(Resolved(version, versions,
        TableSnapshot(dir.toString, checkpoint.fold(0L)(_.number), through, appends.distinct.sorted, open),
        checkpoint, inSnapshot,
        AsOfListing(s"$option '${asOf.text}' of table $table: $snapshot",
          removed.map(_._1).toVector)))
  }

  /**
   * The versions of a table from its listings (`commits/`, `replace/`), its committed `replace/`
   * records (`replaced`, prepared ones only where their transaction committed them) and its
   * prepared appends (`prepared`, by txn, whatever their transaction decided): a prepared record
   * its transaction committed is dated by the decision's store time (one listing per directory
   * of decisions), the others are no version.
   */
  def versionsOf(commits: Seq[(String, FileStatus)], replaceListing: Seq[FileStatus], replaced: ReplaceLog,
      prepared: Map[String, GroupRef], groups: GroupDecisions): TableVersions = {
    val times = replaceListing.flatMap(st =>
      LogLayout.sequenceOfRecordName(st.getPath.getName).map(_ -> st.getModificationTime)).toMap
    val committedPrepared = prepared.filter { case (t, g) => groups.commits(g, t) }
    val decidedAt = Groups.decisionTimes((committedPrepared.values ++ replaced.records.flatMap(_.group)).toSeq,
      groups.store)
    def dated(g: GroupRef): Long = decidedAt.getOrElse(g.decision, 0L)
    TableVersions.order(
      commits.collect {
        case (txn, st) if !replaced.byTxn.contains(txn) && !prepared.contains(txn) => txn -> st.getModificationTime
      },
      replaced.records.filterNot(_.isPrepared).flatMap(r => r.sequence.map(s => (s, r.txn, times.getOrElse(s, 0L)))),
      committedPrepared.toSeq.map { case (t, g) => (t, dated(g), Option.empty[Long]) } ++
        replaced.records.filter(_.isPrepared).map(r => (r.txn, dated(r.group.get), r.sequence)))
  }

  private def isFence(store: CommitStore, layout: LogLayout, txn: String, replaced: ReplaceLog): Boolean =
    replaced.byTxn.get(txn).map(_.isFence).getOrElse {
      val path = layout.commitRecord(txn)
      store.read(path).exists(b => RecordCodec.decode(b, Paths.display(path), txn).isFence)
    }

  /**
   * The files of the snapshot (of transactions `held`, `replace/` records up to `through`, at the
   * version the store dated `storeTime`) that a later replacing commit removed, each with that
   * commit: still removed after every record (a restore may have re-added one, I31), the files
   * VACUUM may delete ([[io.txcommit.maintenance.Vacuum]] judges the same net removals). A file is
   * in the snapshot by identity, as a removal names it (I21), never by its name alone: one of a
   * transaction the snapshot holds that no removal up to it names; one without a txn id that the
   * store dated no later than the version (the same clock: a file written after it was not in it)
   * and that no removal up to the version hides by size and modification second (another file
   * of the same name may have been removed before). A removal without identity (an older
   * writer's) names the path, as it removed it.
   */
  private def removedLater(held: Set[String], replaced: ReplaceLog, inIt: CommitRecord => Boolean, storeTime: Long)
      : Seq[(RemovedFile, CommitRecord)] = {
    val before = NetRemovals.fold(Nil, replaced.records.filter(inIt)).removals
    def inSnapshot(f: RemovedFile): Boolean = (f.txn, f.modifiedAt) match {
      case (Some(txn), _) => held(txn) && !before.names(f.path)
      case (None, Some(at)) =>
        Math.floorDiv(at, 1000L) <= Math.floorDiv(storeTime, 1000L) && !before.hides(f.path, f.size, at)
      case (None, None) => !before.names(f.path)
    }
    NetRemovals.fold(Nil, replaced.records).removed.collect {
      case (f, Some(r)) if !inIt(r) && inSnapshot(f) => f -> r
    }
  }
}
