package io.txcommit.read

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.Paths
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{DataFileName, TableState}
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.store.{FileTree, Links}

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

  /**
   * A read of now of `roots` (qualified directories), planned: its snapshots (None when it
   * reads no table) and its files. A root known to this JVM as a table, and a partition
   * directory (`k=v`), has the logs it is in listed first (the table's, and those of the tables
   * it is a partition directory of); any other root is listed once ([[RootListing]]): a root
   * holding no log is plain data and costs Spark's own listing alone (no table above it is
   * looked for: txcommit writes no data into a directory of a table that is not a partition
   * directory), a directory holding tables gets their snapshots from the same listing, and a root
   * that shows a log of its own is a table whose log is then listed first.
   */
  def planNow(roots: Seq[Path], conf: Configuration): (Option[SnapshotHandle], Outcome) = {
    val readId = java.util.UUID.randomUUID().toString
    val sinkLogs = roots.distinct.size == 1 && !conf.getBoolean(IgnoreSinkLog, false)
    // A root that links lead inside a table at another place is refused (I18): judged as the
    // path as written says, it would show what its table never committed. Nothing is asked on a
    // store without links.
    roots.distinct.foreach(new ReadLinks(conf).check)
    val found = roots.distinct.map { r =>
      if (TableLogReader.Roots.get(r.toString).isDefined || TreeListing.isPartitionDir(r)) r -> None
      else r -> Some(unlessUnfollowed(r, conf)(RootListing.list(r, conf, sinkLogs)))
    }
    if (found.exists(_._2.contains(RootListing.SparkLists))) (None, SparkLists)
    else {
      val apart = found.collect { case (r, None | Some(RootListing.IsTable)) => r }
      val listedTables = found.flatMap {
        case (_, Some(l: RootListing.Listed)) => l.tables.toSeq.flatMap { case (dir, log) =>
            LogFirstSnapshot.fromListing(dir, conf, log.commits, log.checkpoints, log.replace)
          }
        case _ => Nil
      }
      // The tables of the read, taken together: each multi-table transaction in all or none (I35).
      val requests = new java.util.concurrent.atomic.LongAdder
      val tables =
        LogFirstSnapshot.joint(apart.flatMap(LogFirstSnapshot.found(_, conf)) ++ listedTables, conf, readId, requests)
      if (tables.nonEmpty) TxCommitMetrics.readLogRequests.update(requests.sum())
      val handle = SnapshotHandle(readId, tables)
      val prelisted = found.collect {
        case (r, Some(l: RootListing.Listed)) => r -> l.files
        case (r, Some(RootListing.PlainFile(st))) => r -> Vector(st)
      }.toMap
      // Where a listing found a log that holds no commit yet (a first write running), no file
      // named with a txn id below it is committed.
      val uncommitted = found.flatMap {
        case (_, Some(l: RootListing.Listed)) => l.tables.keys.filterNot(d => tables.exists(_.root == d.toString))
        case _ => Nil
      }
      val plain = prelisted.keySet
      (Some(handle).filter(_.tables.nonEmpty), of(handle, roots, conf, prelisted, plain, uncommitted.toSet))
    }
  }

  /**
   * The files of `roots` (qualified directories) under the snapshots of `handle`. A root in
   * `prelisted` was listed already (its data files, in listing order, after the logs of the
   * tables below it); a file of a root in `plain` that no table of the handle holds is data
   * written without txcommit, shown as Spark shows it.
   */
  def of(handle: SnapshotHandle, roots: Seq[Path], conf: Configuration,
      prelisted: Map[Path, Vector[FileStatus]] = Map.empty, plain: Set[Path] = Set.empty,
      uncommitted: Set[Path] = Set.empty): Outcome = {
    val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
    lazy val byCut = new TableLogReader(conf, ignoreCorrupt, ReadCut.begin(TxCommitConf.maxClockSkewMs(conf)),
      CutArbiter.current)
    val reader = new LogFirstReader(conf, ignoreCorrupt, handle, () => byCut)
    val logOnly = (t: TableSnapshot) => reader.logOnly(t)
    val out = mutable.LinkedHashMap.empty[Path, FileStatus]
    // Spark reads a sink's log only for a read of one root, unless told to ignore it.
    val sinkLogs = roots.distinct.size == 1 && !conf.getBoolean(IgnoreSinkLog, false)
    // The files the snapshot of log-only table `t` shows below `root` (a directory of it).
    def prefixOf(t: TableSnapshot, root: Path) = Paths.relativize(new Path(t.root), root).fold("")(_ + "/")
    def committed(t: TableSnapshot, prefix: String): Unit =
      reader.committedStatuses(t, prefix).foreach(st => out.getOrElseUpdate(st.getPath, st))
    // A listed file's directory is checked likewise (a link below the root: [[ReadLinks]]).
    val links = new ReadLinks(conf)
    def visible(root: Path, st: FileStatus): Boolean = {
      links.check(st.getPath.getParent)
      if (plain(root) && handle.tablesOf(st.getPath).isEmpty)
        !(DataFileName.txnOf(st.getPath.getName).isDefined && uncommitted.exists(d =>
          Paths.relativize(d, st.getPath)
            .isDefined))
      else reader.isVisible(st.getPath, Some(st))
    }
    lazy val results = roots.distinct.map { root =>
      tableOf(handle, root).filter(logOnly) match {
        case Some(t) =>
          committed(t, prefixOf(t, root))
          true
        case None if prelisted.contains(root) =>
          // A log-only table below the root: its files from its log. Another: from the listing
          // when it holds every file the table's snapshot shows, else from a listing made now
          // (a commit landed in the middle of the first; RootListing says why).
          val below = handle.tables.filter(t => Paths.relativize(root, new Path(t.root)).isDefined)
          val (fromLog, judged) = below.partition(logOnly)
          val names = prelisted(root).iterator.map(_.getPath.toString).toSet
          val stale = judged.filter(t =>
            reader.committedFiles(t).exists(e =>
              TableState.isData(e.path) && !names(new Path(new Path(t.root), e.path).toString)))
          val apart = (fromLog ++ stale).map(t => new Path(t.root))
          def inApart(p: Path) = apart.exists(a => Paths.relativize(a, p).isDefined)
          prelisted(root).foreach(st =>
            if (!inApart(st.getPath) && visible(root, st)) out.getOrElseUpdate(st.getPath, st))
          fromLog.foreach(t => committed(t, ""))
          stale.foreach { t =>
            val dir = new Path(t.root)
            FileTree.files(dir.getFileSystem(conf), dir).foreach { st =>
              if (Paths.relativize(root, st.getPath).exists(TableState.isData) && visible(root, st))
                out.getOrElseUpdate(st.getPath, st)
            }
          }
          true
        case None =>
          val fs = root.getFileSystem(conf)
          try {
            val it = unlessUnfollowed(root, conf)(FileTree.files(fs, root))
            var sink = false
            while (!sink && it.hasNext) {
              val st = it.next()
              Paths.relativize(root, st.getPath).foreach { rel =>
                if (sinkLogs && rel.startsWith(SinkLogDir)) sink = true
                else if (TableState.isData(rel) && visible(root, st)) out.getOrElseUpdate(st.getPath, st)
              }
            }
            !sink
          } catch { case _: java.io.FileNotFoundException if !fs.exists(root) => false }
      }
    }
    // One root in a log-only table: its list as the snapshot's records give it, shared by every
    // read of the same records.
    val single = roots.distinct match {
      case Seq(root) => tableOf(handle, root).filter(logOnly).map(t => reader.committedStatuses(t, prefixOf(t, root)))
      case _ => None
    }
    single.fold[Outcome](
      if (!results.forall(identity)) SparkLists
      else Files(out.valuesIterator.toVector, listed = roots.exists(r => !tableOf(handle, r).exists(logOnly)))
    )(Files(_, listed = false))
  }

  /**
   * `list`, unless it fails on a link the client does not follow (HDFS without symlink
   * resolution): then the read is refused naming the link ([[ReadLinks.notFollowed]]).
   */
  private def unlessUnfollowed[T](root: Path, conf: Configuration)(list: => T): T =
    try list
    catch { case e: java.io.IOException if Links.unfollowed(e) => throw ReadLinks.notFollowed(root, conf, e) }

  private val SinkLogDir = "_spark_metadata/"
  private val IgnoreSinkLog = "spark.sql.streaming.fileStreamSink.ignoreMetadata"

  /** The table of `handle` that `root` is, or is a directory of (the nearest). */
  private def tableOf(handle: SnapshotHandle, root: Path): Option[TableSnapshot] =
    handle.tables.filter(t => root.toString == t.root || Paths.relativize(new Path(t.root), root).isDefined)
      .sortBy(-_.root.length).headOption
}
