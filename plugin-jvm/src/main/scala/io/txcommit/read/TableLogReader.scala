package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{CorruptCommitRecordException, Paths}
import io.txcommit.log.{LogLayout, RecordCodec}

/**
 * Answers "is this txcommit file committed?" for one listing: finds the table a file belongs
 * to (the nearest ancestor directory holding `_txcommit/`) and loads the commit record of each
 * transaction it meets, once. Costs one existence check per distinct directory and one read
 * per distinct transaction; files without a txcommit name cost nothing.
 */
final class TableLogReader(conf: Configuration, ignoreCorrupt: Boolean) {
  private val log = LoggerFactory.getLogger(getClass)
  private val roots = new ConcurrentHashMap[Path, Option[Path]]()
  private val committed = new ConcurrentHashMap[(Path, String), Option[Set[String]]]()

  /** Whether `file`, of transaction `txn`, is visible. */
  def isVisible(file: Path, txn: String): Boolean =
    rootOf(file.getParent) match {
      case None => true // not inside a txcommit table: someone else's file, shown as before
      case Some(root) =>
        Paths.relativize(root, file) match {
          case None => false
          case Some(rel) => committedFiles(root, txn).exists(_.contains(rel))
        }
    }

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

  private def committedFiles(root: Path, txn: String): Option[Set[String]] =
    committed.computeIfAbsent((root, txn), _ => load(root, txn))

  private def load(root: Path, txn: String): Option[Set[String]] = {
    val recordPath = LogLayout(root).commitRecord(txn)
    val fs: FileSystem = recordPath.getFileSystem(conf)
    val bytes =
      try {
        val in = fs.open(recordPath)
        try Some(org.apache.commons.io.IOUtils.toByteArray(in)) finally in.close()
      } catch { case _: java.io.FileNotFoundException => None }
    bytes.map { b =>
      try RecordCodec.decode(b, Paths.display(recordPath), txn).added.iterator.map(_.path).toSet
      catch {
        case e: CorruptCommitRecordException if ignoreCorrupt =>
          log.warn(s"${e.getMessage} (hiding its files: spark.txcommit.read.ignoreCorruptRecords=true)")
          Set.empty[String]
      }
    }
  }
}
