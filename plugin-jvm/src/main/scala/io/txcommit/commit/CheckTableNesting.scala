package io.txcommit.commit

import java.nio.file.AccessDeniedException

import org.apache.hadoop.fs.{FileSystem, Path}

import io.txcommit.{Paths, UnsupportedWriteException}
import io.txcommit.log.{BoundedCache, LogLayout}
import io.txcommit.store.FileTree

/**
 * Job setup, first stage: at most one `_txcommit/` on any path (invariant I18). A reader's table
 * is the nearest directory holding `_txcommit/`, so a second log inside a table would hide the
 * table's own files in that directory from its readers, half-apply the table's overwrites,
 * and leave VACUUM of the outer table to delete the inner table's committed files. So a write
 * into a directory below a table, or above one, is refused before anything is written.
 *
 * Costs: one existence check per ancestor directory; and, for a write to an existing directory
 * that is not a table yet (its first txcommit write), one recursive listing of it. A table that
 * passed is not checked again in this JVM.
 */
object CheckTableNesting extends CommitStage[Unit, Unit] {
  private val passed = new BoundedCache[String, java.lang.Boolean](100000L, _ => 1L)

  override protected def execute(ctx: TxnContext, in: Unit): Unit =
    if (passed.get(ctx.table.toString).isEmpty) {
      val fs = ctx.table.getFileSystem(ctx.conf)
      enclosingTable(fs, ctx.table.getParent).foreach(root => throw insideTable(ctx.table, root))
      if (!isTable(fs, ctx.table)) tableBelow(fs, ctx.table).foreach(inner => throw aboveTable(ctx.table, inner))
      passed.put(ctx.table.toString, java.lang.Boolean.TRUE)
    }

  /** The nearest ancestor of `dir` (itself included) holding `_txcommit/`. */
  @scala.annotation.tailrec
  def enclosingTable(fs: FileSystem, dir: Path): Option[Path] =
    if (dir == null) None
    else if (isTable(fs, dir)) Some(dir)
    else enclosingTable(fs, dir.getParent)

  /** Whether `dir` holds `_txcommit/`. A directory the credentials may not look into is no table. */
  def isTable(fs: FileSystem, dir: Path): Boolean =
    try fs.exists(new Path(dir, LogLayout.LogDirName))
    catch {
      case e: AccessDeniedException =>
        log.info(s"txcommit: cannot check ${Paths.display(dir)} for a txcommit log (${e.getMessage}); " +
          "taking it for a directory that is not a table")
        false
    }

  /** A directory below `dir` that holds `_txcommit/`, if any. */
  def tableBelow(fs: FileSystem, dir: Path): Option[Path] =
    if (!fs.exists(dir)) None
    else {
      val files = FileTree.files(fs, dir)
      var found: Option[Path] = None
      while (found.isEmpty && files.hasNext) {
        val f = files.next().getPath
        found = Paths.relativize(dir, f).flatMap { rel =>
          val segments = rel.split("/")
          val at = segments.indexOf(LogLayout.LogDirName)
          if (at > 0) Some(new Path(dir, segments.take(at).mkString("/"))) else None
        }
      }
      found
    }

  private def insideTable(path: Path, root: Path): UnsupportedWriteException = {
    val rel = Paths.relativize(root, path).getOrElse(path.getName)
    val partitions = rel.split("/").toSeq.map(_.split("=", 2)).collect { case Array(c, v) if c.nonEmpty => c -> v }
    val how =
      if (partitions.size != rel.split("/").length) s"write to ${Paths.display(root)} itself, or to a path outside it"
      else {
        val cols = partitions.map { case (c, v) => s""".withColumn("$c", F.lit("$v"))""" }.mkString
        val by = partitions.map(p => s""""${p._1}"""").mkString(", ")
        s"write the partition through the table: df$cols.write.partitionBy($by)" +
          s""".mode("append").parquet("${Paths.display(root)}") (to replace the partition, """ +
          """mode("overwrite") with spark.sql.sources.partitionOverwriteMode=dynamic)"""
      }
    new UnsupportedWriteException(s"${Paths.display(path)} is inside the txcommit table " +
      s"${Paths.display(root)}, and a second transaction log inside a table would hide the table's " +
      s"own files there from its readers. Nothing was written. To add to '$rel', $how.")
  }

  private def aboveTable(path: Path, inner: Path): UnsupportedWriteException =
    new UnsupportedWriteException(s"${Paths.display(path)} holds the txcommit table " +
      s"${Paths.display(inner)} below it, and a second transaction log above a table would hide " +
      s"that table's files from the readers of ${Paths.display(path)} (and its VACUUM would see " +
      s"them as never committed). Nothing was written. Write to ${Paths.display(inner)} itself, " +
      "or to a path that holds no txcommit table.")
}
