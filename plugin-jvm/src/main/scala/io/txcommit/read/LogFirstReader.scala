package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{CorruptCommitRecordException, Paths}
import io.txcommit.log.{
  BoundedCache,
  Checkpoint,
  CheckpointLog,
  DataFileName,
  LogLayout,
  NetRemovals,
  ReadMode,
  RecordCodec,
  ReplaceLog,
  TableState,
  TxnId
}
import io.txcommit.store.Adapters

/**
 * Judges files against the log-first snapshots a read fixed before it listed any data
 * ([[SnapshotHandle]]), by the reader rule of docs/protocol.md: the same answer on the driver and
 * on every executor, because every JVM loads the same records by name (no clock, no agreement
 * round trip). A file in none of the handle's tables, and a file whose transaction the table's
 * snapshot does not hold while a log below the table's root lies between (a tree nested by a
 * version without I18), is judged by `fallback`, today's rule.
 */
final class LogFirstReader(conf: Configuration, ignoreCorrupt: Boolean, handle: SnapshotHandle,
    fallback: () => TableLogReader) {
  private val log = LoggerFactory.getLogger(getClass)
  private val nestedLogs = new ConcurrentHashMap[Path, java.lang.Boolean]()
  // This filter's snapshots, also when the JVM-wide cache cannot keep one (too heavy).
  private val mine = new ConcurrentHashMap[String, LogFirstReader.Loaded]()
  private val stores = new ConcurrentHashMap[Path, io.txcommit.store.CommitStore]()
  private def storeOf(root: Path) = stores.computeIfAbsent(root, r => Adapters.open(r, conf))

  def isVisible(file: Path): Boolean = isVisible(file, None)

  /**
   * As [[isVisible]], for a file a listing returned as `listed`: its size and time settle a
   * removal of a file without a txn id (I21) without asking the store.
   */
  def isVisible(file: Path, listed: Option[FileStatus]): Boolean = handle.tablesOf(file) match {
    case Nil => fallback().isVisible(file)
    case tables => judge(file, tables, listed)
  }

  /**
   * Every file the snapshot of table `t` shows, from its checkpoint and records alone (nothing is
   * listed): each transaction's files (its newest `replace/` record after the checkpoint, else
   * the checkpoint's list, else its `commits/` record), the files a restore re-added, less every
   * path a net removal names. A file without a txn id is in it only where a record names it
   * (a log-only table shows no other; docs/protocol.md, I32), and a removal after such a record
   * hides it by path.
   */
  def committedFiles(t: TableSnapshot): Vector[LogFirstReader.Entry] = {
    val root = new Path(t.root)
    val s = mine.computeIfAbsent(t.root, _ => LogFirstReader.loaded(handle.readId, t, load(root, t)))
    // The first source naming a path gives its entry, in this order (a million entries: a sized
    // set of paths and a list, not a linked map).
    val expected = s.checkpoint.fold(0)(_.files) + 16
    val seen = new java.util.HashSet[String](expected * 4 / 3 + 1)
    val out = new scala.collection.mutable.ArrayBuffer[LogFirstReader.Entry](expected)
    def add(txn: String, rel: String, size: Long): Unit =
      if (seen.add(rel)) out += LogFirstReader.Entry(rel, size, txn)
    s.replaced.byTxn.foreach { case (txn, r) => r.added.foreach(f => add(txn, f.path, f.size)) }
    s.checkpoint.foreach(_.committed.foreach { case (txn, files) =>
      if (!s.replaced.byTxn.contains(txn)) files.foreach(f => add(txn, f.path, f.size))
    })
    s.appends.toSeq.sorted.foreach { txn =>
      if (!s.replaced.byTxn.contains(txn) && !s.checkpoint.exists(_.covers(txn)))
        appendedSizes(root, txn).foreach { case (p, size) => add(txn, p, size) }
    }
    // A restored file without a txn id is the restoring commit's.
    val restorer = s.replaced.records.flatMap(r => r.restored.map(_.path -> r.txn)).toMap
    s.net.restored.values.foreach(f => f.txn.orElse(restorer.get(f.path)).foreach(add(_, f.path, f.size)))
    out.iterator.filterNot(e => s.net.removals.names(e.path)).toVector
  }

  /**
   * The statuses of [[committedFiles]] below `prefix` (relative to the table, "" or ending in
   * `/`) as a file index plans from them: each data file at its path, with its recorded size and,
   * as its time, its transaction's start. Reads that loaded equal records get the same list, so
   * the plans of an unchanged table share one (a million-file table's statuses, once; a plan
   * cache then holds small plans of it, not a copy of the table each).
   */
  def committedStatuses(t: TableSnapshot, prefix: String): Vector[FileStatus] = {
    val s = mine.computeIfAbsent(t.root, _ => LogFirstReader.loaded(handle.readId, t, load(new Path(t.root), t)))
    val key = (t.root, prefix)
    LogFirstReader.statuses.get(key).collect { case (st, l, files) if st == t && l == s => files }.getOrElse {
      val below = Paths.below(new Path(t.root))
      val started = new ConcurrentHashMap[String, java.lang.Long]()
      val data =
        committedFiles(t).filter(e => e.path.startsWith(prefix) && TableState.isData(e.path.substring(prefix.length)))
      val files = LogFirstReader.mapInParallel(data) { e =>
        val at =
          started.computeIfAbsent(e.txn, (txn: String) => java.lang.Long.valueOf(TxnId.startedAt(txn).getOrElse(0L)))
        new FileStatus(e.size, false, 0, 0L, at.longValue, 0L, LogFirstReader.FilePermission, "", "", below(e.path))
      }
      LogFirstReader.statuses.put(key, (t, s, files))
      files
    }
  }

  /** Whether the table of snapshot `t` is log-only (I32): its checkpoint says so. */
  def logOnly(t: TableSnapshot): Boolean =
    t.checkpoint > 0L &&
      mine.computeIfAbsent(t.root, _ => LogFirstReader.loaded(handle.readId, t, load(new Path(t.root), t)))
        .checkpoint.exists(_.logOnly)

  /**
   * The reader rule for `file` by the nearest of `tables` (those holding it, nearest first). A
   * transaction that table's snapshot does not hold is judged by the next table above, as the
   * clock-cut rule judges a tree nested by a version without I18; where a log the read holds no
   * snapshot of lies below the table's root, by the clock cut.
   */
  private def judge(file: Path, tables: List[TableSnapshot], listed: Option[FileStatus]): Boolean = tables match {
    case Nil => false
    case t :: above =>
      val root = new Path(t.root)
      Paths.relativize(root, file) match {
        case None => fallback().isVisible(file)
        case Some(rel) =>
          val s = mine.computeIfAbsent(t.root, _ => LogFirstReader.loaded(handle.readId, t, load(root, t)))
          val txn = DataFileName.txnOf(file.getName)
          if (TableLogReader.removed(conf, s.net.removals, rel, file, listed))
            // A nested log judges a file without a txn id alone (its table's removals only).
            txn.isEmpty && nestedBelow(root, file.getParent) && fallback().isVisible(file)
          else txn match {
            case None => ReadMode.plainVisible(s.checkpoint, s.net, rel, TableLogReader.isDirectory(conf, file, listed))
            case Some(_) if s.net.isRestored(rel) => true
            case Some(id) => committedFiles(root, s, id) match {
                case Some(files) => files.contains(rel)
                case None if nestedBelow(root, file.getParent) => fallback().isVisible(file)
                case None => judge(file, above, listed)
              }
          }
      }
  }

  /** The files `txn` makes visible in the snapshot; None when the snapshot does not hold it. */
  private def committedFiles(root: Path, s: LogFirstReader.Loaded, txn: String): Option[Set[String]] =
    s.replacedAdds.get(txn)
      .orElse(s.checkpoint.filter(_.covers(txn)).map(_.livePaths(txn)))
      .orElse(if (s.appends(txn)) Some(appended(root, txn)) else None)

  /** What the append `txn` (listed in the snapshot) adds; a replacing commit's copy adds nothing. */
  private def appended(root: Path, txn: String): Set[String] = appendedSizes(root, txn).keySet

  /** [[appended]], each file with its size. */
  private def appendedSizes(root: Path, txn: String): Map[String, Long] = {
    val path = LogLayout(root).commitRecord(txn)
    TableLogReader.Records.get(path.toString).map(c => if (c.replacing) Map.empty[String, Long] else c.added)
      .getOrElse {
        val bytes = storeOf(root).read(path).getOrElse(throw new java.io.IOException(
            s"txcommit: ${Paths.display(path)} was listed when this read began but is missing now; a commit " +
              "record was deleted while the table was being read"))
        try {
          val c = TableLogReader.Commit.of(RecordCodec.decode(bytes, Paths.display(path), txn))
          TableLogReader.Records.put(path.toString, c)
          if (c.replacing) Map.empty else c.added
        } catch {
          case e: CorruptCommitRecordException if ignoreCorrupt =>
            log.warn(s"${e.getMessage} (hiding its files: spark.txcommit.read.ignoreCorruptRecords=true)")
            Map.empty
        }
      }
  }

  /** Whether a directory between `dir` (inclusive) and `root` (exclusive) holds `_txcommit/`. */
  private def nestedBelow(root: Path, dir: Path): Boolean =
    Iterator.iterate(dir)(_.getParent).takeWhile(d => d != null && d.depth > root.depth)
      .exists(d =>
        nestedLogs.computeIfAbsent(d,
          x => java.lang.Boolean.valueOf(x.getFileSystem(conf).exists(new Path(x, LogLayout.LogDirName))))
          .booleanValue)

  private def load(root: Path, t: TableSnapshot): () => LogFirstReader.Loaded = () => {
    val store = storeOf(root)
    val layout = LogLayout(root)
    val checkpoint =
      if (t.checkpoint == 0L) None
      else Some(CheckpointLog.byNumber(layout, t.checkpoint, store.read, Paths.display).getOrElse(
          throw new java.io.IOException(s"txcommit: ${Paths.display(layout.checkpoint(t.checkpoint))} " +
            "was listed when this read began but cannot be read now; a checkpoint was deleted or damaged")))
    val from = checkpoint.fold(0L)(_.through) + 1
    // Records by name: every JVM of the read loads the same ones, whatever it would list now; a
    // group's prepared record no decision had committed when the read asked is left out (I35).
    val open = t.open.toSet
    val records = (from to t.through).filterNot(open).flatMap { seq =>
      val path = layout.replaceRecord(seq)
      val bytes = store.read(path).getOrElse(throw new java.io.IOException(
          s"txcommit: ${Paths.display(path)} is missing below the highest listed record; a replacement " +
            "record was deleted while the table was being read"))
      try Some(RecordCodec.decodeReplacement(bytes, Paths.display(path), seq))
      catch {
        case e: CorruptCommitRecordException if ignoreCorrupt =>
          log.warn(s"${e.getMessage} (ignoring it: spark.txcommit.read.ignoreCorruptRecords=true)")
          None
      }
    }
    LogRequests.prefetchRecords(root, store, t.appends)
    LogFirstReader.Loaded(checkpoint, ReplaceLog(records), t.appends.toSet)
  }
}

object LogFirstReader {

  // Below this many, one thread maps a list (the pool's hand-off would cost more than it saves).
  private val ParallelFrom = 50000

  /**
   * `f` of each of `xs`, in order: on the common pool, a part each, when there are many (a
   * million-file table's paths, each a URI to parse, on the driver's idle cores).
   */
  private def mapInParallel[A, B <: AnyRef: scala.reflect.ClassTag](xs: Vector[A])(f: A => B): Vector[B] =
    if (xs.size < ParallelFrom) xs.map(f)
    else {
      val out = new Array[B](xs.size)
      java.util.stream.IntStream.range(0, xs.size).parallel().forEach(i => out(i) = f(xs(i)))
      Vector.from(scala.collection.immutable.ArraySeq.unsafeWrapArray(out))
    }

  /**
   * The permission of every status planned from a log (the default a status without one gets),
   * one instance for a million files: nothing reads it but Spark's listing-side code.
   */
  private val FilePermission = org.apache.hadoop.fs.permission.FsPermission.getFileDefault

  /** A file a snapshot shows (path relative to its table), and the transaction whose record names it. */
  final case class Entry(path: String, size: Long, txn: String)

  /** A table's snapshot, its records read. */
  private final case class Loaded(checkpoint: Option[Checkpoint], replaced: ReplaceLog, appends: Set[String]) {
    lazy val replacedAdds: Map[String, Set[String]] =
      replaced.byTxn.map { case (txn, r) => txn -> r.added.iterator.map(_.path).toSet }
    lazy val net: NetRemovals = NetRemovals.of(checkpoint, replaced.records)
    def weight: Long =
      1L + appends.size + checkpoint.fold(0L)(c => c.files.toLong + c.committed.size + c.removed.size) +
        replaced.records.iterator.map(r => 1L + r.added.size + r.removed.size + r.restored.size).sum
  }

  /**
   * Loaded snapshots by (read, table), weighed by the entries they hold like the checkpoint
   * cache: each listing task of a read on an executor reuses its JVM's.
   */
  private val cache = new BoundedCache[(String, String), Loaded](CheckpointLog.CacheMaxFiles, _.weight)
  private object LoadLock

  /**
   * The last file list each (table, prefix) planned from, with the snapshot and records it came
   * from: records are equal only if they name the same files (a log deleted and written again
   * has other records under the same numbers), so a hit is the same list. Weighed by files.
   */
  private val statuses =
    new BoundedCache[(String, String), (TableSnapshot, Loaded, Vector[FileStatus])](CheckpointLog.CacheMaxFiles,
      _._3.size.toLong)

  /** What the driver read while it took the snapshot: its listing then reads nothing again. */
  private[read] def seed(readId: String, t: TableSnapshot, checkpoint: Option[Checkpoint], replaced: ReplaceLog): Unit =
    cache.put((readId, t.root), Loaded(checkpoint, replaced, t.appends.toSet))

  /**
   * Whether two reads of the table at `root` loaded the same records, both still held here: two
   * snapshots naming the same record numbers name the same records only if no one deleted the
   * log and wrote it again in between.
   */
  def sameRecords(readA: String, readB: String, root: String): Boolean =
    (cache.get((readA, root)), cache.get((readB, root))) match {
      case (Some(a), Some(b)) => a == b
      case _ => false
    }

  private def loaded(readId: String, t: TableSnapshot, make: () => Loaded): Loaded = {
    val key = (readId, t.root)
    cache.get(key).getOrElse(LoadLock.synchronized(cache.get(key).getOrElse {
      val l = make()
      cache.put(key, l)
      l
    }))
  }
}
