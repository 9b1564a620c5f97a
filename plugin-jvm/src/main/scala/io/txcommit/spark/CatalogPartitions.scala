package io.txcommit.spark

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTablePartition, CatalogTableType}
import org.apache.spark.sql.execution.datasources.PartitioningUtils
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.read.{LogFirstSnapshot, ReadFiles}

/**
 * Keeps the partitions the session catalog tracks for a txcommit table in step with what a
 * restore committed. Spark drops a partition from the catalog when an `INSERT OVERWRITE` empties
 * it; a restore that re-adds its files would otherwise leave it out of every read of the catalog
 * table (which reads the catalog's partitions, as Spark does). After `TXCOMMIT RESTORE`, each
 * file-source table of the session catalog located at the restored table gets the partitions that
 * hold a visible file added, and those left without one dropped (their data, if any, kept).
 */
object CatalogPartitions {
  private val log = LoggerFactory.getLogger(getClass)

  /** Brings the catalog's partitions of the tables located at `table` to what the table shows now. */
  def syncWith(session: SparkSession, table: Path): Seq[CatalogTable] = {
    val catalog = session.sessionState.catalog
    val conf = session.sessionState.newHadoopConf()
    val tables = tablesAt(session, table)
    if (tables.nonEmpty) {
      val files = LogFirstSnapshot.forRoots(Seq(table), conf).map(h => ReadFiles.of(h, Seq(table), conf))
      val dirs = files match {
        case Some(ReadFiles.Files(found, _)) => found.flatMap(f => Paths.relativize(table, f.getPath.getParent)).toSet
        case _ => Set.empty[String]
      }
      tables.foreach { t =>
        val columns = t.partitionColumnNames
        val committed = dirs.flatMap { d =>
          val spec = Try(PartitioningUtils.parsePathFragmentAsSeq(d)).getOrElse(Nil)
          if (spec.map(_._1.toLowerCase) == columns.map(_.toLowerCase)) Some(d -> columns.zip(spec.map(_._2)).toMap)
          else None
        }.toMap
        val known = catalog.listPartitions(t.identifier).map { p =>
          val loc = new Path(p.location)
          (p.spec, Paths.relativize(table, loc.getFileSystem(conf).makeQualified(loc)))
        }
        val add = committed.filterNot { case (_, spec) => known.exists(_._1 == spec) }.toSeq.map { case (d, spec) =>
          CatalogTablePartition(spec, t.storage.copy(locationUri = Some(new Path(table, d).toUri)))
        }
        // Only partitions inside the table: one located elsewhere is not the log's to judge.
        val drop = known.collect { case (spec, Some(rel)) if !committed.contains(rel) => spec }
        if (add.nonEmpty) catalog.createPartitions(t.identifier, add, ignoreIfExists = true)
        if (drop.nonEmpty) catalog.dropPartitions(t.identifier, drop, ignoreIfNotExists = true, purge = false,
          retainData = true)
        if (add.nonEmpty || drop.nonEmpty) {
          log.info(s"txcommit: catalog table ${t.identifier.unquotedString} at ${Paths.display(table)}: " +
            s"${add.size} partition(s) added, ${drop.size} dropped to match what the table holds")
        }
      }
    }
    tables
  }

  /** The session catalog's file-source tables with tracked partitions located at `table`. */
  private def tablesAt(session: SparkSession, table: Path): Seq[CatalogTable] = {
    val external = session.sessionState.catalog.externalCatalog
    val conf = session.sessionState.newHadoopConf()
    external.listDatabases().flatMap { db =>
      Try(external.getTablesByName(db, external.listTables(db))).getOrElse(Nil)
    }.filter { t =>
      t.tableType != CatalogTableType.VIEW && t.tracksPartitionsInCatalog && t.partitionColumnNames.nonEmpty &&
      t.provider.exists(p => !p.equalsIgnoreCase("hive") && ReadRules.isFileSource(session, p)) &&
      t.storage.locationUri.exists { u =>
        val p = new Path(u)
        Try(p.getFileSystem(conf).makeQualified(p)).toOption.contains(table)
      }
    }
  }
}
