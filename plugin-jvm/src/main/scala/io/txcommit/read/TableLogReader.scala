package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{CorruptCommitRecordException, Paths}
import io.txcommit.log.{
  BoundedCache,
  Checkpoint,
  CheckpointLog,
  CommitRecord,
  DataFileName,
  LogLayout,
  NetRemovals,
  ReadMode,
  RecordCodec,
  Removals,
  ReplaceLog
}
import io.txcommit.store.Adapters

/**
 * Answers "is this file visible?" for one read, by the reader rule of docs/protocol.md, against
 * ONE snapshot of each table's log (invariant I15): finds the table a file belongs to (the
 * nearest ancestor directory holding `_txcommit/`), fixes the table's snapshot when the read
 * first meets it, and judges every file of the read against it.
 *
 * The snapshot of a table for cut `cut` ([[ReadCut]]): the `replace/` records up to the highest
 * sequence the read agreed on (the highest whose record committed before the read began: every
 * record before it was published before it, I23), and the appends whose `commits/` record the
 * read found and that committed before the read began. A `commits/` record of a replacing commit (the copy
 * `CopyReplaceRecord` writes) never commits anything by itself: a replacing commit is in the
 * snapshot iff its `replace/` record is, so a listing never applies an overwrite's new files
 * without its removals. What depends on when a JVM looked is agreed through [[CutArbiter]], so
 * the driver and every executor listing part of the read judge alike.
 *
 * Commit records are immutable and never deleted (I3, I14), so what a record says is cached
 * JVM-wide ([[TableLogReader.Records]]), as are directories known to hold `_txcommit/`
 * ([[TableLogReader.Roots]]). Only positive answers are kept across reads: a record not found
 * yet, or a directory without `_txcommit/` yet, is asked again by the next read; a corrupt
 * record is never cached. Costs per read: one tree listing per partitioned tree and JVM
 * ([[TreeListing]]; else one existence check per distinct directory not known to be a table
 * root, until its table root is met), one existence check per directory above a tree, one
 * listing of `replace/` per table, and one read per distinct transaction whose record this JVM
 * has not decoded yet (and, for another application's append, one status request for the
 * record's store time: [[ReadCut]]).
 */
final class TableLogReader(conf: Configuration, ignoreCorrupt: Boolean, cut: ReadCut,
    arbiter: CutArbiter) {
  private val log = LoggerFactory.getLogger(getClass)
  private val roots = new ConcurrentHashMap[Path, Option[Path]]()
  private val plainRoots = new ConcurrentHashMap[Path, Option[Path]]()
  private val probed = new ConcurrentHashMap[Path, Option[Boolean]]()
  private val committed = new ConcurrentHashMap[(Path, String), Option[Set[String]]]()
  private val snapshots = new ConcurrentHashMap[Path, TableLogReader.Snapshot]()

  /** Whether `file` is visible (files outside any txcommit table always are). */
  def isVisible(file: Path): Boolean = {
    val plain = DataFileName.txnOf(file.getName).isEmpty
    rootOf(file.getParent, plain) match {
      case None => true // not inside a txcommit table: someone else's file, shown as before
      case Some(root) => visibleIn(root, file, plain)
    }
  }

  /**
   * The rule of the log at `root` for `file`. A transaction this log has no record of may be
   * another log's: in a tree nested by a version without I18 (a `_txcommit/` inside a table),
   * the outer table's files in the nested directory are judged by the next log above, so neither
   * table's committed data is hidden by the other's log.
   */
  private def visibleIn(root: Path, file: Path, plain: Boolean): Boolean =
    Paths.relativize(root, file) match {
      case None => false
      case Some(rel) =>
        val snapshot = snapshotOf(root)
        if (TableLogReader.removed(conf, snapshot.net.removals, rel, file)) false
        else DataFileName.txnOf(file.getName) match {
          case None =>
            ReadMode.plainVisible(snapshot.checkpoint, snapshot.net, rel, TableLogReader.isDirectory(conf, file, None))
          case Some(_) if snapshot.net.isRestored(rel) => true
          case Some(txn) => committedFiles(root, txn, snapshot) match {
              case Some(files) => files.contains(rel)
              case None => rootOf(root.getParent, plain).exists(visibleIn(_, file, plain))
            }
        }
    }

  private def snapshotOf(root: Path): TableLogReader.Snapshot = snapshots.computeIfAbsent(root,
    r => {
      val layout = LogLayout(r)
      val ops = opsFor(r)
      val replaceListing = ops.list(layout.replaceDir)
      val checkpoint = agreeCheckpoint(r, layout, ops, replaceListing)
      val through = checkpoint.map(_.through).getOrElse(0L)
      val listed = loadReplaceLog(r, through, Some(replaceListing))
      // Every record up to the last one made before the read began. Sequence order is commit
      // order, so the records before it were published earlier still, whatever their own clocks
      // say: one dated ahead (a driver with a fast clock) never hides a later commit.
      val storedAt = TableLogReader.storeTimes(replaceListing)
      val proposed = listed.records
        .filter(rec => cut.precedes(rec, rec.sequence.flatMap(s => storedAt.get(layout.replaceRecord(s).getName))))
        .lastOption.flatMap(_.sequence).getOrElse(through)
      val agreed = arbiter.agreeHighest(cut, r.toString, proposed)
      // Another JVM of this read may have listed a record this listing missed (its publish was
      // completing): it exists now, so list again.
      val log = if (agreed > listed.highest) loadReplaceLog(r, through, None) else listed
      if (agreed > math.max(through, log.highest)) {
        throw new java.io.IOException(s"txcommit: ${Paths.display(layout.replaceRecord(agreed))} " +
          s"was found by another JVM of $cut but is missing now; a replacement record was deleted " +
          "while it was being read")
      }
      TableLogReader.Snapshot(checkpoint, ReplaceLog(log.records.filter(_.sequence.exists(_ <= agreed))), log)
    })

  /**
   * The read's checkpoint of the table: the newest one that this listing can use (it was
   * published before the read began, and the `replace/` records it folds in are listed), agreed
   * with the read's other JVMs, so all of them judge covered transactions alike.
   */
  private def agreeCheckpoint(root: Path, layout: LogLayout, ops: TableLogReader.LogOps,
      replaceListing: Seq[FileStatus]): Option[Checkpoint] = {
    val listedHighest = replaceListing.flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName))
      .foldLeft(0L)(math.max)
    val checkpoints = CheckpointLog.list(layout, ops.list)
    val storedAt = TableLogReader.storeTimes(checkpoints.listed.map(_._2))
    val mine = CheckpointLog.newest(checkpoints, ops.read, Paths.display,
      c => c.through <= listedHighest && cut.precedes(c.asOf, storedAt.get(layout.checkpoint(c.number).getName)))
    val agreed = arbiter.agreeHighest(cut, root.toString + TableLogReader.CheckpointKey, mine.fold(0L)(_.number))
    if (agreed == mine.fold(0L)(_.number)) mine
    else if (agreed == 0L) None
    else Some(CheckpointLog.byNumber(layout, agreed, ops.read, Paths.display).getOrElse(
        throw new java.io.IOException(s"txcommit: ${Paths.display(layout.checkpoint(agreed))} was " +
          s"chosen by another JVM of $cut but cannot be read here; a checkpoint was deleted or " +
          "damaged while it was being read")))
  }

  private def loadReplaceLog(root: Path, after: Long, listing: Option[Seq[FileStatus]]): ReplaceLog = {
    val ops = opsFor(root)
    ReplaceLog.load(LogLayout(root), dir => listing.getOrElse(ops.list(dir)), ops.read, Paths.display,
      e =>
        if (ignoreCorrupt) {
          log.warn(s"${e.getMessage} (ignoring it: spark.txcommit.read.ignoreCorruptRecords=true)")
        } else throw e, after)
  }

  /**
   * The table `dir` is in: the nearest directory at or above it holding `_txcommit/`. A
   * partition directory is answered by one [[TreeListing]] of the tree above it; for a file named
   * with a txn id, a listing that saw no log at or above `dir` is checked with the store (a log
   * created after the listing began may hold its uncommitted transaction).
   */
  private def rootOf(dir: Path, plain: Boolean): Option[Path] =
    if (dir == null) None
    else {
      val cache = if (plain) plainRoots else roots
      val cached = cache.get(dir)
      if (cached != null) cached
      else {
        val found =
          if (TableLogReader.Roots.get(dir.toString).isDefined) Some(dir)
          else holdsLog(dir, plain) match {
            case Some(true) =>
              TableLogReader.Roots.put(dir.toString, java.lang.Boolean.TRUE)
              Some(dir)
            case Some(false) => rootOf(dir.getParent, plain)
            case None => None // the reader's credentials end below here: nothing above is probed
          }
        cache.put(dir, found)
        found
      }
    }

  private def holdsLog(dir: Path, plain: Boolean): Option[Boolean] = {
    val listing = treeListingOf(dir)
    listing.flatMap(_.holdsLog(dir)) match {
      case Some(true) => Some(true)
      case Some(false) if plain || listing.exists(_.inTable(dir)) => Some(false)
      case _ => probe(dir)
    }
  }

  /**
   * The tree listing that answers for `dir`: for a partition directory, the one of its tree
   * (listed once per read and JVM, however many listing tasks ask); for any other directory,
   * one already made for a partition directory below it.
   */
  private def treeListingOf(dir: Path): Option[TreeListing] =
    if (treeListingMaxFiles == 0) None
    else {
      val top = TreeListing.topOf(dir)
      val key = (cut.id, top.toString)
      if (top == dir) TableLogReader.TreeListings.get(key).flatMap(_.listing)
      else TableLogReader.TreeListings.getOrElseUpdate(key,
        new TableLogReader.TreeListingOnce(TreeListing.list(top, conf, treeListingMaxFiles))).listing
    }

  private lazy val treeListingMaxFiles = io.txcommit.conf.TxCommitConf.treeListingMaxFiles(conf)

  /**
   * Whether `dir` holds `_txcommit/`, asked of the store; None when the reader may not look into
   * it (credentials scoped to a prefix below it: S3 answers 403). Such a directory holds no table
   * this read could use: it is taken as "not a table", and nothing above it is probed.
   */
  private def probe(dir: Path): Option[Boolean] = probed.computeIfAbsent(dir,
    d =>
      try Some(d.getFileSystem(conf).exists(new Path(d, LogLayout.LogDirName)))
      catch {
        case e: java.nio.file.AccessDeniedException =>
          TableLogReader.denied(d, e)
          None
      })

  private def committedFiles(root: Path, txn: String, snapshot: TableLogReader.Snapshot): Option[Set[String]] =
    snapshot.replaced.byTxn.get(txn) match {
      case Some(r) => Some(r.added.iterator.map(_.path).toSet)
      case None if snapshot.checkpoint.exists(_.covers(txn)) => snapshot.checkpoint.map(_.livePaths(txn))
      // A replacing commit outside the snapshot: its commits/ copy commits nothing.
      case None if snapshot.listed.byTxn.contains(txn) => None
      case None => committed.computeIfAbsent((root, txn), _ => decide(root, txn))
    }

  /** Whether the append `txn` is in the snapshot (agreed with the read's other JVMs). */
  private def decide(root: Path, txn: String): Option[Set[String]] = {
    val found = load(root, txn)
    // A corrupt record (hidden on request) commits nothing; its store time is not asked, since
    // a record repaired by hand is read again.
    val proposed = found.exists(c =>
      !c.replacing && (c.time ne TableLogReader.Unreadable) && cut.precedes(c.time,
        storedAt(LogLayout(root).commitRecord(txn), keep = true)))
    if (!arbiter.agreeCommitted(cut, root.toString, txn, proposed)) None
    else found.orElse(load(root, txn)) // another JVM found it first: its publish completed since
      .filterNot(_.replacing).map(_.added.keySet)
  }

  /**
   * When the store stamped the record at `path` (asked only of another application's records,
   * once per record and JVM when `keep`: a decoded record is never rewritten; a corrupt one may
   * be repaired, so its time is not kept). None where the store keeps no time.
   */
  private def storedAt(path: Path, keep: Boolean): Option[Long] =
    TableLogReader.StoredAt.get(path.toString).map(_.longValue).orElse {
      val t =
        try path.getFileSystem(conf).getFileStatus(path).getModificationTime
        catch { case _: java.io.FileNotFoundException => 0L }
      if (t > 0L) {
        if (keep) TableLogReader.StoredAt.put(path.toString, java.lang.Long.valueOf(t))
        Some(t)
      } else None
    }

  private def load(root: Path, txn: String): Option[TableLogReader.Commit] = {
    val recordPath = LogLayout(root).commitRecord(txn)
    val key = recordPath.toString
    TableLogReader.Records.get(key).orElse {
      opsFor(root).read(recordPath).map { b =>
        try {
          val c = TableLogReader.Commit.of(RecordCodec.decode(b, Paths.display(recordPath), txn))
          TableLogReader.Records.put(key, c) // decoded, immutable: kept across reads
          c
        } catch {
          case e: CorruptCommitRecordException if ignoreCorrupt => // never cached
            log.warn(s"${e.getMessage} (hiding its files: spark.txcommit.read.ignoreCorruptRecords=true)")
            TableLogReader.Commit(Map.empty, replacing = false, TableLogReader.Unreadable)
        }
      }
    }
  }

  /**
   * How this listing lists and reads a table's log: through the table's store adapter when one
   * serves it (on S3 a LIST of `replace/` is one request, where S3A's `listStatus` of a
   * missing directory adds a HEAD and a LIST, and a record is one GET, without S3A's HEAD),
   * else through the Hadoop file system.
   */
  private val ops = new ConcurrentHashMap[Path, TableLogReader.LogOps]()

  private def opsFor(root: Path): TableLogReader.LogOps = ops.computeIfAbsent(root,
    r =>
      scala.util.Try(Adapters.open(r, conf)).toOption match {
        case Some(store) => TableLogReader.LogOps(store.list, store.read)
        case None =>
          val fs: FileSystem = r.getFileSystem(conf)
          TableLogReader.LogOps(dir => listFiles(fs, dir), p => readFile(fs, p))
      })

  private def readFile(fs: FileSystem, path: Path): Option[Array[Byte]] =
    try {
      val in = fs.open(path)
      try Some(org.apache.commons.io.IOUtils.toByteArray(in))
      finally in.close()
    } catch { case _: java.io.FileNotFoundException => None }

  private def listFiles(fs: FileSystem, dir: Path): Seq[FileStatus] =
    try fs.listStatus(dir).toSeq.filter(_.isFile)
    catch { case _: java.io.FileNotFoundException => Seq.empty }
}

object TableLogReader {

  // The bounds first: an object's vals are set in order, and a cache built above its bound
  // would see 0 (and keep nothing).
  /** At most this many file names of decoded commit records stay cached in a JVM. */
  val RecordsMaxFiles: Long = 1000000L

  /** At most this many directories known to be table roots stay cached in a JVM. */
  val RootsMax: Long = 100000L

  /**
   * Whether a replacing commit removed the file now at `file`. Removals of files without a txn id
   * carry the identity of the file they removed, so only those ask the store for the file's size
   * and time: a file written anew under a removed name is shown. One that is gone is hidden.
   */
  private[read] def removed(conf: Configuration, removals: Removals, rel: String, file: Path,
      listed: Option[FileStatus] = None): Boolean =
    removals.names(rel) && (removals.hidesPath(rel) ||
      (try {
        val st = listed.getOrElse(file.getFileSystem(conf).getFileStatus(file))
        removals.hides(rel, st.getLen, st.getModificationTime)
      } catch { case _: java.io.FileNotFoundException => true }))

  /** Whether `file` (as `listed`, when a listing returned it) is a directory; a path gone is none. */
  private[read] def isDirectory(conf: Configuration, file: Path, listed: Option[FileStatus]): Boolean =
    listed.map(_.isDirectory).getOrElse {
      try file.getFileSystem(conf).getFileStatus(file).isDirectory
      catch { case _: java.io.FileNotFoundException => false }
    }

  private final case class LogOps(list: Path => Seq[FileStatus], read: Path => Option[Array[Byte]])

  /**
   * A table's snapshot for one read: its `checkpoint`, then `replaced` (the records after the
   * checkpoint up to the agreed sequence) of `listed` (the records after the checkpoint listed).
   */
  private final case class Snapshot(checkpoint: Option[Checkpoint], replaced: ReplaceLog, listed: ReplaceLog) {
    lazy val net: NetRemovals = NetRemovals.of(checkpoint, replaced.records)
  }

  /** A tree listing made at most once (the first caller lists; others wait for its answer). */
  private final class TreeListingOnce(make: => Option[TreeListing]) {
    lazy val listing: Option[TreeListing] = make
  }

  /** Tree listings by (read, top directory): one per read and JVM, dropped with old reads. */
  private val TreeListings = new BoundedCache[(String, String), TreeListingOnce](1000L, _ => 1L)

  /** The arbiter's key for a table's checkpoint (no table URI holds a NUL). */
  private val CheckpointKey = "\u0000checkpoint"

  /**
   * What a `commits/` record says, as the reader needs it: the files it adds with their sizes
   * (a read planned from the log needs both), whether it is a replacing commit's copy, and the
   * record without its file lists (`time`: when and by which application it committed).
   */
  private[txcommit] final case class Commit(added: Map[String, Long], replacing: Boolean, time: CommitRecord)

  private[txcommit] object Commit {
    def of(record: CommitRecord): Commit =
      Commit(record.added.iterator.map(f => f.path -> f.size).toMap, record.isReplacing,
        record.copy(added = Nil, replacement = None))
  }

  /** The store's modification times of listed log files, by file name (0: the store keeps none). */
  private def storeTimes(listing: Seq[FileStatus]): Map[String, Long] =
    listing.iterator.filter(_.getModificationTime > 0L).map(st => st.getPath.getName -> st.getModificationTime).toMap

  /** The store's time of commit records asked for ([[TableLogReader.storedAt]]), by full URI. */
  private val StoredAt = new BoundedCache[String, java.lang.Long](RecordsMaxFiles, _ => 1L)

  /** A corrupt record ignored by request: hides its files (and counts as committing nothing). */
  private val Unreadable = CommitRecord("", "", "", 0L, Long.MaxValue, Nil, None, "")

  /** Directories whose refused probe was logged (once per directory and JVM). */
  private val deniedDirs = new BoundedCache[String, java.lang.Boolean](10000L, _ => 1L)
  private val log = LoggerFactory.getLogger(classOf[TableLogReader])

  private def denied(dir: Path, e: java.nio.file.AccessDeniedException): Unit =
    if (deniedDirs.get(dir.toString).isEmpty) {
      deniedDirs.put(dir.toString, java.lang.Boolean.TRUE)
      log.info(s"txcommit: reads may not look for a transaction log in ${Paths.display(dir)} " +
        s"(access denied: ${Option(e.getMessage).getOrElse("").take(200)}); files below it are " +
        "read as not belonging to a txcommit table above it. This message is shown once.")
    }

  /**
   * What the commit record at a path (its full URI) names in `added`, for records found and
   * decoded. Never holds "absent" or "corrupt": those are asked again by every listing.
   */
  private[txcommit] val Records =
    new BoundedCache[String, Commit](RecordsMaxFiles, c => 1L + c.added.size)

  /** Directories (full URI) seen holding `_txcommit/`. A table root never stops being one:
   *  nothing in txcommit deletes `_txcommit/` (VACUUM keeps the log). */
  private[txcommit] val Roots = new BoundedCache[String, java.lang.Boolean](RootsMax, _ => 1L)
}
