package io.txcommit.spark

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.SupportsNamespaces
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.txcommit.conf.TxCommitConf

/**
 * Gives a batch file-source read of a txcommit table a log-first snapshot: before Spark lists
 * any data (its file index lists during resolution), this rule lists the log of each table the
 * read's roots are, or are a partition directory of, and adds the snapshot as a read option,
 * which reaches the read filter's configuration on the driver and, serialised with it, on every
 * executor that lists part of the read. Spark's listing then runs once, as usual (parallel
 * listing, partition discovery, pruning), keeping the files the snapshot shows.
 *
 * It runs in the analyzer's hint batch, the last point before `ResolveDataSource` and
 * `ResolveSQLOnFile`, for `DataFrameReader` and Connect reads (`UnresolvedDataSource`) and SQL on
 * files (`UnresolvedRelation(format, path)`). The batch runs to a fixed point, so every read it
 * saw gets the option (empty when it found no table) and is not looked at again. A two-part name
 * whose first part is a namespace of the current catalog is left alone: it may be a real table.
 */
final case class LogFirstReads(session: SparkSession) extends Rule[LogicalPlan] {
  private val Key = TxCommitConf.SnapshotOption

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case u: UnresolvedDataSource
        if !u.isStreaming && !u.options.contains(Key) && ReadRules.isFileSource(session, u.format) &&
          ReadRules.enabled(session) =>
      val roots = u.paths ++ u.options.get("path").toSeq
      u.copy(options = u.options + (Key -> ReadRules.snapshotOf(session, roots: _*)))
    case u @ UnresolvedRelation(Seq(format, path), options, false)
        if !options.containsKey(Key) && session.sessionState.conf.runSQLonFile &&
          ReadRules.isFileSource(session, format) && !isNamespace(format) && ReadRules.enabled(session) =>
      val withSnapshot = options.asCaseSensitiveMap().asScala.toMap + (Key -> ReadRules.snapshotOf(session, path))
      u.copy(options = new CaseInsensitiveStringMap(withSnapshot.asJava))
  }

  private def isNamespace(name: String): Boolean =
    session.sessionState.catalogManager.currentCatalog match {
      case c: SupportsNamespaces => Try(c.namespaceExists(Array(name))).getOrElse(true)
      case _ => true
    }
}
