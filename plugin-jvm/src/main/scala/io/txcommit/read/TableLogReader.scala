package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{CorruptCommitRecordException, Paths}
import io.txcommit.log.{BoundedCache, DataFileName, LogLayout, RecordCodec, ReplaceLog}
import io.txcommit.store.Adapters

/**
 * Answers "is this file visible?" for one listing, by the reader rule of docs/protocol.md:
 * finds the table a file belongs to (the nearest ancestor directory holding `_txcommit/`),
 * lists the table's replacement log once, and loads the commit record of each transaction it
 * meets, once. A file is visible iff (its name carries no txn id, or its txn is committed and
 * names it) and no replacing commit removed it.
 *
 * Commit records are immutable and never deleted (I3, I14), so what a record says is cached
 * JVM-wide ([[TableLogReader.Records]]), as are directories known to hold `_txcommit/`
 * ([[TableLogReader.Roots]]). Only positive answers are kept across listings: a record not
 * found yet, or a directory without `_txcommit/` yet, is asked again by the next listing (a
 * txn may commit, a table may be created, later); a corrupt record is never cached. Costs per
 * listing: one existence check per distinct directory not known to be a table root (until its
 * table root is met), one listing of `replace/` per table, and one read per distinct
 * transaction whose record this JVM has not decoded yet.
 */
final class TableLogReader(conf: Configuration, ignoreCorrupt: Boolean) {
  private val log = LoggerFactory.getLogger(getClass)
  private val roots = new ConcurrentHashMap[Path, Option[Path]]()
  private val committed = new ConcurrentHashMap[(Path, String), Option[Set[String]]]()
  private val replaceLogs = new ConcurrentHashMap[Path, ReplaceLog]()

  /** Whether `file` is visible (files outside any txcommit table always are). */
  def isVisible(file: Path): Boolean =
    rootOf(file.getParent) match {
      case None => true // not inside a txcommit table: someone else's file, shown as before
      case Some(root) =>
        Paths.relativize(root, file) match {
          case None => false
          case Some(rel) =>
            val replaced = replaceLog(root)
            if (replaced.removedPaths.contains(rel)) false
            else DataFileName.txnOf(file.getName) match {
              case None => true
              case Some(txn) => committedFiles(root, txn, replaced).exists(_.contains(rel))
            }
        }
    }

  /** The table's replacement log as this listing sees it. */
  def replaceLog(root: Path): ReplaceLog = replaceLogs.computeIfAbsent(root, r => {
    val ops = opsFor(r)
    ReplaceLog.load(LogLayout(r), ops.list, ops.read, Paths.display,
      e => if (ignoreCorrupt) {
        log.warn(s"${e.getMessage} (ignoring it: spark.txcommit.read.ignoreCorruptRecords=true)")
      } else throw e)
  })

  private def rootOf(dir: Path): Option[Path] =
    if (dir == null) None
    else {
      val cached = roots.get(dir)
      if (cached != null) cached
      else {
        val found =
          if (TableLogReader.Roots.get(dir.toString).isDefined) Some(dir)
          else if (dir.getFileSystem(conf).exists(new Path(dir, LogLayout.LogDirName))) {
            TableLogReader.Roots.put(dir.toString, java.lang.Boolean.TRUE)
            Some(dir)
          } else rootOf(dir.getParent)
        roots.put(dir, found)
        found
      }
    }

  private def committedFiles(root: Path, txn: String, replaced: ReplaceLog): Option[Set[String]] =
    replaced.byTxn.get(txn) match {
      case Some(r) => Some(r.added.iterator.map(_.path).toSet)
      case None => committed.computeIfAbsent((root, txn), _ => load(root, txn))
    }

  private def load(root: Path, txn: String): Option[Set[String]] = {
    val recordPath = LogLayout(root).commitRecord(txn)
    val key = recordPath.toString
    TableLogReader.Records.get(key).orElse {
      opsFor(root).read(recordPath).map { b =>
        try {
          val record = RecordCodec.decode(b, Paths.display(recordPath), txn)
          val added = record.added.iterator.map(_.path).toSet
          TableLogReader.Records.put(key, added) // decoded, immutable: kept across listings
          added
        } catch {
          case e: CorruptCommitRecordException if ignoreCorrupt => // never cached
            log.warn(s"${e.getMessage} (hiding its files: spark.txcommit.read.ignoreCorruptRecords=true)")
            Set.empty[String]
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

  private def opsFor(root: Path): TableLogReader.LogOps = ops.computeIfAbsent(root, r =>
    scala.util.Try(Adapters.open(r, conf)).toOption match {
      case Some(store) => TableLogReader.LogOps(store.list, store.read)
      case None =>
        val fs: FileSystem = r.getFileSystem(conf)
        TableLogReader.LogOps(dir => listFiles(fs, dir), p => readFile(fs, p))
    })

  private def readFile(fs: FileSystem, path: Path): Option[Array[Byte]] =
    try {
      val in = fs.open(path)
      try Some(org.apache.commons.io.IOUtils.toByteArray(in)) finally in.close()
    } catch { case _: java.io.FileNotFoundException => None }

  private def listFiles(fs: FileSystem, dir: Path): Seq[FileStatus] =
    try fs.listStatus(dir).toSeq.filter(_.isFile)
    catch { case _: java.io.FileNotFoundException => Seq.empty }
}

object TableLogReader {
  private final case class LogOps(list: Path => Seq[FileStatus], read: Path => Option[Array[Byte]])

  /** At most this many file names of decoded commit records stay cached in a JVM. */
  val RecordsMaxFiles: Long = 1000000L
  /** At most this many directories known to be table roots stay cached in a JVM. */
  val RootsMax: Long = 100000L

  /**
   * What the commit record at a path (its full URI) names in `added`, for records found and
   * decoded. Never holds "absent" or "corrupt": those are asked again by every listing.
   */
  private[txcommit] val Records =
    new BoundedCache[String, Set[String]](RecordsMaxFiles, added => 1L + added.size)

  /** Directories (full URI) seen holding `_txcommit/`. A table root never stops being one:
   *  nothing in txcommit deletes `_txcommit/` (VACUUM keeps the log). */
  private[txcommit] val Roots = new BoundedCache[String, java.lang.Boolean](RootsMax, _ => 1L)
}
