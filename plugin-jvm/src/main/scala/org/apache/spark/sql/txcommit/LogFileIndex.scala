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
 * cached.
 */
final class LogFileIndex(session: SparkSession, override val rootPaths: Seq[Path], parameters: Map[String, String],
    userSpecifiedSchema: Option[StructType], initial: Seq[FileStatus], retake: () => Seq[FileStatus],
    val pastFiles: Set[Path] = Set.empty, pastFilesThere: Seq[Path] => Unit = _ => ())
  extends PartitioningAwareFileIndex(session, parameters, userSpecifiedSchema, NoopCache) {

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] = {
    val selected = super.listFiles(partitionFilters, dataFilters)
    pastFilesThere(selected.flatMap(_.files.map(_.getPath.getParent)).distinct)
    selected
  }

  @volatile private var state = LogFileIndex.State(initial)

  override def leafFiles: mutable.LinkedHashMap[Path, FileStatus] = state.leafFiles
  override def leafDirToChildrenFiles: Map[Path, Array[FileStatus]] = state.byDir
  override def partitionSpec(): PartitionSpec = {
    val s = state
    s.spec.getOrElse(synchronized {
      val spec = inferPartitioning()
      s.spec = Some(spec)
      spec
    })
  }

  override def refresh(): Unit = state = LogFileIndex.State(retake())

  /** The files this index reads, in the order the snapshot gave them. */
  def files: Seq[FileStatus] = state.files

  override def equals(other: Any): Boolean = other match {
    case o: LogFileIndex => rootPaths.toSet == o.rootPaths.toSet && state.key == o.state.key
    case _ => false
  }

  override def hashCode(): Int = rootPaths.toSet.hashCode()
}

object LogFileIndex {
  private final case class State(files: Seq[FileStatus]) {
    lazy val leafFiles: mutable.LinkedHashMap[Path, FileStatus] =
      mutable.LinkedHashMap.from(files.iterator.map(f => f.getPath -> f))
    lazy val byDir: Map[Path, Array[FileStatus]] = files.toArray.groupBy(_.getPath.getParent)
    lazy val key: Set[(String, Long)] = files.iterator.map(f => (f.getPath.toString, f.getLen)).toSet
    @volatile var spec: Option[PartitionSpec] = None
  }
}
