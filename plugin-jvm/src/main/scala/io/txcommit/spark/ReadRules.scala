package io.txcommit.spark

import java.time.Instant
import java.util.Locale

import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Cast, Expression}
import org.apache.spark.sql.execution.datasources.{DataSource, FileFormat}
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2
import org.apache.spark.sql.types.TimestampType

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.TableVersions
import io.txcommit.read.{AsOfOption, LogFirstSnapshot}

/**
 * What the analyzer rules giving reads their log-first snapshot ([[LogFirstReads]],
 * [[CatalogTableSnapshots]]) share: whether the session has them on, which formats are file
 * sources, and the snapshot of now or of a past version a read's options ask for.
 */
private[spark] object ReadRules {
  val Key: String = TxCommitConf.SnapshotOption
  val AsOfKey: String = TxCommitConf.AsOfOption.toLowerCase(Locale.ROOT)

  /** Marks an `asOf` a rule set from SQL, so errors name the clause the user wrote. */
  val ClauseKey = "spark.txcommit.read.asofclause"

  /** Whether this session's reads get log-first snapshots (txcommit's read filter on, and log-first reads). */
  def enabled(session: SparkSession): Boolean = {
    val conf = session.sessionState.conf
    Seq(TxCommitConf.ReadFilter, TxCommitConf.LogFirst).forall(k =>
      !conf.getConfString(k, "true").trim.equalsIgnoreCase("false")) &&
    session.sparkContext.hadoopConfiguration.get(TxCommitConf.HadoopPathFilter) == TxCommitConf.FilterClass
  }

  /** Whether every root is a path Hadoop can parse: a rule leaves any other read to Spark's own checks. */
  def arePaths(roots: Seq[String]): Boolean = roots.forall(r => Try(new Path(r)).isSuccess)

  /** Whether `format` names a file source (Parquet, ORC, CSV, JSON, text, Avro, …). */
  def isFileSource(session: SparkSession, format: String): Boolean =
    Try(DataSource.lookupDataSource(format, session.sessionState.conf)).toOption.exists(c =>
      classOf[FileFormat].isAssignableFrom(c) || classOf[FileDataSourceV2].isAssignableFrom(c))

  /**
   * The encoded snapshot of the tables `roots` are, or are partition directories of, now or as
   * of `asOf` ("" for none; a past snapshot of no table is an error).
   */
  def snapshotOf(session: SparkSession, roots: Seq[String], asOf: Option[AsOfOption]): String = {
    val handle = LogFirstSnapshot.forRoots(roots.map(new Path(_)), session.sessionState.newHadoopConf(), asOf)
    asOf.foreach { a =>
      if (handle.isEmpty) throw refused(roots,
        s"${a.option} '${a.value.text}' asks for a past snapshot, but no " +
          "txcommit table (a directory holding _txcommit/ with a committed transaction) is at or above this path")
    }
    handle.fold("")(_.encode)
  }

  /**
   * The past snapshot a read's options ask for (the option `name` in errors); fails on a
   * malformed value and on Delta Lake's options, so none is silently ignored.
   */
  def asOfOf(options: collection.Map[String, String], roots: Seq[String], name: String): Option[AsOfOption] = {
    val lower = options.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
    TxCommitConf.DeltaTimeTravelOptions.find(o => lower.contains(o.toLowerCase(Locale.ROOT))).foreach { o =>
      throw refused(roots,
        s"option $o '${lower(o.toLowerCase(Locale.ROOT))}' is Delta Lake's and " +
          s"txcommit does not read it; name a past snapshot with option ${TxCommitConf.AsOfOption} (a transaction " +
          "id from TXCOMMIT HISTORY, or an ISO-8601 time)")
    }
    lower.get(AsOfKey).map { v =>
      TableVersions.parseAsOf(v).map(AsOfOption(_, name)).getOrElse(throw refused(roots,
          s"$name '$v' is neither a transaction id (16 characters of 0-9 and a-z, as TXCOMMIT HISTORY shows) " +
            "nor an ISO-8601 time (such as 2026-11-27T20:00:00Z)"))
    }
  }

  /** The `asOf` option and the clause it came from for SQL's `VERSION AS OF` / `TIMESTAMP AS OF`. */
  def asOfClause(session: SparkSession, timestamp: Option[Expression], version: Option[String],
      where: String): Option[(String, String)] =
    version.map("VERSION AS OF" -> _).orElse(timestamp.map(ts => "TIMESTAMP AS OF" -> timeOf(session, ts, where)))

  def refused(roots: Seq[String], why: String): TimeTravelException =
    new TimeTravelException(s"read of ${roots.map(r => Paths.display(new Path(r))).mkString(", ")}: $why")

  def disabled(roots: Seq[String], a: AsOfOption): TimeTravelException =
    refused(roots,
      s"${a.option} '${a.value.text}' needs txcommit's log-first reads, which this session has off " +
        s"(${TxCommitConf.ReadFilter}, ${TxCommitConf.LogFirst} and the read filter must be on)")

  /** The time a `TIMESTAMP AS OF` expression gives, in the session's time zone, as an ISO instant. */
  private def timeOf(session: SparkSession, ts: Expression, where: String): String = {
    val cast = Cast(ts, TimestampType, Some(session.sessionState.conf.sessionLocalTimeZone))
    val micros = if (cast.resolved && cast.foldable) Option(cast.eval()) else None
    micros match {
      case Some(m: java.lang.Long) => Instant.EPOCH.plusNanos(m.longValue * 1000L).toString
      case _ => throw refused(Seq(where), s"TIMESTAMP AS OF ${ts.sql} is not a constant time")
    }
  }
}
