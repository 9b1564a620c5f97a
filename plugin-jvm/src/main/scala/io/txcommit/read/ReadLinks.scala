package io.txcommit.read

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

import io.txcommit.{Paths, UnsupportedReadException}
import io.txcommit.log.LogLayout
import io.txcommit.store.Links

/**
 * Reads through links (docs/protocol.md, I18). A reader judges a file by the nearest directory
 * holding `_txcommit/` on the file's path as listed, and listings follow links. A path whose
 * links lead to the same place in the same table (a link to a table's own directory, or above
 * it) is read as that table. One whose links lead to a directory inside a table, where the path
 * as written has no log at that place (a link to a partition directory), could only be judged
 * without the table's log, showing files the table never committed or has removed: such a read
 * is refused. The Python readers apply the same rule (`txcommit.table.view`).
 */
private[read] object ReadLinks {

  /** Refuses a read of `dir` (a read's root, or a directory of listed files in no table) that a link leads inside a table. */
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
          s"Nothing was read. Read ${Paths.display(real)} or the table ${Paths.display(root)} itself.")
      }
    }
  }

  /** The nearest directory at or above `dir` holding `_txcommit/`, with `dir` relative to it. */
  private def tableOf(fs: FileSystem, dir: Path): Option[(Path, String)] =
    Iterator.iterate(dir)(_.getParent).takeWhile(_ != null)
      .find(d => fs.exists(new Path(d, LogLayout.LogDirName)))
      .map(root => root -> Paths.relativize(root, dir).getOrElse(""))
}
