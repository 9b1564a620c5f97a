package org.apache.spark.sql.txcommit

import scala.collection.mutable

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{
  NoopCache,
  PartitionDirectory,
  PartitionSpec,
  PartitioningAwareFileIndex
}
import org.apache.spark.sql.types.StructType

/**
 * A file index over the files a read's log-first snapshot shows, found before Spark lists
 * anything ([[io.txcommit.read.ReadFiles]]): from the log alone for a log-only table, from one
 * listing judged against the log for any other. Spark's own `PartitioningAwareFileIndex` infers
 * the partitions from these files (the `basePath` option, type inference, a user's schema, as
 * for any read) and prunes them in memory, as Spark's `MetadataLogFileIndex` does for a
 * streaming sink's log; the driver hands executors the files chosen. Nothing lists again.
 *
 * A past snapshot's files that a later replacing commit removed are named by its log, yet VACUUM
 * may have deleted them since (`pastFiles`): `pastFilesThere` checks them in the directories a
 * read selects after pruning (docs/protocol.md, I30), so a partition that lost none still reads,
 * and the data schema is inferred from the other files where there are any.
 *
 * `refresh()` (REFRESH TABLE, `refreshByPath`, a write to the path a cached plan reads) takes the
 * read's snapshot anew; a read of a past snapshot keeps its own. Two indexes are equal when they
 * read the same roots with the same files, so Spark's cache serves a plan only for the files it
 * cached. `select` keeps, of the files the snapshot shows, those the read takes (a catalog
 * table's: those in the catalog's partitions).
 */
final class LogFileIndex(session: SparkSession, override val rootPaths: Seq[Path], parameters: Map[String, String],
    userSpecifiedSchema: Option[StructType], initial: Seq[FileStatus], retake: () => Seq[FileStatus],
    val pastFiles: Set[Path] = Set.empty, pastFilesThere: Seq[Path] => Unit = _ => (),
    select: Seq[FileStatus] => Seq[FileStatus] = identity)
  extends PartitioningAwareFileIndex(session, parameters, userSpecifiedSchema, NoopCache) {

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] = {
    val selected = super.listFiles(partitionFilters, dataFilters)
    pastFilesThere(selected.flatMap(_.files.map(_.getPath.getParent)).distinct)
    selected
  }

  @volatile private var state = LogFileIndex.State(select(initial))

  override def leafFiles: mutable.LinkedHashMap[Path, FileStatus] = state.files.leafFiles
  override def leafDirToChildrenFiles: Map[Path, Array[FileStatus]] = state.files.byDir
  override def partitionSpec(): PartitionSpec = {
    val s = state
    s.spec.getOrElse(synchronized {
      val spec = inferPartitioning()
      s.spec = Some(spec)
      spec
    })
  }

  override def refresh(): Unit = state = LogFileIndex.State(select(retake()))

  /**
   * This index over `files` (of the same roots, before `select`): a read of now given the
   * snapshot of the plan it is part of (`io.txcommit.spark.JointReads`). It refreshes as this one.
   */
  def withFiles(files: Seq[FileStatus]): LogFileIndex =
    new LogFileIndex(session, rootPaths, parameters, userSpecifiedSchema, files, retake, pastFiles, pastFilesThere,
      select)

  /** The files this index reads, in the order the snapshot gave them. */
  def files: Seq[FileStatus] = state.files.list

  /**
   * The data schema `infer` finds in this index's files, inferred once for the indexes sharing
   * them: `key` names everything else it depends on (format, options, the session's confs).
   * Files named by a txn id are never rewritten, so the same files give the same schema; Parquet's
   * inference alone sorts every path of the table.
   */
  def inferredSchema(key: Any)(infer: => Option[StructType]): Option[StructType] = {
    val schemas = state.files.schemas
    Option(schemas.get(key)).getOrElse {
      val schema = infer
      if (schemas.size < LogFileIndex.Schemas) schemas.putIfAbsent(key, schema)
      schema
    }
  }

  override def equals(other: Any): Boolean = other match {
    case o: LogFileIndex =>
      rootPaths.toSet == o.rootPaths.toSet && ((state.files eq o.state.files) || state.files.key == o.state.files.key)
    case _ => false
  }

  override def hashCode(): Int = rootPaths.toSet.hashCode()
}

object LogFileIndex {

  /**
   * What an index derives from its file list alone, shared by every index over the same list: the
   * plans of an unchanged table get one list ([[io.txcommit.read.LogFirstReader.committedStatuses]]),
   * so its maps are built once, not once a plan, and a plan cache keeps one copy.
   */
  private final class Files(val list: Seq[FileStatus]) {
    // Spark asks for both maps of a partitioned table's index; a large list builds them side by side.
    private lazy val maps: (mutable.LinkedHashMap[Path, FileStatus], Map[Path, Array[FileStatus]]) =
      if (list.size < Files.BothAtOnceFrom) (buildLeafFiles(), buildByDir())
      else {
        val byDir = java.util.concurrent.CompletableFuture.supplyAsync(() => buildByDir())
        (buildLeafFiles(), byDir.join())
      }
    def leafFiles: mutable.LinkedHashMap[Path, FileStatus] = maps._1
    def byDir: Map[Path, Array[FileStatus]] = maps._2

    private def buildLeafFiles() = mutable.LinkedHashMap.from(list.iterator.map(f => f.getPath -> f))

    // Files of one directory share its path: one `getParent` (a URI parsed) per directory, not per file.
    private def buildByDir() = {
      val parents = new java.util.HashMap[String, Path]()
      list.toArray.groupBy { f =>
        val uri = f.getPath.toUri.toString
        parents.computeIfAbsent(uri.substring(0, uri.lastIndexOf('/') max 0), _ => f.getPath.getParent)
      }
    }
    lazy val key: Set[(String, Long)] = list.iterator.map(f => (f.getPath.toString, f.getLen)).toSet
    val schemas = new java.util.concurrent.ConcurrentHashMap[Any, Option[StructType]]()
  }

  private object Files {
    val BothAtOnceFrom = 50000
  }

  // Schemas kept per file list: one per (format, options, confs) its reads used.
  private val Schemas = 16

  // The last lists indexed, weakly: an index of the same list (the same object) shares its maps.
  private val recent = mutable.ArrayDeque.empty[java.lang.ref.WeakReference[Files]]
  private val Recent = 8

  private def filesOf(list: Seq[FileStatus]): Files = recent.synchronized {
    recent.iterator.map(_.get).find(f => f != null && (f.list eq list)).getOrElse {
      val f = new Files(list)
      recent.prepend(new java.lang.ref.WeakReference(f))
      while (recent.size > Recent) recent.removeLast()
      f
    }
  }

  /** An index's files and the partitions inferred from them (by its own options: not shared). */
  private final class State(val files: Files) {
    @volatile var spec: Option[PartitionSpec] = None
  }

  private object State {
    def apply(list: Seq[FileStatus]): State = new State(filesOf(list))
  }
}
