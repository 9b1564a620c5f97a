package io.txcommit.spark

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.{DataSource, FileFormat}
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2

import io.txcommit.conf.TxCommitConf
import io.txcommit.read.LogFirstSnapshot

/** What the analyzer rules giving reads their log-first snapshot share. */
private[spark] object ReadRules {

  /** Whether this session's reads get log-first snapshots (txcommit's read filter on, and log-first reads). */
  def enabled(session: SparkSession): Boolean = {
    val conf = session.sessionState.conf
    Seq(TxCommitConf.ReadFilter, TxCommitConf.LogFirst).forall(k =>
      !conf.getConfString(k, "true").trim.equalsIgnoreCase("false")) &&
    session.sparkContext.hadoopConfiguration.get(TxCommitConf.HadoopPathFilter) == TxCommitConf.FilterClass
  }

  /** The encoded snapshot of the tables `roots` are or are partition directories of ("" for none). */
  def snapshotOf(session: SparkSession, roots: String*): String =
    LogFirstSnapshot.forRoots(roots.map(new Path(_)), session.sessionState.newHadoopConf()).fold("")(_.encode)

  /** Whether `format` names a file source (Parquet, ORC, CSV, JSON, text, Avro, …). */
  def isFileSource(session: SparkSession, format: String): Boolean =
    Try(DataSource.lookupDataSource(format, session.sessionState.conf)).toOption.exists(c =>
      classOf[FileFormat].isAssignableFrom(c) || classOf[FileDataSourceV2].isAssignableFrom(c))
}
