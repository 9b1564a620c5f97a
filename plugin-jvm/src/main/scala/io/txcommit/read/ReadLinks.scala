package io.txcommit.read

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import io.txcommit.{Paths, UnsupportedReadException}
import io.txcommit.log.LogLayout
import io.txcommit.store.Links

/**
 * Reads through links (docs/protocol.md, I18). A reader judges a file by the nearest directory
 * holding `_txcommit/` on the file's path as listed, and listings follow links (Spark's, and so
 * the Python readers'). A directory whose links lead to the same place of the same table (a link
 * to a table's own directory, or above it) is read as that table; one whose links lead to a
 * directory of no table is listed and judged as the path as written says. One whose links lead
 * inside a table at another place than the path as written names (a link to a partition
 * directory, a link in a table into another table or elsewhere in itself) could only be judged
 * by the wrong log, or none, showing files its table never committed or has removed, twice, or
 * as another table's: such a read is refused, naming the link.
 *
 * One instance per read filter: each directory is asked once (locally one `lstat` per name on
 * its path; nothing on a store without links).
 */
private[read] final class ReadLinks(conf: Configuration) {
  private val checked = new ConcurrentHashMap[Path, java.lang.Boolean]()

  /** Refuses the read if its links lead `dir` (a directory of listed files) inside a table at another place. */
  def check(dir: Path): Unit =
    if (dir != null) checked.computeIfAbsent(dir, d => { ReadLinks.check(d, conf); java.lang.Boolean.TRUE })
}

private[read] object ReadLinks {

  /** Refuses a read of `dir` (a read's root, or a directory of listed files) that its links lead inside a table at another place. */
  def check(dir: Path, conf: Configuration): Unit = {
    val fs = dir.getFileSystem(conf)
    if (Links.followed(fs)) {
      val asked = fs.makeQualified(dir)
      val real = Links.resolve(fs, asked)
      if (real != asked) tableOf(fs, real).foreach { case (root, rel) =>
        val same = tableOf(fs, asked).exists { case (written, at) => at == rel && Links.resolve(fs, written) == root }
        if (!same) throw new UnsupportedReadException(s"read of ${Paths.display(asked)}: " +
          s"${Links.describe(fs, asked, real)}, inside the txcommit table ${Paths.display(root)}, whose " +
          s"log (${Paths.display(new Path(root, LogLayout.LogDirName))}) is not at that place on the path " +
          "as written, so the read could not tell the table's committed files there from the rest. " +
          s"Nothing was read. Read ${Paths.display(real)} or the table ${Paths.display(root)} itself, " +
          "or replace the link with the directory it leads to.")
      }
    }
  }

  /** The error of a read of `root`, which leads through a link this client does not follow (`e`, Hadoop's). */
  def notFollowed(root: Path, conf: Configuration, e: Throwable): UnsupportedReadException = {
    val fs = root.getFileSystem(conf)
    val real = Links.resolve(fs, root)
    new UnsupportedReadException(s"read of ${Paths.display(root)}: ${Links.notFollowed(fs, root, real)} " +
      s"(${e.getMessage}). Nothing was read. Read ${Paths.display(real)} itself.")
  }

  /** The nearest directory at or above `dir` holding `_txcommit/`, with `dir` relative to it. */
  private def tableOf(fs: FileSystem, dir: Path): Option[(Path, String)] =
    Iterator.iterate(dir)(_.getParent).takeWhile(_ != null)
      .find(d => fs.exists(new Path(d, LogLayout.LogDirName)))
      .map(root => root -> Paths.relativize(root, dir).getOrElse(""))
}
