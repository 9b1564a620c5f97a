package io.txcommit.testing

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileStatus, LocalFileSystem, LocatedFileStatus, Path, RemoteIterator}

/**
 * The local file system, counting what is asked of it under each directory registered with
 * [[ListingCountingFileSystem.watch]]: the listings of directories outside any `_txcommit/`
 * (data listings), every listing by directory, and status requests (existence checks
 * included), so a test can tell that a read never listed a table's data, or listed a directory
 * once. Install with `fs.file.impl` and `fs.file.impl.disable.cache=true` (a session's
 * `spark.hadoop.` confs).
 */
final class ListingCountingFileSystem extends LocalFileSystem {
  import ListingCountingFileSystem.{listed, statused}
  override def listStatus(f: Path): Array[FileStatus] = { listed(makeQualified(f)); super.listStatus(f) }
  override def listFiles(f: Path, recursive: Boolean): RemoteIterator[LocatedFileStatus] = {
    listed(makeQualified(f))
    super.listFiles(f, recursive)
  }
  override def listStatusIterator(f: Path): RemoteIterator[FileStatus] = {
    listed(makeQualified(f))
    super.listStatusIterator(f)
  }
  override def getFileStatus(f: Path): FileStatus = { statused(makeQualified(f)); super.getFileStatus(f) }
}

object ListingCountingFileSystem {
  private final class Counts {
    val data = new AtomicInteger()
    val status = new AtomicInteger()
    val byDir = new ConcurrentHashMap[String, AtomicInteger]()
  }
  private val counts = new ConcurrentHashMap[String, Counts]()

  /** Counts what is asked at or below `dir` from now on (from 0). */
  def watch(dir: Path): Unit = counts.put(key(dir), new Counts)

  /** Data listings at or below `dir` since it was watched. */
  def dataListings(dir: Path): Int = Option(counts.get(key(dir))).fold(0)(_.data.get)

  /** Status requests (`getFileStatus`, `exists`) at or below `dir` since it was watched. */
  def statusRequests(dir: Path): Int = Option(counts.get(key(dir))).fold(0)(_.status.get)

  /** How many times each directory at or below `dir` was listed since it was watched. */
  def listingsByDir(dir: Path): Map[String, Int] =
    Option(counts.get(key(dir))).fold(Map.empty[String, Int])(_.byDir.asScala.map { case (k, v) => k -> v.get }.toMap)

  private def key(p: Path): String = p.toUri.getPath.stripSuffix("/")

  private def watching(p: Path)(f: (String, Counts) => Unit): Unit = {
    val path = key(p)
    counts.forEach { (dir, c) => if (path == dir || path.startsWith(dir + "/")) f(path, c) }
  }

  private def listed(p: Path): Unit = watching(p) { (path, c) =>
    if (!path.split("/").contains("_txcommit")) c.data.incrementAndGet()
    c.byDir.computeIfAbsent(path, _ => new AtomicInteger()).incrementAndGet()
  }

  private def statused(p: Path): Unit = watching(p)((_, c) => c.status.incrementAndGet())
}
