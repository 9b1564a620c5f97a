package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{CorruptCommitRecordException, Paths}
import io.txcommit.log.{DataFileName, LogLayout, RecordCodec, ReplaceLog}

/**
 * Answers "is this file visible?" for one listing, by the reader rule of docs/protocol.md:
 * finds the table a file belongs to (the nearest ancestor directory holding `_txcommit/`),
 * lists the table's replacement log once, and loads the commit record of each transaction it
 * meets, once. A file is visible iff (its name carries no txn id, or its txn is committed and
 * names it) and no replacing commit removed it. Costs one existence check per distinct
 * directory, one listing of `replace/` per table and one read per distinct transaction.
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
    val fs = r.getFileSystem(conf)
    ReplaceLog.load(LogLayout(r), dir => listFiles(fs, dir), p => readFile(fs, p), Paths.display,
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
        val fs = dir.getFileSystem(conf)
        val found =
          if (fs.exists(new Path(dir, LogLayout.LogDirName))) Some(dir) else rootOf(dir.getParent)
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
    val fs: FileSystem = recordPath.getFileSystem(conf)
    readFile(fs, recordPath).map { b =>
      try RecordCodec.decode(b, Paths.display(recordPath), txn).added.iterator.map(_.path).toSet
      catch {
        case e: CorruptCommitRecordException if ignoreCorrupt =>
          log.warn(s"${e.getMessage} (hiding its files: spark.txcommit.read.ignoreCorruptRecords=true)")
          Set.empty[String]
      }
    }
  }

  private def readFile(fs: FileSystem, path: Path): Option[Array[Byte]] =
    try {
      val in = fs.open(path)
      try Some(org.apache.commons.io.IOUtils.toByteArray(in)) finally in.close()
    } catch { case _: java.io.FileNotFoundException => None }

  private def listFiles(fs: FileSystem, dir: Path): Seq[FileStatus] =
    try fs.listStatus(dir).toSeq.filter(_.isFile)
    catch { case _: java.io.FileNotFoundException => Seq.empty }
}
