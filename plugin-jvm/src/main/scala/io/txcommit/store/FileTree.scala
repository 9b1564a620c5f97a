package io.txcommit.store

import scala.collection.mutable

import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.slf4j.LoggerFactory

import io.txcommit.{ListingChangedException, Paths}

/**
 * Every file below a directory, recursively and lazily (path, length and modification time:
 * all txcommit asks of a listing). A missing `dir` throws `FileNotFoundException`.
 *
 * On object stores this is `FileSystem.listFiles(dir, true)`: one flat listing of the prefix.
 * On the local file system that call builds a `LocatedFileStatus` per file, whose constructor
 * reads the file's permissions, which Hadoop's local file system gets by running `ls -ld` in a
 * subprocess when its native library is not loaded (it is not in Spark's distribution): about
 * 10 ms per file (Spark's own listing avoids it the same way, SPARK-15307). There the tree is
 * walked with `listStatus`, which never reads permissions.
 *
 * A directory below `dir` that disappears while the tree is listed (another writer's
 * `_temporary/`, Hive's `.hive-staging*`, a clean-up tool) never ends the listing early: what
 * a replacing commit removes is such a listing, so a partial one would leave visible files
 * behind. A walk skips the directory (it is gone: it holds no file), or lists it again when
 * it is back by the time we look; a recursive listing,
 * which cannot tell which directory failed, is begun again (files already returned are not
 * returned twice), at most [[Restarts]] times, then fails with [[ListingChangedException]].
 *
 * Links ([[Links]]): [[files]] follows them, as Spark's own listing does, so a replacing commit
 * removes what a reader lists; a path listed below `dir` is always `dir` and a path below it
 * (HDFS answers a listing through a link with the paths where it leads: they are given back
 * below `dir`). [[ownFiles]], VACUUM's listing, follows none.
 */
object FileTree {
  private val log = LoggerFactory.getLogger(getClass)
  val Restarts = 5

  def files(fs: FileSystem, dir: Path): Iterator[FileStatus] =
    if (fs.getUri.getScheme == "file") fs.listStatus(dir).iterator.flatMap(st => below(fs, st, _ => false))
    else if (!Links.followed(fs)) new Restarting(fs, dir)
    else {
      val (asked, real) = (fs.makeQualified(dir), Links.resolve(fs, dir))
      if (real == asked) new Restarting(fs, dir)
      else new Restarting(fs, real).map { st =>
        Paths.relativize(real, st.getPath).foreach(rel => st.setPath(new Path(asked, rel)))
        st
      }
    }

  /**
   * Every file that lies in `dir`'s own tree: a link below it (to a file or a directory) is
   * neither followed nor returned, but given to `link`. What VACUUM deletes comes from this
   * listing, so it deletes nothing through a link (I14). On stores without links: [[files]].
   */
  def ownFiles(fs: FileSystem, dir: Path, link: Path => Unit): Iterator[FileStatus] =
    if (!Links.listed(fs)) new Restarting(fs, dir)
    else {
      val isLink = (st: FileStatus) => Links.isLink(fs, st) && { link(st.getPath); true }
      fs.listStatus(dir).iterator.flatMap(st => below(fs, st, isLink))
    }

  private def below(fs: FileSystem, st: FileStatus, skip: FileStatus => Boolean): Iterator[FileStatus] =
    if (skip(st)) Iterator.empty
    else if (!st.isDirectory) Iterator.single(st)
    else children(fs, st.getPath, 1).iterator.flatMap(c => below(fs, c, skip))

  /** A directory's entries; none when it is gone. Hadoop's local file system reports a
   *  directory removed between its existence check and its listing as a plain IOException
   *  ("Invalid directory or I/O error"), and another writer may have created it again before
   *  we look (a plain writer's `_temporary/` comes and goes in a loop): the directory is
   *  listed again, up to [[Restarts]] times. An error while the directory stays ends the
   *  listing. */
  private def children(fs: FileSystem, dir: Path, attempt: Int): Array[FileStatus] =
    try fs.listStatus(dir)
    catch {
      case e: java.io.IOException if e.isInstanceOf[java.io.FileNotFoundException] || !fs.exists(dir) =>
        log.info(s"txcommit: ${Paths.display(dir)} disappeared while it was listed; it holds no file now")
        Array.empty[FileStatus]
      case e: java.io.IOException if attempt < Restarts =>
        log.info(s"txcommit: listing ${Paths.display(dir)} failed (${e.getMessage}) while it exists; listing it again")
        children(fs, dir, attempt + 1)
    }

  /** `listFiles(dir, true)`, begun again when a directory below `dir` disappears under it. */
  private final class Restarting(fs: FileSystem, dir: Path) extends Iterator[FileStatus] {
    private var it = fs.listFiles(dir, true)
    private var restarts = 0
    private val returned = mutable.HashSet.empty[Path]
    private var nextOne: Option[FileStatus] = None

    override def hasNext: Boolean = {
      while (nextOne.isEmpty && advance()) ()
      nextOne.isDefined
    }

    override def next(): FileStatus =
      if (!hasNext) throw new NoSuchElementException(s"no more files below $dir")
      else { val st = nextOne.get; nextOne = None; st }

    /** Takes one more entry from the listing into `nextOne`; false when the listing is done. */
    private def advance(): Boolean =
      try {
        if (!it.hasNext) false
        else {
          val st = it.next()
          if (returned.add(st.getPath)) nextOne = Some(st)
          true
        }
      } catch {
        case e: java.io.FileNotFoundException =>
          if (!fs.exists(dir)) throw e
          restarts += 1
          if (restarts > Restarts) {
            throw new ListingChangedException(
              s"the listing of ${Paths.display(dir)} failed $restarts " +
                s"times because directories below it disappeared while it was listed (last: ${e.getMessage}). " +
                "Nothing was decided from the partial listing; run again, and stop whatever keeps creating " +
                "and deleting directories inside the table while it is written.", e)
          }
          it = fs.listFiles(dir, true)
          true
      }
  }
}
