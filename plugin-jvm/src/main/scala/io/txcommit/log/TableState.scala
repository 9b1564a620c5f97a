package io.txcommit.log

import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import io.txcommit.{ListingChangedException, Paths}
import io.txcommit.store.{CommitStore, FileTree}

/**
 * One table's log as the writer, VACUUM and history see it at one moment, read through the
 * table's [[CommitStore]] (the log) and its Hadoop file system (recursive listing of data).
 * It applies the same reader rule as `TableLogReader` (docs/protocol.md, "Reading"). Prepared
 * records of groups (multi-table transactions, I33) count as `groups` judges them: each group's
 * decision asked once for the whole snapshot.
 */
final class TableState(val table: Path, store: CommitStore, conf: Configuration,
    groupsOf: Option[GroupDecisions] = None) {
  val layout: LogLayout = LogLayout(table)
  private lazy val fs: FileSystem = table.getFileSystem(conf)
  private val records = new ConcurrentHashMap[String, Option[CommitRecord]]()

  /** How this snapshot judges prepared records. */
  val groups: GroupDecisions = groupsOf.getOrElse(GroupDecisions.of(conf, table, store))

  /**
   * Every `replace/` record listed, prepared records of groups that did not commit them included.
   * Listed after `commits/` (forced first), so a replacing commit whose `commits/` copy was
   * listed is in it: a copy is written only after its `replace/` record exists.
   */
  lazy val replaceListed: ReplaceLog =
    ReplaceLog.load(layout, _ => replaceListing, store.read, Paths.display, after = 0L)

  /** The replacing commits of this snapshot: prepared records only where their group committed them. */
  lazy val replaceLog: ReplaceLog = replaceListed.decided(groups.committed)

  /**
   * Other groups' prepared records not decided when this snapshot asked (`replace/` ones, in
   * sequence order, then `commits/` ones): they commit nothing yet and may still commit. The
   * `commits/` records not covered by the newest checkpoint are read to find them (every one a
   * checkpoint covers is decided).
   */
  lazy val undecided: Seq[CommitRecord] =
    replaceListed.records.filter(groups.undecided) ++
      commitTxns.toSeq.sorted.filterNot(covered).flatMap(commitRecordOf).filter(groups.undecided)

  /**
   * The transactions the newest checkpoint covers, listed once for the snapshot: each committed
   * (a checkpoint covers a group's prepared record only once its group committed it). A group
   * this snapshot asked before its decision existed may be covered by a checkpoint listed
   * after, so a covered prepared record counts as committed wherever this snapshot judges it,
   * never as undecided in one place and as never committed in another (VACUUM deleted such an
   * append's files).
   */
  private lazy val covered: Set[String] =
    CheckpointLog.newest(CheckpointLog.list(layout, store.list), store.read, Paths.display, _ => true)
      .fold(Set.empty[String])(_.committed.keySet)

  /** Whether the `commits/` record `r` commits in this snapshot (see [[covered]]). */
  private def commits(r: CommitRecord): Boolean = groups.committed(r) || (r.isPrepared && covered(r.txn))

  /** The listing of `replace/` every [[ReplaceLog]] of this snapshot is read from (after `commits/`'s). */
  lazy val replaceListing: Seq[FileStatus] = {
    commitTxns
    store.list(layout.replaceDir)
  }

  /** The replacing commits of this snapshot with a sequence above `sequence` (those up to it not read). */
  def replaceLogAfter(sequence: Long): ReplaceLog =
    ReplaceLog.load(layout, _ => replaceListing, store.read, Paths.display, after = sequence).decided(groups.committed)

  /**
   * The newest checkpoint that carries the table's schema (I27), listed and read (once per JVM)
   * when asked: every transaction it covers is committed, so the schema guard may use it
   * whenever it was published.
   */
  lazy val schemaCheckpoint: Option[Checkpoint] =
    CheckpointLog.newest(CheckpointLog.list(layout, store.list), store.read, Paths.display, _.schema.isDefined)

  /** Reads a log file through the table's store (None: absent). */
  def readLog(path: Path): Option[Array[Byte]] = store.read(path)

  /** The listing of `commits/`, with the store's times. */
  lazy val commitsListing: Seq[FileStatus] = store.list(layout.commitsDir)

  /** Transactions with a record in `commits/`. */
  lazy val commitTxns: Set[String] =
    commitsListing.flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName)).toSet

  /** The store's time of `r`'s file as this snapshot listed it (its `replace/` record, else its `commits/` one); 0 if unknown. */
  def storeTime(r: CommitRecord): Long = {
    val name = r.sequence.fold(s"${r.txn}.json")(LogLayout.replaceRecordName)
    (if (r.sequence.isDefined) replaceListing else commitsListing)
      .find(_.getPath.getName == name).fold(0L)(_.getModificationTime)
  }
  lazy val pendingTxns: Set[String] = txnsIn(layout.pendingDir)
  lazy val abortedTxns: Set[String] = txnsIn(layout.abortedDir)

  /** The rows each transaction wrote, where Spark counted them (`rows/`, read for the history). */
  lazy val rowCounts: Map[String, Long] = txnsIn(layout.rowsDir).toSeq.flatMap(t =>
    store.read(layout.rowCount(t)).flatMap(RowCount.decode(_, t)).map(t -> _.rows)).toMap

  private def txnsIn(dir: Path): Set[String] =
    store.list(dir).flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName)).toSet

  /**
   * Whether `txn` is done: committed, or fenced (a fence in `commits/` commits nothing but ends the
   * transaction). A prepared record counts only where its group committed it.
   */
  def isCommitted(txn: String): Boolean =
    replaceLog.byTxn.contains(txn) || (commitTxns(txn) && commitRecordOf(txn).forall(commits))

  /**
   * The committed record of `txn` (from `replace/` or `commits/`), if it is committed. A
   * replacing commit is committed iff its `replace/` record is in [[replaceLog]]: its
   * `commits/` copy, listed after `replace/` was, commits nothing (its removals would be missing).
   */
  def record(txn: String): Option[CommitRecord] =
    replaceLog.byTxn.get(txn).orElse(commitRecordOf(txn).filter(commits))

  /** The `commits/` record of `txn` other than a replacing commit's copy: an append, a fence or a prepared append. */
  def commitRecordOf(txn: String): Option[CommitRecord] =
    records.computeIfAbsent(txn,
      t =>
        if (!commitTxns(t)) None
        else store.read(layout.commitRecord(t)).map(b =>
          RecordCodec.decode(b, Paths.display(layout.commitRecord(t)), t)).filterNot(_.isReplacing))

  private val addedSets = new ConcurrentHashMap[String, Option[Set[String]]]()

  /** The paths `txn`'s record adds (None when `txn` is not committed), computed once per txn. */
  def added(txn: String): Option[Set[String]] =
    addedSets.computeIfAbsent(txn, t => record(t).map(_.added.iterator.map(_.path).toSet))

  /** Every committed record, replacing ones and appends. */
  def committedRecords: Seq[CommitRecord] =
    (commitTxns ++ replaceLog.byTxn.keySet).toSeq.sorted.flatMap(record)

  /**
   * The newest checkpoint that decodes: how the table is read (I32) and, in a log-only table,
   * which files without a txn id its log names. Listed and read (once per JVM) only when a file
   * without a txn id is judged.
   */
  lazy val modeCheckpoint: Option[Checkpoint] =
    CheckpointLog.newest(CheckpointLog.list(layout, store.list), store.read, Paths.display, _ => true)

  /** The reader rule for one data file (path relative to the table). */
  def isVisible(f: TableFile): Boolean =
    !replaceLog.net.removals.hides(f) && (f.txn match {
      case None => ReadMode.plainVisible(modeCheckpoint, replaceLog.net, f.path, isDirectory = false)
      case Some(t) => added(t).exists(_.contains(f.path)) || replaceLog.net.isRestored(f.path)
    })

  /** Data files (names Spark lists) under `dir` ("" = the whole table), recursively. */
  def dataFiles(dir: String = ""): Seq[TableFile] = allFiles(dir).filter(f => TableState.isData(f.path))

  /**
   * Every file under `dir` ("" = the whole table), hidden or not, recursively; empty when `dir`
   * does not exist. Whole or an error, never part: a replacing commit removes what this lists
   * ([[FileTree]] keeps a directory vanishing below `dir` from cutting the listing short).
   */
  def allFiles(dir: String = ""): Seq[TableFile] = listed(dir, FileTree.files(fs, _))

  /**
   * Every file in the table's own tree, hidden or not: links below the table are not followed,
   * each one met is given to `link` (VACUUM's listing: it deletes nothing through a link, I14).
   */
  def ownFiles(link: Path => Unit): Seq[TableFile] = listed("", FileTree.ownFiles(fs, _, link))

  private def listed(dir: String, list: Path => Iterator[FileStatus]): Seq[TableFile] = {
    val base = if (dir.isEmpty) table else new Path(table, dir)
    val out = ArrayBuffer.empty[TableFile]
    try {
      val it = list(base)
      while (it.hasNext) {
        val st = it.next()
        Paths.relativize(table, st.getPath).foreach(rel => out += TableFile(rel, st.getLen, st.getModificationTime))
      }
      out.toSeq.sortBy(_.path)
    } catch {
      case _: java.io.FileNotFoundException if !fs.exists(base) => Seq.empty // no such directory: no file
      case e: java.io.FileNotFoundException =>
        throw new ListingChangedException(s"${Paths.display(base)} could not be listed whole: " +
            s"${e.getMessage}. Nothing was decided from the partial listing; run again.", e)
    }
  }
}

object TableState {
  private val SummaryPrefixes = Seq("_common_metadata", "_metadata")

  /**
   * A directory or file name Spark 4.3's listing skips (HadoopFSUtils.shouldFilterOutPathName
   * with the default spark.sql.files.ignoredPathSegmentRegex `^[._]`).
   */
  def hiddenName(name: String): Boolean =
    if (SummaryPrefixes.exists(name.startsWith)) false
    else if (name.endsWith("._COPYING_")) true
    else if (name.startsWith("_") && name.contains("=")) false
    else name.startsWith("_") || name.startsWith(".")

  // No segment starting with `_` or `.`, none with `._COPYING_`: no hidden segment, no summary
  // file, so data (what Spark names a million files, tested without splitting each).
  private def plainData(rel: String): Boolean =
    rel.nonEmpty && rel.charAt(0) != '_' && rel.charAt(0) != '.' && !rel.contains("/_") && !rel.contains("/.") &&
      !rel.contains("._COPYING_")

  /**
   * Whether Spark reads the file at `rel` as data: no segment is a hidden name, and the file
   * is not a Parquet summary file (listed, never read: PartitioningAwareFileIndex.isDataPath).
   * Cases: conformance/vectors/hidden-names.json.
   */
  def isData(rel: String): Boolean = if (plainData(rel)) true
  else {
    val segments = rel.split("/")
    val name = segments.last
    !segments.exists(s => s.nonEmpty && hiddenName(s)) &&
    ((name.startsWith("_") && name.contains("=")) || !SummaryPrefixes.exists(name.startsWith))
  }
}
