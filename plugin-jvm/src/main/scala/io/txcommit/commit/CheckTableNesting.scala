package io.txcommit.commit

import java.nio.file.AccessDeniedException

import scala.util.Try

import org.apache.hadoop.fs.{FileSystem, Path}

import io.txcommit.{Paths, StorePermissionException, UnsupportedWriteException}
import io.txcommit.log.{CheckpointCodec, LogLayout, TableReads}
import io.txcommit.store.{FileTree, Links}

/** What job setup found about the write's own path, for the check before the commit point. */
final case class NestingSeen(createsTable: Boolean)

/**
 * Job setup, first stage: at most one `_txcommit/` on any path (invariant I18). A reader's table
 * is the nearest directory holding `_txcommit/`, so a second log inside a table would hide the
 * table's own files in that directory from its readers, half-apply the table's overwrites,
 * and leave VACUUM of the outer table to delete the inner table's committed files. So a write
 * into a directory below a table, or above one, is refused before anything is written.
 *
 * A path is judged where it leads ([[Links]]): a link to a directory inside a table is that
 * directory, so the write is refused as a write there is; a link to a table's own directory is
 * that table. A path with a `_txcommit` directory on it, as written or where it leads, is
 * refused before anything is created: that name is a table's log.
 *
 * A path that is a plain file (no table) is refused too, naming it, before the pending marker
 * would fail to make a directory below it.
 *
 * Costs, on every job (nothing is remembered between jobs: a table can be deleted, or another
 * application can create one, between any two of them): one existence check per ancestor
 * directory; and, for a write to an existing directory that is not a table yet (its first
 * txcommit write), one recursive listing of it.
 *
 * The check and the job's pending marker (which creates its `_txcommit/`) are two steps, so
 * two first writes to `T` and `T/k=1` can both pass it. A first write therefore looks again
 * once its log exists, still in job setup, before it writes data ([[RecheckTableNesting]]):
 * each writer creates its log and then looks, so the later of the two to look sees the other's
 * log, and at least one is refused. Looking before any data is written keeps the second look
 * as cheap as the first, whatever the job writes.
 */
object CheckTableNesting extends CommitStage[Unit, NestingSeen]("check-table-nesting") {
  override protected def execute(ctx: TxnContext, in: Unit): NestingSeen = {
    val fs = ctx.table.getFileSystem(ctx.conf)
    val real = writeLocation(fs, ctx.table)
    refuseEnclosing(fs, ctx.table, real, e => e)
    val createsTable = !isTable(fs, ctx.table)
    if (createsTable && Try(fs.getFileStatus(ctx.table)).toOption.exists(_.isFile))
      throw new UnsupportedWriteException(
        s"${Paths.display(ctx.table)} is a file, not a directory: a txcommit table is a directory of data " +
          "files and its log. Nothing was written and the file is untouched. Write to another path, or " +
          "overwrite it (mode(\"overwrite\")) to replace the file with a table.")
    if (createsTable) tableBelow(fs, real).foreach(inner => throw aboveTable(ctx.table, inner))
    NestingSeen(createsTable)
  }

  /**
   * Where a write to `table` lands: its resolved location. Refused, before anything is created,
   * when a `_txcommit` directory is on it (as written or where it leads), when it leads through
   * a link this client does not follow, and when its `_txcommit` is a link (a table's log lies
   * in its own directory, or another table's log would judge its files).
   */
  def writeLocation(fs: FileSystem, table: Path): Path = {
    if (inLog(table)) throw logOnPath(table, None)
    val real = Links.resolve(fs, table)
    if (real != fs.makeQualified(table)) {
      val via = Links.describe(fs, table, real)
      if (!Links.followed(fs)) throw new UnsupportedWriteException(s"${Links.notFollowed(fs, table, real)}, " +
        s"so no write can reach it. Nothing was written. Write to ${Paths.display(real)} itself.")
      if (inLog(real)) throw logOnPath(real, Some(via))
    }
    val log = new Path(real, LogLayout.LogDirName)
    val realLog = Links.resolve(fs, log)
    if (realLog != log) throw new UnsupportedWriteException(
      s"${Links.describe(fs, new Path(table, LogLayout.LogDirName), realLog)}: a table's transaction " +
        "log lies in its own directory, so that no other log judges its files and no other table's " +
        s"VACUUM deletes them. Nothing was written. Replace the link with the directory of the log " +
        s"of ${Paths.display(table)}, or remove it and write to ${Paths.display(table)} as a new table.")
    real
  }

  /** Refuses (`raced` words the error) a write to `table` (leading to `real`) below a table. */
  private[commit] def refuseEnclosing(fs: FileSystem, table: Path, real: Path,
      raced: UnsupportedWriteException => UnsupportedWriteException): Unit = {
    enclosingTable(fs, table.getParent).foreach(root => throw raced(insideTable(table, root, fs)))
    if (real != fs.makeQualified(table)) enclosingTable(fs, real.getParent).foreach { root =>
      throw raced(new UnsupportedWriteException(
          s"${Links.describe(fs, table, real)}; ${insideTable(real, root, fs).getMessage.stripPrefix("txcommit: ")}"))
    }
  }

  /** Whether `path` has a `_txcommit` directory on it. */
  def inLog(path: Path): Boolean = path.toUri.getPath.split("/").contains(LogLayout.LogDirName)

  private def logOnPath(path: Path, via: Option[String]): UnsupportedWriteException =
    new UnsupportedWriteException(s"${via.fold("")(v => s"$v; ")}${Paths.display(path)} has a " +
      s"'${LogLayout.LogDirName}' directory on its path: that name is the transaction log of the " +
      "table in the directory holding it, which holds only the log's own files, never a table. " +
      s"Nothing was written. Write to a path without a '${LogLayout.LogDirName}' directory on it.")

  /** The nearest ancestor of `dir` (itself included) holding `_txcommit/`. */
  @scala.annotation.tailrec
  def enclosingTable(fs: FileSystem, dir: Path): Option[Path] =
    if (dir == null) None
    else if (isTable(fs, dir)) Some(dir)
    else enclosingTable(fs, dir.getParent)

  /**
   * Whether `dir` holds `_txcommit/`. Credentials that may not look cannot tell, and taking
   * "cannot tell" for "no table" is how a second log gets created inside a table: an error.
   */
  def isTable(fs: FileSystem, dir: Path): Boolean = {
    val log = new Path(dir, LogLayout.LogDirName)
    try fs.exists(log)
    catch { case e: AccessDeniedException => throw cannotLook(log, e) }
  }

  /** A directory below `dir` (not `dir` itself) that holds `_txcommit/`, if any. */
  def tableBelow(fs: FileSystem, dir: Path): Option[Path] =
    try {
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
    } catch { case e: AccessDeniedException => throw cannotLook(dir, e) }

  private[commit] def cannotLook(path: Path, e: AccessDeniedException): StorePermissionException =
    new StorePermissionException(
      s"access to ${Paths.display(path)} was denied (${e.getMessage}), " +
        "so txcommit cannot tell whether a transaction log lies there, and a second log on one path " +
        "could cost committed data. Nothing was written or deleted. Grant these credentials list and " +
        "read permission on that path (on S3: s3:ListBucket on its prefix and s3:GetObject; on GCS: " +
        "storage.objects.list and storage.objects.get; on Azure: the Storage Blob Data Reader role), " +
        "or write to a path whose every ancestor they may read.", e)

  private[commit] def insideTable(path: Path, root: Path, fs: FileSystem): UnsupportedWriteException = {
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
    // A tree nested already (by an older version, a deleted table, a race): name both logs.
    val nested =
      if (Try(isTable(fs, path)).getOrElse(false))
        s" ${Paths.display(path)} holds a transaction log of its own (${Paths.display(
            new Path(path, LogLayout.LogDirName))}) " +
          s"inside the log of ${Paths.display(root)} (${Paths.display(new Path(root, LogLayout.LogDirName))}): " +
          "move one of the two tables out of the other before writing to either."
      else ""
    new UnsupportedWriteException(s"${Paths.display(path)} is inside the txcommit table " +
      s"${Paths.display(root)}, and a second transaction log inside a table would hide the table's " +
      s"own files there from its readers. Nothing was written.$nested To add to '$rel', $how.")
  }

  private[commit] def aboveTable(path: Path, inner: Path): UnsupportedWriteException =
    new UnsupportedWriteException(s"${Paths.display(path)} holds the txcommit table " +
      s"${Paths.display(inner)} below it, and a second transaction log above a table would hide " +
      s"that table's files from the readers of ${Paths.display(path)} (and its VACUUM would see " +
      s"them as never committed). Nothing was written. Write to ${Paths.display(inner)} itself, " +
      "or to a path that holds no txcommit table.")
}

/**
 * Job setup, once the job's log exists and before any data is written: a first write (one
 * whose path was no table at setup's check) looks again for a log above and below its path
 * ([[CheckTableNesting]] says why this settles a race). A write to an existing table needs no
 * second look: a first write next to it (above or below) sees that table's log at its own
 * check or here. A refused first write aborts and removes the log it created
 * ([[RemoveCreatedLog]]).
 */
object RecheckTableNesting extends CommitStage[NestingSeen, Unit]("recheck-table-nesting") {
  override protected def execute(ctx: TxnContext, seen: NestingSeen): Unit =
    if (seen.createsTable) {
      val fs = ctx.table.getFileSystem(ctx.conf)
      val real = Links.resolve(fs, ctx.table)
      CheckTableNesting.refuseEnclosing(fs, ctx.table, real, raced)
      CheckTableNesting.tableBelow(fs, real).foreach { inner =>
        throw raced(CheckTableNesting.aboveTable(ctx.table, inner))
      }
    }

  private def raced(e: UnsupportedWriteException): UnsupportedWriteException =
    new UnsupportedWriteException(e.getMessage.stripPrefix("txcommit: ").replace("Nothing was written.",
        "The other log appeared while this job ran (a concurrent first write); this job wrote " +
          "nothing and removed the log it had created."))
}

/**
 * Job setup, after [[RecheckTableNesting]] refused a first write: removes the `_txcommit/` the
 * job created, so that the other table is not left with a log above or below it. Only this
 * transaction's own markers are deleted, and directories only when empty; if anything else
 * is in the log (another writer's marker), the log stays.
 */
object RemoveCreatedLog extends CommitStage[Unit, Boolean]("remove-created-log") {
  override protected def execute(ctx: TxnContext, in: Unit): Boolean = {
    val fs = ctx.table.getFileSystem(ctx.conf)
    val logDir = ctx.layout.logDir
    val own =
      Set(ctx.layout.pendingRecord(ctx.txn), ctx.layout.abortedRecord(ctx.txn)).map(p => Paths.relativize(ctx.table, p))
    val files = if (fs.exists(logDir)) FileTree.files(fs, logDir).map(_.getPath).toList else Nil
    // The log-only checkpoint a first write creates (covering nothing, I32) goes with the log
    // when nothing else is in it (another first write of this directory may have created it).
    val first = ctx.layout.checkpoint(1L)
    val created = Paths.relativize(ctx.table, first).filter(_ =>
      ctx.store.read(first).flatMap(b => Try(CheckpointCodec.decode(b, Paths.display(first), 1L)).toOption)
        .exists(TableReads.isCreatedLogOnly))
    val (mine, rest) = files.partition(p => own.contains(Paths.relativize(ctx.table, p)))
    val others = rest.filterNot(p => created.isDefined && Paths.relativize(ctx.table, p) == created)
    // Through the store, as every other delete of the protocol: Google's connector answers
    // `false` to `FileSystem.delete` of an object the adapter created (seen on fake-gcs-server).
    mine.foreach(p => ctx.store.delete(p))
    if (others.isEmpty) {
      if (created.isDefined) ctx.store.delete(first)
      // Empty directories (local file system, HDFS), deepest first; a marker written meanwhile keeps its directory.
      Seq(ctx.layout.pendingDir, ctx.layout.abortedDir, ctx.layout.probeDir, ctx.layout.checkpointsDir, logDir)
        .foreach(d => Try(if (fs.exists(d) && fs.listStatus(d).isEmpty) fs.delete(d, false)))
    } else log.warn(s"txcommit: ${ctx.describe}: ${Paths.display(logDir)} holds files of other " +
      s"transactions (${others.take(3).map(Paths.display).mkString(", ")}); it stays")
    others.isEmpty
  }
}

/**
 * Job setup of a replacing write to an existing table (overwrite, dynamic partition overwrite,
 * write id): refused when a second log lies inside what it replaces. Files there are judged by
 * that nearer log, so the replacing record could not hide them: an overwrite would leave the
 * inner table's rows visible. Trees nested like this come from an older version, a deleted
 * and re-created table, or a write before these checks. The input is the replaced scopes,
 * relative to the table ("" for all of it). Cost: one recursive listing of each scope.
 */
object CheckReplaceScope extends CommitStage[Seq[String], Unit]("check-replace-scope") {
  override protected def execute(ctx: TxnContext, scopes: Seq[String]): Unit = {
    val fs = ctx.table.getFileSystem(ctx.conf)
    val dirs = if (scopes.contains("")) Seq(ctx.table) else scopes.distinct.map(s => new Path(ctx.table, s))
    dirs.foreach { dir =>
      val inner =
        if (dir != ctx.table && CheckTableNesting.isTable(fs, dir)) Some(dir) else CheckTableNesting.tableBelow(fs, dir)
      inner.foreach { t =>
        throw new UnsupportedWriteException(s"the replacing write to ${Paths.display(ctx.table)} " +
          s"(${if (dir == ctx.table) "the whole table" else Paths.relativize(ctx.table, dir).getOrElse(dir.toString)}) " +
          s"covers ${Paths.display(t)}, which holds a transaction log of its own " +
          s"(${Paths.display(new Path(t, LogLayout.LogDirName))}) inside the table's " +
          s"(${Paths.display(ctx.layout.logDir)}). Files there follow the nearer log, so this " +
          "replacement could not hide them. Nothing was written. Move the table at " +
          s"${Paths.display(t)} out of ${Paths.display(ctx.table)} (or copy its rows into " +
          s"${Paths.display(ctx.table)} with a txcommit write and remove ${Paths.display(t)}), then replace.")
      }
    }
  }
}
