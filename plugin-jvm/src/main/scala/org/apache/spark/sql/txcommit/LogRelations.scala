package org.apache.spark.sql.txcommit

import java.util.Locale

import org.apache.hadoop.fs.FileStatus
import org.apache.parquet.hadoop.ParquetFileWriter
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.errors.QueryCompilationErrors
import org.apache.spark.sql.execution.datasources.{DataSource, DataSourceUtils, FileFormat, HadoopFsRelation}
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetOptions}
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.SchemaUtils

import io.txcommit.conf.TxCommitConf

/**
 * Builds the relation Spark's `DataSource.resolveRelation` builds for a batch read of a file
 * source, over a [[LogFileIndex]] instead of Spark's listing: the partition columns the index
 * infers (or a catalog table's), the data schema the user gave or the format infers from the
 * files (`FileFormat.inferSchema`, as Spark calls it), made nullable, with Spark's checks. It
 * lives in Spark's package for Spark's own errors (package-private), so a read that cannot be
 * planned fails as Spark's would.
 */
object LogRelations {

  /**
   * The V1 file format a read of `format` resolves to, as `ResolveDataSource` picks it; None when
   * Spark would read it another way (a V2 source, not a file source).
   */
  def fileFormat(session: SparkSession, format: String): Option[FileFormat] = {
    val conf = session.sessionState.conf
    if (format.toLowerCase(Locale.ROOT) == "hive") None
    else scala.util.Try {
      if (DataSource.lookupDataSourceV2(format, conf).isDefined) None
      else DataSource.lookupDataSource(format, conf).getDeclaredConstructor().newInstance() match {
        case v2: FileDataSourceV2 => Some(v2.fallbackFileFormat.getDeclaredConstructor().newInstance())
        case f: FileFormat => Some(f)
        case _ => None
      }
    }.toOption.flatten
  }

  /**
   * The relation of a read whose files `index` holds: `options` the read's (they reach the
   * format's reader as Spark's would), `partitionColumns` a catalog table's (else inferred).
   */
  def relation(session: SparkSession, format: FileFormat, options: Map[String, String],
      userSpecifiedSchema: Option[StructType], index: LogFileIndex, partitionColumns: Seq[String] = Nil,
      bucketSpec: Option[org.apache.spark.sql.catalyst.catalog.BucketSpec] = None): HadoopFsRelation = {
    val conf = session.sessionState.conf
    val equality = conf.resolver
    val caseInsensitive = CaseInsensitiveMap(options)
    val partitionSchema =
      if (partitionColumns.isEmpty || userSpecifiedSchema.isEmpty) index.partitionSchema
      else StructType(partitionColumns.map { c =>
        userSpecifiedSchema.flatMap(_.find(f => equality(f.name, c)))
          .orElse(index.partitionSchema.find(p => equality(p.name, c)))
          .getOrElse(throw QueryCompilationErrors.partitionColumnNotSpecifiedError(format.toString, c))
      })
    val dataSchema = userSpecifiedSchema.map(s =>
      StructType(s.filterNot(f =>
          partitionSchema.exists(p => equality(p.name, f.name)))))
      .orElse(index.inferredSchema(
          (format.getClass.getName, options - TxCommitConf.SnapshotOption, conf.getAllConfs, index.pastFiles))(
          format.inferSchema(session, caseInsensitive - "path", inferFrom(session, format, options, index))))
      .getOrElse(throw QueryCompilationErrors.dataSchemaNotSpecifiedError(format.toString))
    // Spark only warns about a data column named like a partition column (existing tables do it).
    scala.util.Try(SchemaUtils.checkColumnNameDuplication((dataSchema ++ partitionSchema).map(_.name), equality))
    val relation = HadoopFsRelation(index, partitionSchema, dataSchema.asNullable, bucketSpec, format,
      caseInsensitive)(session)
    SchemaUtils.checkSchemaColumnNameDuplication(relation.dataSchema, equality)
    SchemaUtils.checkSchemaColumnNameDuplication(relation.partitionSchema, equality)
    DataSourceUtils.verifySchema(relation.fileFormat, relation.dataSchema)
    relation
  }

  /**
   * The files the data schema is inferred from: none a past snapshot may have lost, where there
   * are others. Parquet without `mergeSchema` reads one footer: the first summary file, else the
   * first data file in path order (`ParquetUtils.inferSchema`), found by sorting every path as
   * text; it is given the summary files and that first data file, found in one pass (the same
   * footer, without sorting a million paths).
   */
  private def inferFrom(session: SparkSession, format: FileFormat, options: Map[String, String],
      index: LogFileIndex): Seq[FileStatus] = {
    val all = index.allFiles()
    val kept = all.filterNot(f => index.pastFiles(f.getPath))
    val from = if (kept.nonEmpty) kept else all
    format match {
      case _: ParquetFileFormat
          if !new ParquetOptions(options, session.sessionState.conf).mergeSchema && from.nonEmpty =>
        // A summary file's name ends the path's text; a path's text orders as its escaped URI
        // (kept in the URI, which `inputFiles()` reuses) where no escape is in any.
        val (summaries, data) =
          from.partition(f => f.getPath.toUri.toString.endsWith("metadata") && ParquetSummaryFiles(f.getPath.getName))
        val escaped = data.exists(_.getPath.toUri.toString.indexOf('%') >= 0)
        summaries ++ data.minByOption(f => if (escaped) f.getPath.toString else f.getPath.toUri.toString)
      case _ => from
    }
  }

  private val ParquetSummaryFiles =
    Set(ParquetFileWriter.PARQUET_METADATA_FILE, ParquetFileWriter.PARQUET_COMMON_METADATA_FILE)
}
