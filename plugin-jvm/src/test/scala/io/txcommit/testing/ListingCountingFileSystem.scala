package io.txcommit.testing

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.fs.{FileStatus, LocalFileSystem, LocatedFileStatus, Path, RemoteIterator}

/**
 * The local file system, counting the listings of directories outside any `_txcommit/` (data
 * listings) under each directory registered with [[ListingCountingFileSystem.watch]], so a test
 * can tell that a read never listed a table's data. Install with `fs.file.impl` and
 * `fs.file.impl.disable.cache=true` (a session's `spark.hadoop.` confs).
 */
final class ListingCountingFileSystem extends LocalFileSystem {
  override def listStatus(f: Path): Array[FileStatus] = {
    ListingCountingFileSystem.listed(makeQualified(f)); super.listStatus(f)
  }
  override def listFiles(f: Path, recursive: Boolean): RemoteIterator[LocatedFileStatus] = {
    ListingCountingFileSystem.listed(makeQualified(f))
    super.listFiles(f, recursive)
  }
  override def listStatusIterator(f: Path): RemoteIterator[FileStatus] = {
    ListingCountingFileSystem.listed(makeQualified(f))
    super.listStatusIterator(f)
  }
}

object ListingCountingFileSystem {
  private val counts = new ConcurrentHashMap[String, AtomicInteger]()

  /** Counts data listings at or below `dir` from now on (from 0). */
  def watch(dir: Path): Unit = counts.put(dir.toUri.getPath.stripSuffix("/"), new AtomicInteger())

  /** Data listings at or below `dir` since it was watched. */
  def dataListings(dir: Path): Int = Option(counts.get(dir.toUri.getPath.stripSuffix("/"))).fold(0)(_.get)

  private def listed(p: Path): Unit = {
    val path = p.toUri.getPath
    if (!path.split("/").contains("_txcommit")) counts.forEach { (dir, n) =>
      if (path == dir || path.startsWith(dir + "/")) n.incrementAndGet()
    }
  }
}
