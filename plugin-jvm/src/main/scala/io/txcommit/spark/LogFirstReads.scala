package io.txcommit.spark

import java.time.Instant

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation}
import org.apache.spark.sql.catalyst.expressions.{Cast, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.SupportsNamespaces
import org.apache.spark.sql.execution.datasources.{DataSource, FileFormat}
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2
import org.apache.spark.sql.types.TimestampType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.TableVersions
import io.txcommit.read.{AsOfOption, LogFirstSnapshot}

/**
 * Gives a batch file-source read of a txcommit table a log-first snapshot: before Spark lists
 * any data (its file index lists during resolution), this rule lists the log of each table the
 * read's roots are, or are a partition directory of, and adds the snapshot as a read option,
 * which reaches the read filter's configuration on the driver and, serialised with it, on every
 * executor that lists part of the read. Spark's listing then runs once, as usual (parallel
 * listing, partition discovery, pruning), keeping the files the snapshot shows.
 *
 * A read naming a past snapshot (read option `txcommit.asOf`, or SQL's `VERSION AS OF` /
 * `TIMESTAMP AS OF` on a file relation, which this rule turns into that option) gets the snapshot
 * of that version instead (docs/protocol.md, I30); one whose root is no txcommit table fails, as
 * do Delta Lake's `versionAsOf` / `timestampAsOf`, so no such option is silently ignored.
 *
 * It runs in the analyzer's hint batch, the last point before `ResolveDataSource`,
 * `ResolveRelations` (which would refuse time travel on a file relation) and `ResolveSQLOnFile`,
 * for `DataFrameReader` and Connect reads (`UnresolvedDataSource`) and SQL on files
 * (`UnresolvedRelation(format, path)`). The batch runs to a fixed point, so every read it saw
 * gets the option (empty when it found no table) and is not looked at again. A two-part name
 * whose first part is a namespace of the current catalog is left alone: it may be a real table.
 */
final case class LogFirstReads(session: SparkSession) extends Rule[LogicalPlan] {
  private val Key = TxCommitConf.SnapshotOption
  private val AsOfKey = TxCommitConf.AsOfOption.toLowerCase(java.util.Locale.ROOT)

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case t @ RelationTimeTravel(u @ UnresolvedRelation(Seq(format, path), options, false), timestamp, version)
        if !options.containsKey(Key) && session.sessionState.conf.runSQLonFile && isFileSource(format) &&
          !isNamespace(format) =>
      val asOf = version.map("VERSION AS OF" -> _).orElse(timestamp.map(ts => "TIMESTAMP AS OF" -> timeOf(ts, path)))
      asOf.fold(t: LogicalPlan) { case (clause, value) =>
        val withAsOf = options.asCaseSensitiveMap().asScala.toMap + (AsOfKey -> value) + (ClauseKey -> clause)
        u.copy(options = new CaseInsensitiveStringMap(withAsOf.asJava))
      }
  }.resolveOperatorsUp {
    case u: UnresolvedDataSource if !u.options.contains(Key) && isFileSource(u.format) =>
      val roots = u.paths ++ u.options.get("path").toSeq
      val asOf = asOfOf(u.options, roots, TxCommitConf.AsOfOption)
      if (u.isStreaming) {
        asOf.foreach(a => throw refused(roots, s"${a.option} '${a.value.text}': a streaming read has no past snapshot"))
        u
      } else if (!enabled) { asOf.foreach(a => throw disabled(roots, a)); u }
      else u.copy(options = u.options + (Key -> snapshotOf(roots, asOf)))
    case u @ UnresolvedRelation(Seq(format, path), options, false)
        if !options.containsKey(Key) && session.sessionState.conf.runSQLonFile && isFileSource(format) &&
          !isNamespace(format) =>
      val opts = options.asCaseSensitiveMap().asScala.toMap
      val asOf = asOfOf(opts - ClauseKey, Seq(path), opts.getOrElse(ClauseKey, TxCommitConf.AsOfOption))
      if (!enabled) { asOf.foreach(a => throw disabled(Seq(path), a)); u }
      else {
        val withSnapshot = opts - ClauseKey + (Key -> snapshotOf(Seq(path), asOf))
        u.copy(options = new CaseInsensitiveStringMap(withSnapshot.asJava))
      }
  }

  /** Marks an `asOf` this rule set from SQL, so errors name the clause the user wrote. */
  private val ClauseKey = "spark.txcommit.read.asofclause"

  /** The past snapshot the options ask for; fails on a malformed value and on Delta's options. */
  private def asOfOf(options: collection.Map[String, String], roots: Seq[String], name: String): Option[AsOfOption] = {
    val lower = options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    TxCommitConf.DeltaTimeTravelOptions.find(o => lower.contains(o.toLowerCase(java.util.Locale.ROOT))).foreach { o =>
      throw refused(roots,
        s"option $o '${lower(o.toLowerCase(java.util.Locale.ROOT))}' is Delta Lake's and " +
          s"txcommit does not read it; name a past snapshot with option ${TxCommitConf.AsOfOption} (a transaction " +
          "id from TXCOMMIT HISTORY, or an ISO-8601 time)")
    }
    lower.get(AsOfKey).map { v =>
      TableVersions.parseAsOf(v).map(AsOfOption(_, name)).getOrElse(throw refused(roots,
          s"$name '$v' is neither a transaction id (16 characters of 0-9 and a-z, as TXCOMMIT HISTORY shows) " +
            "nor an ISO-8601 time (such as 2026-11-27T20:00:00Z)"))
    }
  }

  private def refused(roots: Seq[String], why: String): TimeTravelException =
    new TimeTravelException(s"read of ${roots.map(r => Paths.display(new Path(r))).mkString(", ")}: $why")

  private def disabled(roots: Seq[String], a: AsOfOption): TimeTravelException =
    refused(roots,
      s"${a.option} '${a.value.text}' needs txcommit's log-first reads, which this session has off " +
        s"(${TxCommitConf.ReadFilter}, ${TxCommitConf.LogFirst} and the read filter must be on)")

  /** The time a `TIMESTAMP AS OF` expression gives, in the session's time zone, as an ISO instant. */
  private def timeOf(ts: Expression, path: String): String = {
    val cast = Cast(ts, TimestampType, Some(session.sessionState.conf.sessionLocalTimeZone))
    val micros = if (cast.resolved && cast.foldable) Option(cast.eval()) else None
    micros match {
      case Some(m: java.lang.Long) => Instant.EPOCH.plusNanos(m.longValue * 1000L).toString
      case _ => throw refused(Seq(path), s"TIMESTAMP AS OF ${ts.sql} is not a constant time")
    }
  }

  private def enabled: Boolean = {
    val conf = session.sessionState.conf
    Seq(TxCommitConf.ReadFilter, TxCommitConf.LogFirst).forall(k =>
      !conf.getConfString(k, "true").trim.equalsIgnoreCase("false")) &&
    session.sparkContext.hadoopConfiguration.get(TxCommitConf.HadoopPathFilter) == TxCommitConf.FilterClass
  }

  private def snapshotOf(roots: Seq[String], asOf: Option[AsOfOption]): String = {
    val handle = LogFirstSnapshot.forRoots(roots.map(new Path(_)), session.sessionState.newHadoopConf(), asOf)
    asOf.foreach { a =>
      if (handle.isEmpty) throw refused(roots,
        s"${a.option} '${a.value.text}' asks for a past snapshot, but no " +
          "txcommit table (a directory holding _txcommit/ with a committed transaction) is at or above this path")
    }
    handle.fold("")(_.encode)
  }

  private def isFileSource(format: String): Boolean =
    Try(DataSource.lookupDataSource(format, session.sessionState.conf)).toOption.exists(c =>
      classOf[FileFormat].isAssignableFrom(c) || classOf[FileDataSourceV2].isAssignableFrom(c))

  private def isNamespace(name: String): Boolean =
    session.sessionState.catalogManager.currentCatalog match {
      case c: SupportsNamespaces => Try(c.namespaceExists(Array(name))).getOrElse(true)
      case _ => true
    }
}
