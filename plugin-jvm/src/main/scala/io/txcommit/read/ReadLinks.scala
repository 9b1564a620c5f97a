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
 * One instance per read filter: each directory is asked once, its parents' answers kept (locally
 * one `lstat` per directory, and where a link leads elsewhere one existence check per directory
 * above; nothing on a store without links).
 */
private[read] final class ReadLinks(conf: Configuration) {
  private val checked = new ConcurrentHashMap[Path, java.lang.Boolean]()
  private val reals = new ConcurrentHashMap[Path, Path]()
  private val tables = new ConcurrentHashMap[Path, Option[(Path, String)]]()

  /** Refuses the read if its links lead `dir` (a root, or a directory of listed files) inside a table at another place. */
  def check(dir: Path): Unit =
    if (dir != null) checked.computeIfAbsent(dir, d => { refuse(d); java.lang.Boolean.TRUE })

  private def refuse(dir: Path): Unit = {
    val fs = dir.getFileSystem(conf)
    if (Links.followed(fs)) {
      val asked = fs.makeQualified(dir)
      val real = realOf(fs, asked)
      if (real != asked) tableOf(fs, real).foreach { case (root, rel) =>
        val same = tableOf(fs, asked).exists { case (written, at) => at == rel && realOf(fs, written) == root }
        if (!same) throw new UnsupportedReadException(s"read of ${Paths.display(asked)}: " +
          s"${Links.describe(fs, asked, real)}, inside the txcommit table ${Paths.display(root)}, whose " +
          s"log (${Paths.display(new Path(root, LogLayout.LogDirName))}) is not at that place on the path " +
          "as written, so the read could not tell the table's committed files there from the rest. " +
          s"Nothing was read. Read ${Paths.display(real)} or the table ${Paths.display(root)} itself, " +
          "or replace the link with the directory it leads to.")
      }
    }
  }

  /** Where `dir` (qualified) leads, from where its parent leads (kept: a tree's directories share them). */
  private def realOf(fs: FileSystem, dir: Path): Path =
    Option(reals.get(dir)).getOrElse {
      val real = Option(dir.getParent).fold(dir)(parent => Links.child(fs, realOf(fs, parent), dir.getName))
      reals.put(dir, real)
      real
    }

  /** The nearest directory at or above `dir` holding `_txcommit/`, with `dir` relative to it. */
  private def tableOf(fs: FileSystem, dir: Path): Option[(Path, String)] =
    Option(tables.get(dir)).getOrElse {
      val found =
        if (fs.exists(new Path(dir, LogLayout.LogDirName))) Some(dir -> "")
        else Option(dir.getParent).flatMap(tableOf(fs, _)).map { case (root, rel) =>
          root -> (if (rel.isEmpty) dir.getName else s"$rel/${dir.getName}")
        }
      tables.put(dir, found)
      found
    }
}

private[read] object ReadLinks {

  /** Refuses a read of `root` that its links lead inside a table at another place. */
  def check(root: Path, conf: Configuration): Unit = new ReadLinks(conf).check(root)

  /** The error of a read of `root`, which leads through a link this client does not follow (`e`, Hadoop's). */
  def notFollowed(root: Path, conf: Configuration, e: Throwable): UnsupportedReadException = {
    val fs = root.getFileSystem(conf)
    val real = Links.resolve(fs, root)
    new UnsupportedReadException(s"read of ${Paths.display(root)}: ${Links.notFollowed(fs, root, real)} " +
      s"(${e.getMessage}). Nothing was read. Read ${Paths.display(real)} itself.")
  }
}
