package io.txcommit.read

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.Paths
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{TableState, TxnId}
import io.txcommit.store.FileTree

/**
 * The data files a read of `roots` shows, decided on the driver before Spark lists anything, from
 * the read's log-first snapshots ([[SnapshotHandle]]): what a file index built from them hands
 * to the executors (docs/readers.md, "Which Spark reads list the log first").
 *
 *  - A root inside a log-only table (I32) is never listed: its files are the ones the
 *    snapshot's records and checkpoint name, with the sizes they record.
 *  - Every other root is listed once (one flat listing on object stores) and each data file
 *    judged against the snapshot, as the read filter judges it ([[LogFirstReader]]): files
 *    written without txcommit stay visible (I11).
 *
 * A file's modification time, where nothing lists it, is the start time its transaction's id
 * carries (the transaction whose record names it): known from the log alone, the same for
 * every read of a snapshot and in every JVM.
 */
object ReadFiles {

  /** What planning found: the files, or why Spark's own listing must read the roots instead. */
  sealed trait Outcome
  final case class Files(files: Vector[FileStatus], listed: Boolean) extends Outcome

  /**
   * Spark's own listing reads the roots: one holds a streaming file sink's `_spark_metadata/`
   * (Spark reads the sink's log there), or one is gone (Spark names it in its error).
   */
  case object SparkLists extends Outcome

  /** The files of `roots` (qualified directories) under the snapshots of `handle`. */
  def of(handle: SnapshotHandle, roots: Seq[Path], conf: Configuration): Outcome = {
    val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
    lazy val byCut = new TableLogReader(conf, ignoreCorrupt, ReadCut.begin(TxCommitConf.maxClockSkewMs(conf)),
      CutArbiter.current)
    val reader = new LogFirstReader(conf, ignoreCorrupt, handle, () => byCut)
    val logOnly = (t: TableSnapshot) => reader.logOnly(t)
    val out = mutable.LinkedHashMap.empty[Path, FileStatus]
    // Spark reads a sink's log only for a read of one root, unless told to ignore it.
    val sinkLogs = roots.distinct.size == 1 && !conf.getBoolean(IgnoreSinkLog, false)
    val results = roots.distinct.map { root =>
      tableOf(handle, root).filter(logOnly) match {
        case Some(t) =>
          val table = new Path(t.root)
          val prefix = Paths.relativize(table, root).fold("")(_ + "/")
          reader.committedFiles(t).foreach { e =>
            if (e.path.startsWith(prefix) && TableState.isData(e.path.substring(prefix.length))) {
              val p = new Path(table, e.path)
              out.getOrElseUpdate(p, new FileStatus(e.size, false, 0, 0L, TxnId.startedAt(e.txn).getOrElse(0L), p))
            }
          }
          true
        case None =>
          val fs = root.getFileSystem(conf)
          try {
            val it = FileTree.files(fs, root)
            var sink = false
            while (!sink && it.hasNext) {
              val st = it.next()
              Paths.relativize(root, st.getPath).foreach { rel =>
                if (sinkLogs && rel.startsWith(SinkLogDir)) sink = true
                else if (TableState.isData(rel) && reader.isVisible(st.getPath, Some(st)))
                  out.getOrElseUpdate(st.getPath, st)
              }
            }
            !sink
          } catch { case _: java.io.FileNotFoundException if !fs.exists(root) => false }
      }
    }
    if (!results.forall(identity)) SparkLists
    else Files(out.valuesIterator.toVector, listed = roots.exists(r => !tableOf(handle, r).exists(logOnly)))
  }

  private val SinkLogDir = "_spark_metadata/"
  private val IgnoreSinkLog = "spark.sql.streaming.fileStreamSink.ignoreMetadata"

  /** The table of `handle` that `root` is, or is a directory of (the nearest). */
  private def tableOf(handle: SnapshotHandle, root: Path): Option[TableSnapshot] =
    handle.tables.filter(t => root.toString == t.root || Paths.relativize(new Path(t.root), root).isDefined)
      .sortBy(-_.root.length).headOption
}
