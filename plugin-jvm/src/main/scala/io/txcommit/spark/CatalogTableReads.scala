package io.txcommit.spark

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType, ExternalCatalogUtils}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.execution.datasources.{
  CatalogFileIndex,
  HadoopFsRelation,
  FileIndex,
  InMemoryFileIndex,
  LogicalRelation,
  NoopCache,
  PartitionDirectory,
  PartitionPath,
  PartitionSpec
}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.txcommit.conf.TxCommitConf
import io.txcommit.read.AsOfListing

/**
 * Gives a batch read of a catalog table (`spark.table("db.t")`, `SELECT … FROM db.t`) whose
 * location is a txcommit table a log-first snapshot, as [[LogFirstReads]] does for path reads.
 *
 * A catalog table shows up as a bare name, and Spark caches its relation (with the file index
 * and the listing it made) for later queries whatever their options. So, in the analyzer's hint
 * batch, before `FindDataSourceTable` runs: look the name up in the session catalog; for a
 * file-source table with a location, list that location's log, drop the cached relation when it
 * is a txcommit table (its listing was of an older snapshot), and add the snapshot as a read
 * option. `FindDataSourceTable` then builds the relation with that option: a table whose
 * partitions the catalog does not track lists at once, through the read filter, with the
 * snapshot; one whose partitions it tracks gets a `CatalogFileIndex` that lists only when the
 * optimizer has pruned its partitions, which [[CatalogTableSnapshotIndexes]] replaces by one that
 * lists with the snapshot. Every name it saw gets the option (empty when the table is not a
 * txcommit one), so the fixed-point batch does not look twice.
 *
 * Temporary views, views, Hive SerDe tables, tables of other catalogs and streaming reads are
 * left alone (docs/readers.md says which rule those reads follow). A read of a past snapshot
 * (`txcommit.asOf`, `VERSION AS OF`, `TIMESTAMP AS OF`) works as on a path (docs/protocol.md, I30).
 */
final case class CatalogTableSnapshots(session: SparkSession) extends Rule[LogicalPlan] {
  import ReadRules.{AsOfKey, ClauseKey, Key}
  // CatalogManager.SESSION_CATALOG_NAME, which Spark keeps private to its own packages.
  private val SessionCatalogName = "spark_catalog"

  override def apply(plan: LogicalPlan): LogicalPlan =
    try rules(plan)
    finally ReadRules.endJoint() // the plan's joint snapshot (LogFirstReads) is taken by now

  private def rules(plan: LogicalPlan, reads: ReadRules.StatementReads = new ReadRules.StatementReads): LogicalPlan =
    plan.resolveOperatorsDown {
      case t @ RelationTimeTravel(u @ UnresolvedRelation(parts, options, false), timestamp, version)
          if !options.containsKey(Key) && fileSourceTable(parts).isDefined =>
        ReadRules.asOfClause(session, timestamp, version, parts.mkString(".")).fold(t: LogicalPlan) {
          case (clause, value) =>
            val withAsOf = options.asCaseSensitiveMap().asScala.toMap + (AsOfKey -> value) + (ClauseKey -> clause)
            u.copy(options = new CaseInsensitiveStringMap(withAsOf.asJava))
        }
    }.resolveOperatorsUp {
      case u @ UnresolvedRelation(parts, options, false) if !options.containsKey(Key) =>
        fileSourceTable(parts).fold[LogicalPlan](u) { table =>
          val roots = Seq(table.location.toString)
          val opts = options.asCaseSensitiveMap().asScala.toMap
          val asOf = ReadRules.asOfOf(opts - ClauseKey, roots, opts.getOrElse(ClauseKey, TxCommitConf.AsOfOption))
          if (!ReadRules.enabled(session)) { asOf.foreach(a => throw ReadRules.disabled(roots, a)); u }
          else ReadRules.tableRead(session, reads, table, opts - ClauseKey, asOf).fold[LogicalPlan](
            snapshot => {
              // Spark would reuse the relation cached by an earlier query, and its listing with it.
              if (snapshot.nonEmpty) session.sessionState.catalog.invalidateCachedTable(table.identifier)
              u.copy(options = new CaseInsensitiveStringMap((opts - ClauseKey + (Key -> snapshot)).asJava))
            },
            identity)
        }
    }

  /** The file-source table of the session catalog that `parts` names, if it is one with a location. */
  private[spark] def fileSourceTable(parts: Seq[String]): Option[CatalogTable] = {
    val catalog = session.sessionState.catalog
    val manager = session.sessionState.catalogManager
    val ident = parts match {
      case Seq(table) if manager.currentCatalog.name == SessionCatalogName =>
        Some(TableIdentifier(table))
      case Seq(db, table) if manager.currentCatalog.name == SessionCatalogName =>
        Some(TableIdentifier(table, Some(db)))
      case Seq(c, db, table) if c.equalsIgnoreCase(SessionCatalogName) =>
        Some(TableIdentifier(table, Some(db)))
      case _ => None
    }
    ident.filterNot(_ => catalog.isTempView(parts)).flatMap(i => Try(catalog.getTableMetadata(i)).toOption).filter(t =>
      t.tableType != CatalogTableType.VIEW && t.storage.locationUri.isDefined &&
        t.provider.exists(p => !p.equalsIgnoreCase("hive") && ReadRules.isFileSource(session, p)))
  }
}

/**
 * Replaces the `CatalogFileIndex` of a catalog table read that carries a log-first snapshot
 * ([[CatalogTableSnapshots]]) by a [[SnapshotCatalogFileIndex]]: the same partitions, pruned by
 * the same filters, listed with the snapshot. Runs in the analyzer's resolution batch, after
 * `FindDataSourceTable`.
 */
final case class CatalogTableSnapshotIndexes(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case l: LogicalRelation => l.relation match {
        case r: HadoopFsRelation => (r.location, r.options.get(TxCommitConf.SnapshotOption)) match {
            case (index: CatalogFileIndex, Some(snapshot)) if snapshot.nonEmpty =>
              val snapshotted = SnapshotCatalogFileIndex(session, index.table, index.sizeInBytes, snapshot)
              l.copy(relation = r.copy(location = snapshotted)(r.sparkSession))
            case _ => l
          }
        case _ => l
      }
  }
}

/**
 * A catalog table's file index, as Spark's `CatalogFileIndex` (partitions from the catalog,
 * pruned by the scan's partition filters), that lists with the read's log-first snapshot and
 * anew each time: Spark's own keeps its listings for the life of the cached relation, which would
 * show a later query an earlier snapshot. Not a `CatalogFileIndex`: that class equals any index
 * of the same table, so a plan rewrite would keep Spark's.
 */
final case class SnapshotCatalogFileIndex(session: SparkSession, table: CatalogTable, sizeInBytes: Long,
    snapshot: String) extends FileIndex {
  private val options = Map(TxCommitConf.SnapshotOption -> snapshot)
  // Taken with the snapshot, at analysis: what each listing of a past snapshot must hold (I30).
  private val asOfListings = AsOfListing.of(snapshot)

  override def rootPaths: Seq[Path] = table.storage.locationUri.map(new Path(_)).toSeq
  override def partitionSchema: StructType = table.partitionSchema
  override def refresh(): Unit = ()
  override def inputFiles: Array[String] = filterPartitions(Nil).inputFiles

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    filterPartitions(partitionFilters).listFiles(Nil, dataFilters)

  /** The listing of the partitions `filters` keep (all of a table without partition columns). */
  def filterPartitions(filters: Seq[Expression]): InMemoryFileIndex = {
    val index = list(filters)
    asOfListings.foreach { case (root, listing) =>
      listing.verify(root, index.rootPaths, index.allFiles(), session.sessionState.newHadoopConf())
    }
    index
  }

  private def list(filters: Seq[Expression]): InMemoryFileIndex = {
    val conf = session.sessionState.conf
    if (table.partitionColumnNames.nonEmpty) {
      val hadoopConf = session.sessionState.newHadoopConf()
      val selected = ExternalCatalogUtils.listPartitionsByFilter(conf, session.sessionState.catalog, table, filters)
      val partitions = selected.map { p =>
        val path = new Path(p.location)
        val fs = path.getFileSystem(hadoopConf)
        PartitionPath(p.toRow(partitionSchema, conf.sessionLocalTimeZone),
          path.makeQualified(fs.getUri,
            fs.getWorkingDirectory))
      }
      val spec = PartitionSpec(partitionSchema, partitions)
      new InMemoryFileIndex(session, spec.partitions.map(_.path), options, Some(spec.partitionColumns), NoopCache,
        Some(spec), None)
    } else {
      new InMemoryFileIndex(session, rootPaths, table.storage.properties ++ options, None, NoopCache, None, None)
    }
  }
}
