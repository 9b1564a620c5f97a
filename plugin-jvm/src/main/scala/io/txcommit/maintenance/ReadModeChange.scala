package io.txcommit.maintenance

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.{CommitConflictException, MaintenanceException, Paths}
import io.txcommit.commit.CheckTableNesting
import io.txcommit.log.{
  AddedFile,
  CheckpointWriter,
  CommitRecord,
  LogLayout,
  ReadMode,
  RecordCodec,
  TableReads,
  TableState,
  TxnId
}
import io.txcommit.store.CommitStore

/** `TXCOMMIT ALTER '<path>' SET ('reads' = 'log' | 'listing')`: a change of how a table is read ([[TableReads]]). */
object ReadModeChange {

  /** Times a change is tried against checkpoints other writers publish meanwhile. */
  val MaxTries = 16

  /**
   * Sets the table's mode to `mode` (`TXCOMMIT ALTER '<path>' SET ('reads' = ...)`); returns
   * the mode in force after it and its checkpoint's number. Switching to `log` is refused when a
   * table lies below this one (files there follow that log; the two must be moved apart first)
   * or a visible file written without txcommit carries the name of a file a replacing commit
   * removed (a log names a file by its path: rename it first).
   */
  def set(table: Path, store: CommitStore, conf: Configuration, mode: String, appId: Option[String],
      statement: String): (String, Long) = {
    val layout = LogLayout(table)
    val (now, number) = TableReads.current(store, layout)
    if (now == mode) (now, number)
    else {
      if (mode == ReadMode.Log) adopt(table, store, conf, statement)
      @scala.annotation.tailrec
      def attempt(tries: Int): (String, Long) =
        CheckpointWriter.write(table, store, appId, reads = Some(mode)).written match {
          case Some(c) => (mode, c.number)
          case None =>
            val (after, n) = TableReads.current(store, layout)
            if (after == mode) (after, n)
            else if (tries >= MaxTries) throw new CommitConflictException(s"$statement: checkpoints of " +
              s"${Paths.display(table)} were published $tries times while the change was made; it was not " +
              "recorded. Run it again.")
            else attempt(tries + 1)
        }
      attempt(1)
    }
  }

  /** Commits every visible file of `table` written without txcommit (one append naming them). */
  private def adopt(table: Path, store: CommitStore, conf: Configuration, statement: String): Unit = {
    val fs = table.getFileSystem(conf)
    CheckTableNesting.tableBelow(fs, table).foreach { inner =>
      throw new MaintenanceException(s"$statement: ${Paths.display(inner)} holds a transaction log inside " +
        s"${Paths.display(table)}; a log-only table could not show the files that log commits. Move that " +
        "table out first. Nothing was changed.")
    }
    val state = new TableState(table, store, conf)
    val plain = state.dataFiles().filter(f => f.txn.isEmpty && state.isVisible(f))
    val reused = plain.filter(f => state.replaceLog.net.removals.names(f.path))
    if (reused.nonEmpty) throw new MaintenanceException(s"$statement: ${reused.size} file(s) written without " +
      s"txcommit carry the name of a file a replacing commit removed (${reused.take(3).map(_.path).mkString(", ")}); " +
      "a log-only table names files by path, so rename them and run it again. Nothing was changed.")
    if (plain.nonEmpty) {
      val txn = TxnId.generate()
      val record = CommitRecord.written(txn, java.util.UUID.randomUUID().toString, "txcommit-reads-log",
        System.currentTimeMillis(), plain.map(f => AddedFile(f.path, f.size)))
      store.createExclusive(LogLayout(table).commitRecord(txn), RecordCodec.encode(record))
    }
  }
}
