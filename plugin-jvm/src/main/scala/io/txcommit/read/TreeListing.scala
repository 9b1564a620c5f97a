package io.txcommit.read

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.log.LogLayout
import io.txcommit.store.FileTree

/**
 * Which directories of a tree hold `_txcommit/`, from ONE recursive listing of the tree's top
 * directory, so that a read of a partitioned table need not ask every partition directory.
 *
 * Why: a Hadoop PathFilter sees file paths only, never the read's root paths nor Spark's own
 * listing (Spark drops `_txcommit/` before the filter runs), so without this the filter asks
 * each directory it meets whether it holds a log. On S3 that is a HEAD and a LIST per partition
 * directory, where S3A lists the whole tree in a few requests: a 1,000-partition table not
 * written by txcommit paid 2,000 requests. The tree listing is [[io.txcommit.store.FileTree]]: on S3A `listFiles(top,
 * recursive = true)`: on S3A a flat listing, one request per 1,000 keys.
 *
 * The top of a partition directory is the nearest ancestor whose name is not `name=value` (the
 * table directory of a Hive-style layout). A listing stops after `maxFiles` files and then
 * answers nothing: the reader asks directory by directory as before, so a huge tree (a bucket
 * root above `k=v` directories) costs at most `maxFiles / 1000` extra requests.
 *
 * What a listing may say: a directory it saw holding `_txcommit/` holds one (a log is never
 * deleted). That it saw none is only true as of the listing: a log created after the listing
 * began may be missed. Its transactions all committed after the read began, so no snapshot of
 * the read includes them, and a file without a txn id is visible whether its directory is judged
 * by that log (no commit of which is in the read) or by none. A file named with a txn id may be
 * that new log's uncommitted data: [[TableLogReader]] asks the store itself before showing it,
 * unless the listing saw the table it is in (writers create no log inside a table, I18; a
 * transaction a log inside it made later is in no snapshot of the read either).
 */
private[read] final class TreeListing private (val top: Path, logDirs: Set[String]) {

  /** Whether `dir` holds `_txcommit/`, if `dir` is in this tree (at or below the top). */
  def holdsLog(dir: Path): Option[Boolean] =
    if (contains(dir)) Some(logDirs.contains(TreeListing.key(dir))) else None

  /** Whether the listing saw a log in `dir` or in a directory of this tree above it. */
  def inTable(dir: Path): Boolean =
    Iterator.iterate(dir)(_.getParent).takeWhile(d => d != null && contains(d))
      .exists(d => logDirs.contains(TreeListing.key(d)))

  private def contains(dir: Path): Boolean = {
    val (d, t) = (TreeListing.key(dir), TreeListing.key(top))
    d == t || d.startsWith(t.stripSuffix("/") + "/")
  }
}

private[read] object TreeListing {
  private val log = LoggerFactory.getLogger(classOf[TreeListing])

  /** Spark's Hive-style partition directory name: `column=value`. */
  def isPartitionDir(dir: Path): Boolean = {
    val name = dir.getName
    name.indexOf('=') > 0 && name != LogLayout.LogDirName
  }

  /** The directory a tree listing for `dir` starts at: its nearest non-partition ancestor. */
  def topOf(dir: Path): Path =
    if (isPartitionDir(dir) && dir.getParent != null) topOf(dir.getParent) else dir

  /**
   * Lists the tree under `top`: Some(listing), or None when it holds more than `maxFiles` files
   * or cannot be listed (the caller then asks directory by directory, which handles every case).
   */
  def list(top: Path, conf: Configuration, maxFiles: Int): Option[TreeListing] =
    try {
      val fs: FileSystem = top.getFileSystem(conf)
      val files = FileTree.files(fs, top)
      val logDirs = Set.newBuilder[String]
      var seen = 0
      while (seen <= maxFiles && files.hasNext) {
        seen += 1
        logHolder(top, files.next().getPath).foreach(d => logDirs += key(d))
      }
      if (seen > maxFiles) {
        log.debug(s"txcommit: ${Paths.display(top)} holds more than $maxFiles files; its " +
          "directories are asked one by one whether they hold a transaction log")
        None
      } else Some(new TreeListing(top, logDirs.result()))
    } catch {
      case e: java.io.IOException =>
        log.debug(s"txcommit: could not list ${Paths.display(top)} (${e.getClass.getSimpleName}); " +
          "its directories are asked one by one whether they hold a transaction log")
        None
    }

  /** The directory holding the log `file` is in (its first `_txcommit` segment below `top`). */
  private def logHolder(top: Path, file: Path): Option[Path] = {
    val chain = Iterator.iterate(file)(_.getParent).takeWhile(p => p != null && key(p) != key(top)).toList
    chain.reverse.find(_.getName == LogLayout.LogDirName).map(_.getParent)
  }

  /** Paths compared by their path alone: one tree is on one file system. */
  private def key(p: Path): String = Path.getPathWithoutSchemeAndAuthority(p).toString
}
