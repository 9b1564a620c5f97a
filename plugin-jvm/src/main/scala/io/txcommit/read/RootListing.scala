package io.txcommit.read

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.Paths
import io.txcommit.log.{DataFileName, LogLayout, TableState}
import io.txcommit.store.FileTree

/**
 * One listing of a read's root, the one Spark would make (on object stores one flat listing of
 * the prefix, 1,000 keys a request), that finds in one pass the root's data files and the logs of
 * the tables below it: a root in no table costs a read nothing more than Spark's own listing,
 * and a directory holding tables is listed once (docs/readers.md).
 *
 * The log keys of a table below stand for its log-first snapshot only where the listing holds
 * every file that snapshot shows: a commit record the listing returned was complete, with all
 * its data, before that part of the listing was read, so its files are in every part read after
 * it; a part read before it (a name that sorts before `_txcommit`, or, in a walk of a file
 * system, a file beside the log, read with its directory) may miss them. [[ReadFiles]] checks
 * and lists such a table again, after its snapshot: a commit that landed in the listing's
 * middle is then read whole.
 */
private[txcommit] object RootListing {

  /** What the listing found. */
  sealed trait Found

  /** The root holds `_txcommit/` itself: its log is listed apart, before its data (the listing stopped). */
  case object IsTable extends Found

  /**
   * Spark's own listing reads the root: a streaming file sink's `_spark_metadata/` is directly
   * in it (Spark reads that log), it is gone (Spark's error names it), or it is a data file
   * named with a txn id (the read filter judges it).
   */
  case object SparkLists extends Found

  /** The root is a file written without txcommit: plain data, read as Spark reads it. */
  final case class PlainFile(file: FileStatus) extends Found

  /**
   * The root's data files, and the log listings of each table below it (by the table's
   * directory; a log that lists no commit is one too: its files are of no committed transaction).
   */
  final case class Listed(files: Vector[FileStatus], tables: Map[Path, TableLog]) extends Found

  /** One table's log as the listing returned it: `commits/`, `checkpoints/`, `replace/`. */
  final case class TableLog(commits: Vector[FileStatus], checkpoints: Vector[FileStatus], replace: Vector[FileStatus])

  /**
   * Lists `root` (qualified), stopping as soon as it shows the root is a table, or holds a sink
   * log where `sinkLogs` (Spark reads a sink's log for a read of that one root).
   */
  def list(root: Path, conf: Configuration, sinkLogs: Boolean): Found =
    try listing(root, conf, sinkLogs)
    catch { case _: java.io.FileNotFoundException => SparkLists }

  private def listing(root: Path, conf: Configuration, sinkLogs: Boolean): Found = {
    val fs = root.getFileSystem(conf)
    // A table's own log is met first where the listing can order it (a walk); an object store
    // lists `_txcommit/` before every lower-case name, and the listing stops there.
    val it = if (fs.getUri.getScheme == "file") walk(fs, root, root) else FileTree.files(fs, root)
    val files = Vector.newBuilder[FileStatus]
    val logs = mutable.LinkedHashMap.empty[String, mutable.Map[String, Vector[FileStatus]]]
    var stop: Option[Found] = None
    while (stop.isEmpty && it.hasNext) {
      val st = it.next()
      // A root that is a file lists as itself.
      if (st.getPath.toUri.getPath.stripSuffix("/") == root.toUri.getPath.stripSuffix("/"))
        stop = Some(if (DataFileName.txnOf(st.getPath.getName).isEmpty) PlainFile(st) else SparkLists)
      else Paths.relativize(root, st.getPath).foreach { rel =>
        val segments = rel.split("/")
        segments.indexOf(LogLayout.LogDirName) match {
          case 0 => stop = Some(IsTable)
          case at if at > 0 =>
            val kinds = logs.getOrElseUpdate(segments.take(at).mkString("/"), mutable.Map.empty)
            if (segments.length == at + 3) {
              val kind = segments(at + 1)
              kinds(kind) = kinds.getOrElse(kind, Vector.empty) :+ st
            }
          case _ if sinkLogs && rel.startsWith(SinkLogDir) => stop = Some(SparkLists)
          case _ => if (TableState.isData(rel)) files += st
        }
      }
    }
    stop.getOrElse(Listed(files.result(),
        logs.map { case (dir, kinds) =>
          new Path(root, dir) -> TableLog(kinds.getOrElse("commits", Vector.empty),
            kinds.getOrElse("checkpoints", Vector.empty), kinds.getOrElse("replace", Vector.empty))
        }.toMap))
  }

  private val SinkLogDir = "_spark_metadata/"

  /** The log directories a read's snapshot lists; a walk skips the rest of `_txcommit/`. */
  private val ReadLogDirs = Set("commits", "checkpoints", "replace")

  /**
   * A walk of a local directory that goes into no directory Spark's listing skips (a hidden
   * name), except a table's log and, in it, the directories a snapshot lists: no more listings
   * than Spark's own, plus the tables' logs. (A flat listing of an object store returns every
   * key below the prefix, Spark's as well.)
   */
  private def walk(fs: org.apache.hadoop.fs.FileSystem, root: Path, dir: Path): Iterator[FileStatus] = {
    val entries =
      try fs.listStatus(dir)
      catch { case _: java.io.FileNotFoundException if dir != root => Array.empty[FileStatus] }
    entries.sortBy(st => if (st.getPath.getName == LogLayout.LogDirName) 0 else 1).iterator.flatMap { st =>
      if (!st.isDirectory) Iterator.single(st)
      else {
        val name = st.getPath.getName
        val inLog = dir.getName == LogLayout.LogDirName
        // A log is returned as itself too: one whose listed directories hold nothing yet (a first
        // write's pending marker alone) still makes its directory a table.
        if (name == LogLayout.LogDirName) Iterator.single(st) ++ walk(fs, root, st.getPath)
        else if ((inLog && ReadLogDirs(name)) || (!inLog && !TableState.hiddenName(name)) ||
          (dir == root && name == SinkLogDir.stripSuffix("/")))
          walk(fs, root, st.getPath)
        else Iterator.empty
      }
    }
  }
}
