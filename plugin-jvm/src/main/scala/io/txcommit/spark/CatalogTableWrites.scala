package io.txcommit.spark

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.ResolvedIdentifier
import org.apache.spark.sql.catalyst.plans.logical.{DropTable, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.TableCatalog
import org.apache.spark.sql.execution.command.DropTableCommand
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand
import org.apache.spark.sql.txcommit.RowCounts

import io.txcommit.{Paths, UnsupportedWriteException}
import io.txcommit.commit.WriteIntent
import io.txcommit.conf.TxCommitConf

/**
 * A write into a catalog table (`INSERT`, `insertInto`, `saveAsTable` appending) is resolved by
 * Spark against the catalog's columns, so the catalog's schema is the user's statement of the
 * table's columns: a column added with `ALTER TABLE … ADD COLUMNS` may be written without
 * `mergeSchema`. This rule tells the schema guard so through a write option
 * ([[WriteIntent.CatalogTableOption]], which reaches the job's configuration); a DataFrame
 * write to the table's path still needs `mergeSchema` for a new column.
 */
final case class CatalogTableWrites(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!CatalogTableWrites.txcommitWrites(session)) plan
    else plan.resolveOperatorsDown {
      case i: InsertIntoHadoopFsRelationCommand
          if i.catalogTable.isDefined && !i.options.contains(WriteIntent.CatalogTableOption) =>
        i.copy(options = i.options + (WriteIntent.CatalogTableOption -> i.catalogTable.get.identifier.unquotedString))
    }
}

/**
 * Refuses, when the statement is analysed (before any Spark job or file), a write into a catalog
 * table that may put files in a partition whose location is outside the table's directory
 * (`ALTER TABLE … PARTITION … SET LOCATION`, `ADD PARTITION … LOCATION`): txcommit's record names
 * files relative to the table, and a reader of such a location finds no log to judge its files
 * by, so the write could be neither committed atomically nor read safely. The partitions
 * considered are Spark's own for the write: those its static partition values match (every
 * partition for a dynamic write), as Spark passes them to its writer. A partition located
 * elsewhere inside the table's directory is written like any other.
 */
final case class CustomLocationWrites(session: SparkSession) extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit =
    if (CatalogTableWrites.txcommitWrites(session)) plan.foreach {
      case i: InsertIntoHadoopFsRelationCommand => i.catalogTable.foreach { table =>
          if (table.partitionColumnNames.nonEmpty && table.tracksPartitionsInCatalog &&
            session.sessionState.conf.manageFilesourcePartitions) {
            val conf = session.sessionState.newHadoopConf()
            val root = i.outputPath.getFileSystem(conf).makeQualified(i.outputPath)
            val outside = session.sessionState.catalog.listPartitions(table.identifier, Some(i.staticPartitions))
              .iterator.map(p => p.spec -> new Path(p.location))
              .map { case (spec, at) => spec -> at.getFileSystem(conf).makeQualified(at) }
              .find { case (_, at) => TxCommitProtocol.inside(root, at).isEmpty }
            outside.foreach { case (spec, at) =>
              throw new UnsupportedWriteException(
                s"the write into ${table.identifier.unquotedString} (${Paths.display(root)}) may put files in " +
                  s"partition ${spec.map { case (k, v) => s"$k=$v" }.mkString(", ")}, whose custom partition " +
                  s"location ${Paths.display(at)} is outside the table directory: txcommit commits and reads a " +
                  "table's files inside its directory only, so nothing was written. Move the partition back " +
                  "(ALTER TABLE … PARTITION … SET LOCATION inside the table directory), name a static " +
                  "partition that has no custom location, or write without txcommit (txcommit.disable(spark)).")
            }
          }
        }
      case _ => ()
    }
}

/**
 * `DROP TABLE` of a table this driver wrote a moment ago first waits for the write's row count
 * ([[RowCounts.awaitRecorded]], at most 10 s; no wait when none is pending): Spark hands the
 * count over only after the write returned, and a count written while the drop deletes the
 * table's directory would leave the directory behind, so that a table of that name could not be
 * created again.
 */
final case class DropTableWaits(session: SparkSession) extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreach {
    case d: DropTableCommand if !d.isView =>
      await(Try(session.sessionState.catalog.getTableMetadata(d.tableName)).toOption.flatMap(_.storage.locationUri)
          .map(_.toString))
    case DropTable(ResolvedIdentifier(catalog: TableCatalog, ident), _, _) =>
      await(Try(Option(catalog.loadTable(ident).properties().get(TableCatalog.PROP_LOCATION))).toOption.flatten)
    case _ => ()
  }

  private def await(location: Option[String]): Unit =
    location.foreach(l => RowCounts.awaitRecorded(new Path(l), session.sessionState.newHadoopConf()))
}

object CatalogTableWrites {

  /** Whether the session writes files with txcommit's commit protocol. */
  def txcommitWrites(session: SparkSession): Boolean =
    session.sessionState.conf.fileCommitProtocolClass == TxCommitConf.ProtocolClass
}
