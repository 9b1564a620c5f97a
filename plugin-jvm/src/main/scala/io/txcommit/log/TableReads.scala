package io.txcommit.log

import org.apache.hadoop.fs.{FileSystem, Path}

import io.txcommit.{CommitConflictException, Paths, Version}
import io.txcommit.store.{CommitStore, FileTree}

/**
 * How a table is read (docs/protocol.md, I32), and the two ways it changes.
 *
 * The mode lives in the table's checkpoints (`reads`), because every read takes the newest
 * checkpoint anyway: knowing it costs a read no request. Each checkpoint carries its
 * predecessor's mode unless it is the one that changes it, and is created exclusively under the
 * next number, so changes are ordered by checkpoint numbers and a checkpoint writer racing a
 * change cannot undo it (of two writers of number n+1 one wins; the other writes nothing, or
 * tries again from the winner). A table without a checkpoint that says (older tables, tables
 * txcommit adopted) is read by listing.
 *
 * Switching to `log` first commits every visible file written without txcommit (one append
 * naming them, as Delta's CONVERT does), then writes the checkpoint that says `log` and covers
 * that append: a read before it lists and shows those files, a read after takes them from the
 * log, so no row vanishes or shows twice. Switching to `listing` writes the checkpoint alone:
 * files written without txcommit that the log does not name appear.
 */
object TableReads {

  /** The mode in force, and the number of the checkpoint that says it (0: none). */
  def current(store: CommitStore, layout: LogLayout): (String, Long) =
    CheckpointLog.newest(CheckpointLog.list(layout, store.list), store.read, Paths.display, _ => true) match {
      case Some(c) => (c.reads.getOrElse(ReadMode.Listing), c.number)
      case None => (ReadMode.Listing, 0L)
    }

  /**
   * A new table's first write (to a directory holding no data file): checkpoint 1, covering
   * nothing and saying `log`, created before anything commits, so every read of the table's
   * commits reads it from the log. False when the directory holds data (the table is adopted:
   * its files stay visible) or another writer created checkpoint 1 first.
   */
  def createLogOnly(table: Path, store: CommitStore, fs: FileSystem, appId: Option[String]): Boolean =
    !holdsData(fs, table) && {
      val first = Checkpoint(1L, System.currentTimeMillis(), appId, Version.writer, 0L, Map.empty, Vector.empty,
        schema = Some(None), reads = Some(ReadMode.Log))
      try { store.createExclusive(LogLayout(table).checkpoint(1L), CheckpointCodec.encode(first)); true }
      catch { case _: CommitConflictException => false }
    }

  /** Whether `checkpoint` is the one [[createLogOnly]] writes: a refused first write removes it with its log. */
  def isCreatedLogOnly(checkpoint: Checkpoint): Boolean =
    checkpoint.number == 1L && checkpoint.committed.isEmpty && checkpoint.removed.isEmpty && checkpoint.logOnly

  private def holdsData(fs: FileSystem, dir: Path): Boolean =
    fs.exists(dir) && FileTree.files(fs, dir).exists(st => Paths.relativize(dir, st.getPath).exists(TableState.isData))
}
