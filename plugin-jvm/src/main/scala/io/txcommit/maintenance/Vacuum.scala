package io.txcommit.maintenance

import java.time.Instant

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{MaintenanceException, NotATableException, Paths}
import io.txcommit.commit.CheckTableNesting
import io.txcommit.log.{
  CheckpointWriter,
  CommitRecord,
  DataFileName,
  Fence,
  GroupRef,
  Groups,
  LogLayout,
  RecordCodec,
  RemovedFile,
  TableFile,
  TableState,
  TxnId
}
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.store.{Adapters, CommitStore, FileSteps, Links}

/**
 * VACUUM of one table: physically removes what no reader can see any more, once it is older
 * than the retention horizon (so a reader or a job that started before it is not affected):
 *
 *  - data files of transactions that never committed (aborted, or whose driver died) and that
 *    showed no life since the horizon: not their id's start time, nor, by the store's clock,
 *    their pending marker (which a running job refreshes, [[io.txcommit.commit.TxnHeartbeat]])
 *    or any of their files. Each such transaction is first fenced ([[Fence]]), so its late
 *    commit loses instead of naming deleted files;
 *  - data files of committed transactions that their record does not name (failed or losing
 *    task attempts): never visible, removed whatever their age;
 *  - files logically deleted by a replacing commit (overwrite, write id) committed before the
 *    horizon;
 *  - `pending/` markers of finished or dead transactions, `aborted/` markers and S3A magic
 *    staging markers (`__magic_job-<txn>/`) of transactions older than the horizon or committed;
 *  - on stores that stage data (S3 multipart uploads), uploads left open by committed or dead
 *    transactions;
 *  - checkpoints superseded by a newer one published before the horizon.
 *
 * Before it deletes a file a replacing commit removed, it records its horizon in `vacuum/`, so a
 * read of a past snapshot that held one fails naming it. Then it writes a checkpoint of the log
 * as it left it. Commit records are never touched: they
 * are the log. It works in the directory the table's path leads to and deletes nothing outside
 * it: its listing follows no link ([[io.txcommit.store.FileTree.ownFiles]], I14, I18). A horizon below [[Vacuum.MinRetainHours]]
 * could delete the files of a running job or of a reader's snapshot, so it needs `force`.
 */
object Vacuum {
  val DefaultRetainHours = 48.0
  val MinRetainHours = 1.0
  private val log = LoggerFactory.getLogger(getClass)
  private val MagicPrefix = "__magic_job-"

  /** How the reason of a file a replacing commit removed begins. */
  private val RemovedBy = "removed by "

  def run(path: Path, conf: Configuration, opts: VacuumOptions,
      now: Long = System.currentTimeMillis(), steps: FileSteps = FileSteps.Here): Seq[VacuumEntry] = {
    if (opts.retainHours < 0 || opts.retainHours.isNaN) throw new MaintenanceException(
      s"VACUUM of ${Paths.display(path)}: RETAIN ${opts.retainHours} HOURS is negative; give a " +
        s"horizon of at least $MinRetainHours hour(s) (default $DefaultRetainHours)")
    if (opts.retainHours < MinRetainHours && !opts.force) throw new MaintenanceException(
      s"VACUUM of ${Paths.display(path)}: RETAIN ${opts.retainHours} HOURS is below the safe " +
        s"minimum of $MinRetainHours hour(s): it could delete files of jobs still running and of " +
        "readers that started before a recent overwrite. Use a larger horizon, or add FORCE if no " +
        "job writes to and no reader reads this table now.")
    val fs = path.getFileSystem(conf)
    val table = located(fs, path)
    val store = Adapters.open(table, conf)
    // A multi-table transaction whose lease ran out is decided aborted first (I34): its decision
    // is its fence, and the snapshot below then judges its writes never committed. Asked of the
    // log's listings, never of `exists(<log dir>)`: on an object store a directory is no object
    // (S3's and GCS's HEAD of the prefix say absent), and such a transaction was never decided.
    if (!opts.dryRun) abortExpired(table, store, conf, now)
    val state = new TableState(table, store, conf)
    if (state.allFiles(LogLayout.LogDirName).isEmpty) {
      throw new NotATableException(s"VACUUM: ${Paths.display(path)} is not a txcommit table " +
        s"(it has no ${LogLayout.LogDirName}/ directory); nothing was deleted. Check the path.")
    }
    // A log above this one may have committed files in this directory that this log has no
    // record of: they would look never committed. VACUUM cannot tell, so it deletes nothing.
    // Above the path as written and above where it leads.
    val via = if (table == fs.makeQualified(path)) None else Some(Links.describe(fs, path, table))
    (CheckTableNesting.enclosingTable(fs, path.getParent).map(_ -> None) ++
      via.flatMap(v => CheckTableNesting.enclosingTable(fs, table.getParent).map(_ -> Some(v)))).foreach {
      case (outer, link) =>
        throw new MaintenanceException(s"VACUUM of ${Paths.display(path)}: ${link.fold("")(l => s"$l, and ")}" +
          s"the transaction log ${Paths.display(new Path(outer, LogLayout.LogDirName))} lies above this table's own " +
          s"(${Paths.display(new Path(table, LogLayout.LogDirName))}). Files here may be committed " +
          "through that outer log, which this table's log cannot tell from files that never " +
          s"committed; nothing was deleted. Move the table at ${Paths.display(table)} out of " +
          s"${Paths.display(outer)} (or copy its rows into ${Paths.display(outer)} with a txcommit " +
          "write and remove it) before running VACUUM on either.")
    }
    val horizon = now - (opts.retainHours * 3600 * 1000).toLong
    log.info(s"txcommit: VACUUM ${Paths.display(table)}: horizon ${Instant.ofEpochMilli(horizon)} " +
      s"(${opts.retainHours} h)${if (opts.dryRun) ", dry run" else ""}")
    // Net removals only: a file a restore re-added (I31) is visible again, never garbage.
    val removedBy: String => Seq[(RemovedFile, CommitRecord)] =
      path => state.replaceLog.net.removedBy(path).flatMap { case (f, r) => r.map(f -> _) }
    def finished(txn: String): Boolean = state.isCommitted(txn)

    val links = ArrayBuffer.empty[Path]
    val files = state.ownFiles(links += _)
    linksMet(table, links.toSeq)
    val uploadsOpen = store.openUploads(table)
    // The last sign of life of each transaction, by the store's clock where there is one.
    val lastActive: Map[String, Long] = (files.flatMap(f => activityOf(f).map(_ -> f.modifiedAt)) ++
      uploadsOpen.flatMap(u =>
        DataFileName.txnOf(u.path.substring(u.path.lastIndexOf('/') + 1))
          .map(_ -> u.initiatedAt))).groupMapReduce(_._1)(_._2)(math.max(_, _))
    def old(txn: String): Boolean =
      math.max(lastActive.getOrElse(txn, 0L), TxnId.startedAt(txn).getOrElse(0L)) < horizon
    val nested = files.flatMap { f =>
      val at = f.path.split("/").indexOf(LogLayout.LogDirName)
      if (at > 0) Some(f.path.split("/").take(at).mkString("/")) else None
    }.distinct.sorted
    if (nested.nonEmpty) throw new MaintenanceException(s"VACUUM of ${Paths.display(table)}: the " +
      s"tree holds ${nested.size} more transaction log(s) below the table's own " +
      s"(${Paths.display(new Path(table, LogLayout.LogDirName))}), in " +
      s"${nested.take(5).map(d => s"'$d' (${Paths.display(new Path(new Path(table, d), LogLayout.LogDirName))})").mkString(", ")}" +
      s"${if (nested.size > 5) ", ..." else ""}. " +
      "Files committed through those logs are not in this table's log, so VACUUM would take them " +
      "for never committed; nothing was deleted. Move each nested table out of this directory " +
      "(or copy its data into this table with a txcommit write) before running VACUUM here.")
    // A checkpoint is superseded once a newer one was published before the horizon: no read
    // that began since can choose it.
    val checkpoints = files.filter(f => f.path.startsWith(s"${LogLayout.LogDirName}/checkpoints/"))
      .flatMap(f => LogLayout.sequenceOfRecordName(f.name).map(_ -> f)).sortBy(-_._1)
    val supersededBefore = checkpoints.find(_._2.modifiedAt < horizon).map(_._1)
    val superseded = checkpoints.collect {
      case (n, f) if supersededBefore.exists(n < _) =>
        (f, "checkpoint",
          s"checkpoint $n, superseded by checkpoint ${supersededBefore.get} published before the horizon")
    }
    val garbage: Seq[(TableFile, String, String)] = superseded ++ files.flatMap { f =>
      val segments = f.path.split("/")
      if (f.path.startsWith(LogLayout.LogDirName + "/groups/")) lease(f, segments, store, table, horizon)
      else if (f.path.startsWith(LogLayout.LogDirName + "/")) marker(f, segments, state, old)
      else segments.find(_.startsWith(MagicPrefix)).map(_.stripPrefix(MagicPrefix)) match {
        case Some(txn) =>
          if (finished(txn)) Some((f, "staging", s"S3A staging marker of committed txn $txn"))
          else if (old(txn))
            Some((f, "staging", s"S3A staging marker of txn $txn, never committed, silent since before the horizon"))
          else None
        case None if TableState.isData(f.path) => dataFile(f, state, removedBy, horizon, old)
        case None => None
      }
    }
    // A write of a multi-table transaction not decided yet (its lease lives) keeps its files;
    // one decided aborted (or not named by its committed decision) needs no fence: the decision
    // is final. Fence every other never-committed transaction before deleting a file of it; one
    // that turned out committed keeps its files.
    val undecided = state.undecided.map(_.txn).toSet
    def prepared(txn: String): Boolean =
      state.replaceListed.byTxn.get(txn).exists(_.isPrepared) || state.commitRecordOf(txn).exists(_.isPrepared)
    val committedLate: Set[String] =
      if (opts.dryRun) undecided
      else undecided ++ garbage.flatMap { case (f, kind, _) => if (kind == "marker") None else activityOf(f) }
        .distinct.filterNot(finished).filterNot(undecided).filterNot(prepared).filterNot { txn =>
          val layout = LogLayout(table)
          val aborted = store.exists(layout.abortedRecord(txn))
          val mayReplace = !aborted && store.read(layout.pendingRecord(txn))
            .flatMap(RecordCodec.markerFlag(_, "replacing")).getOrElse(true)
          Fence.claim(table, store, conf, txn, mayReplace, now)
        }.toSet
    // Before any file goes: a read of a past snapshot holding one of them fails, naming this.
    if (!opts.dryRun && garbage.exists(_._3.startsWith(RemovedBy))) recordHorizon(table, store, horizon)
    val entries = deleteByDirectory(table, conf,
      garbage.filterNot { case (f, _, _) => activityOf(f).exists(committedLate) }, opts.dryRun, steps)
    val uploads = uploadsOpen.filterNot(u =>
      DataFileName.txnOf(u.path.substring(u.path.lastIndexOf('/') + 1)).exists(committedLate)).flatMap { u =>
      val name = u.path.substring(u.path.lastIndexOf('/') + 1)
      DataFileName.txnOf(name).flatMap { txn =>
        val why =
          if (finished(txn)) Some(s"open upload of a failed attempt of committed txn $txn")
          else if (old(txn)) Some(s"open upload of txn $txn, never committed, silent since before the horizon")
          else None
        why.map { reason =>
          val deleted = !opts.dryRun && store.abortUpload(table, u)
          VacuumEntry(u.path, "upload", s"$reason (upload ${u.uploadId})", 0L, deleted)
        }
      }
    }
    val all = entries ++ uploads
    if (!opts.dryRun) {
      val outcome = CheckpointWriter.write(table, store, io.txcommit.SparkApp.id, groups = Some(state.groups))
      log.info(s"txcommit: VACUUM ${Paths.display(table)}: checkpoint: ${outcome.why}")
    }
    log.info(s"txcommit: VACUUM ${Paths.display(table)}: ${if (opts.dryRun) "would delete" else "deleted"} " +
      s"${all.size} item(s), ${all.map(_.bytes).sum} bytes, of ${files.size} file(s) listed")
    all
  }

  /**
   * The directory VACUUM of `path` works in: where `path` leads (I14: it deletes only in the
   * table's own resolved tree). Refused when that is through a link this client does not
   * follow, or when the table's `_txcommit` is a link (another log would judge its files).
   */
  private def located(fs: FileSystem, path: Path): Path = {
    val table = Links.resolve(fs, path)
    if (table != fs.makeQualified(path) && !Links.followed(fs)) throw new MaintenanceException(
      s"VACUUM of ${Paths.display(path)}: ${Links.notFollowed(fs, path, table)}; nothing was deleted. " +
        s"Run VACUUM on ${Paths.display(table)} itself.")
    val logDir = new Path(table, LogLayout.LogDirName)
    val realLog = Links.resolve(fs, logDir)
    if (realLog != logDir) throw new MaintenanceException(
      s"VACUUM of ${Paths.display(path)}: ${Links.describe(fs, new Path(path, LogLayout.LogDirName), realLog)}: " +
        "the files here would be judged by the log it leads to, which did not write them; nothing " +
        s"was deleted. Replace the link with the log of ${Paths.display(path)} itself.")
    if (table != fs.makeQualified(path)) log.info(s"txcommit: VACUUM ${Paths.display(path)}: " +
      s"${Links.describe(fs, path, table)}; VACUUM works there")
    table
  }

  /** Links in the table's tree: never followed. One inside the log stops VACUUM (its files would
   *  be judged by records it does not hold); others are named in the log. */
  private def linksMet(table: Path, links: Seq[Path]): Unit = {
    val inLog = links.filter(l => Paths.relativize(table, l).exists(_.startsWith(LogLayout.LogDirName + "/")))
    if (inLog.nonEmpty) throw new MaintenanceException(s"VACUUM of ${Paths.display(table)}: its " +
      s"transaction log holds a link (${inLog.take(3).map(Paths.display).mkString(", ")}), so the log " +
      "may not be this table's own; nothing was deleted. Replace the link with what it leads to.")
    if (links.nonEmpty) log.warn(s"txcommit: VACUUM ${Paths.display(table)}: ${links.size} link(s) in " +
      s"the table's directory (${links.take(5).map(Paths.display).mkString(", ")}${if (links.size > 5) ", ..." else ""}) " +
      "were not followed: VACUUM deletes nothing through a link, nor a link itself")
  }

  /** Decides aborted every multi-table transaction with an undecided write in the table whose lease ran out by `now`. */
  private def abortExpired(table: Path, store: CommitStore, conf: Configuration, now: Long): Unit = {
    val s = new TableState(table, store, conf)
    val allowance = io.txcommit.conf.TxCommitConf.maxClockSkewMs(conf)
    s.undecided.groupBy(_.group.get.id).values.foreach { rs =>
      val ref = rs.head.group.get
      Groups.abortIfExpired(ref, s.groups.store(ref), rs.map(s.storeTime).max, now, allowance).foreach { d =>
        log.info(s"txcommit: VACUUM ${Paths.display(table)}: ${Groups.describe(ref)} is decided ${d.outcome} " +
          s"(${d.decidedBy}); its writes here are ${if (d.committed) "committed" else "never committed"}")
      }
    }
  }

  /**
   * Records `horizon` in `vacuum/` (docs/protocol.md, I30): files removed by a replacing commit
   * before it may be deleted, so a past snapshot holding one can no longer be read whole.
   */
  private def recordHorizon(table: Path, store: CommitStore, horizon: Long): Unit = {
    val body = s"{\n  \"horizon\" : $horizon,\n  \"writer\" : \"${io.txcommit.Version.writer}\"\n}"
    try store.createExclusive(LogLayout(table).vacuumHorizon(horizon),
        body.getBytes(java.nio.charset.StandardCharsets.UTF_8))
    catch { case _: io.txcommit.CommitConflictException => () } // the same horizon, recorded already
  }

  /** The transaction a file is a sign of: its data files, staging markers and pending marker. */
  private def activityOf(f: TableFile): Option[String] =
    if (f.path.startsWith(s"${LogLayout.LogDirName}/pending/")) LogLayout.txnOfRecordName(f.name)
    else f.txn.orElse(f.path.split("/").find(_.startsWith(MagicPrefix)).map(_.stripPrefix(MagicPrefix)))

  /**
   * The lease of a multi-table transaction whose decision this table keeps, once decided and
   * silent since before the horizon: no one asks a decided transaction's lease. Decisions stay
   * (other tables' prepared records name them: they are commit points, like records).
   */
  private def lease(f: TableFile, segments: Array[String], store: CommitStore, table: Path,
      horizon: Long): Option[(TableFile, String, String)] =
    if (segments.length == 4 && segments(3) == "lease.json" && f.modifiedAt < horizon &&
      TxnId.isValid(segments(2)) && store.exists(GroupRef.decisionUnder(table, segments(2)))) {
      Some((f, "marker", s"lease of decided transaction ${segments(2)}, silent since before the horizon"))
    } else None

  private def marker(f: TableFile, segments: Array[String], state: TableState,
      old: String => Boolean): Option[(TableFile, String, String)] =
    if (segments.length != 3) None
    else {
      val txn = LogLayout.txnOfRecordName(segments(2))
      (segments(1), txn) match {
        case ("pending", Some(t)) if state.isCommitted(t) =>
          Some((f, "marker", s"pending marker of committed txn $t"))
        case ("pending", Some(t)) if old(t) =>
          Some((f, "marker", s"pending marker of txn $t, never committed, silent since before the horizon"))
        case ("aborted", Some(t)) if old(t) && !state.isCommitted(t) =>
          Some((f, "marker", s"aborted marker of txn $t, silent since before the horizon"))
        case _ => None
      }
    }

  private def dataFile(f: TableFile, state: TableState, removedBy: String => Seq[(RemovedFile, CommitRecord)],
      horizon: Long, old: String => Boolean): Option[(TableFile, String, String)] = {
    // Only the file the commit removed: a file written anew under its name is another file.
    val removal = removedBy(f.path).collectFirst {
      case (e, r) if e.appliesTo(f.size, f.modifiedAt) && r.committedAt < horizon => r
    }.map { r =>
      (f, "data",
        s"$RemovedBy${r.operation} txn ${r.txn} (sequence ${r.sequence.getOrElse(0L)}) " +
          s"committed at ${Instant.ofEpochMilli(r.committedAt)}, before the horizon")
    }
    f.txn match {
      case Some(t) => state.added(t) match {
          case Some(paths) if !paths.contains(f.path) && !state.replaceLog.net.isRestored(f.path) =>
            Some((f, "data", s"file of a failed attempt of committed txn $t"))
          case Some(_) => removal
          case None if old(t) =>
            Some((f, "data",
                s"file of txn $t, never committed (aborted, or its driver died or was fenced), silent since before the horizon"))
          case None => None
        }
      case None => removal
    }
  }

  /**
   * Deletes the garbage (through `steps`: a Spark job when there is much of it, whose progress a
   * Connect client sees), then logs what went, directory by directory (INFO).
   */
  private def deleteByDirectory(table: Path, conf: Configuration, garbage: Seq[(TableFile, String, String)],
      dryRun: Boolean, steps: FileSteps): Seq[VacuumEntry] = {
    val root = table.toString
    val deleted: Set[String] =
      if (dryRun) Set.empty
      else steps(s"txcommit VACUUM ${Paths.display(table)}: deleting ${garbage.size} file(s)", garbage.map(_._1.path),
        conf) { c =>
        val store = Adapters.open(new Path(root), c)
        rel => { store.delete(new Path(new Path(root), rel)); rel }
      }.toSet
    val byDir = garbage.groupBy { case (f, _, _) => CommitRecord.dirOf(f.path) }.toSeq.sortBy(_._1)
    byDir.zipWithIndex.flatMap { case ((dir, items), i) =>
      val out = items.map { case (f, kind, reason) =>
        val gone = deleted(f.path)
        if (gone) {
          TxCommitMetrics.vacuumDeletedFiles.inc()
          TxCommitMetrics.vacuumDeletedBytes.inc(f.size)
        }
        VacuumEntry(f.path, kind, reason, f.size, gone)
      }
      log.info(s"txcommit: VACUUM ${Paths.display(table)}: ${if (dir.isEmpty) "(table root)" else dir}: " +
        s"${if (dryRun) "would delete" else "deleted"} ${items.size} file(s) (directory ${i + 1} of ${byDir.size})")
      out
    }
  }
}
