package io.txcommit.spark

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnresolvedDataSource}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.SupportsNamespaces
import org.apache.spark.sql.execution.datasources.LogicalRelation
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
 * whose first part is a namespace of the current catalog is left alone: it may be a real table
 * (and [[CatalogTableSnapshots]]'s). A read naming a path Hadoop cannot parse (an empty one, a
 * URI Spark reads some other way) is left to Spark, whose own checks of the read's arguments
 * then raise the error they raise without txcommit.
 */
final case class LogFirstReads(session: SparkSession) extends Rule[LogicalPlan] {
  import ReadRules.{AsOfKey, ClauseKey, Key}

  override def apply(plan: LogicalPlan): LogicalPlan = {
    val clauses = plan.resolveOperatorsDown {
      case t @ RelationTimeTravel(u @ UnresolvedRelation(Seq(format, path), options, false), timestamp, version)
          if !options.containsKey(Key) && isSqlOnFile(format) =>
        ReadRules.asOfClause(session, timestamp, version, path).fold(t: LogicalPlan) { case (clause, value) =>
          val withAsOf = options.asCaseSensitiveMap().asScala.toMap + (AsOfKey -> value) + (ClauseKey -> clause)
          u.copy(options = new CaseInsensitiveStringMap(withAsOf.asJava))
        }
    }
    // Every read of now in this plan, path or catalog table, takes one snapshot together (I35).
    if (ReadRules.enabled(session)) ReadRules.planJoint(session, readsOfNow(clauses)) else ReadRules.endJoint()
    resolve(clauses)
  }

  /** The roots of each read of now this plan's rules give a snapshot: by path, SQL on files, catalog tables. */
  private def readsOfNow(plan: LogicalPlan): Seq[Seq[String]] = {
    val catalog = CatalogTableSnapshots(session)
    def now(options: collection.Map[String, String]): Boolean =
      !options.keySet.exists(k =>
        k.equalsIgnoreCase(Key) || k.equalsIgnoreCase(AsOfKey) || k.equalsIgnoreCase(ClauseKey)) &&
        !TxCommitConf.DeltaTimeTravelOptions.exists(o => options.keySet.exists(_.equalsIgnoreCase(o)))
    // A catalog table under VERSION / TIMESTAMP AS OF is a past read ([[CatalogTableSnapshots]] sets its option later).
    val past = plan.collect { case RelationTimeTravel(u: UnresolvedRelation, _, _) => u }
    plan.collect {
      case u: UnresolvedDataSource
          if !u.isStreaming && now(u.options) && ReadRules.isFileSource(session, u.format) &&
            ReadRules.arePaths(u.paths ++ u.options.get("path").toSeq) =>
        u.paths ++ u.options.get("path").toSeq
      case UnresolvedRelation(Seq(format, path), options, false)
          if now(options.asCaseSensitiveMap().asScala) && isSqlOnFile(format) && ReadRules.arePaths(Seq(path)) =>
        Seq(path)
      case u @ UnresolvedRelation(parts, options, false)
          if now(options.asCaseSensitiveMap().asScala) && !past.exists(_ eq u) =>
        catalog.fileSourceTable(parts).map(_.location.toString).toSeq
    }.filter(_.nonEmpty)
  }

  private def resolve(plan: LogicalPlan, reads: ReadRules.StatementReads = new ReadRules.StatementReads): LogicalPlan =
    plan.resolveOperatorsUp {
      case u: UnresolvedDataSource
          if !u.options.contains(Key) && ReadRules.isFileSource(session, u.format) &&
            ReadRules.arePaths(u.paths ++ u.options.get("path").toSeq) =>
        val roots = u.paths ++ u.options.get("path").toSeq
        val asOf = ReadRules.asOfOf(u.options, roots, TxCommitConf.AsOfOption)
        if (u.isStreaming) {
          asOf.foreach(a =>
            throw ReadRules.refused(roots, s"${a.option} '${a.value.text}': a streaming read has no past snapshot"))
          u
        } else if (!ReadRules.enabled(session)) { asOf.foreach(a => throw ReadRules.disabled(roots, a)); u }
        else ReadRules.pathRead(session, reads, u.format, u.paths, u.options.originalMap, u.userSpecifiedSchema, asOf)
          .fold[LogicalPlan](snapshot => u.copy(options = u.options + (Key -> snapshot)), r => LogicalRelation(r))
      case u @ UnresolvedRelation(Seq(format, path), options, false)
          if !options.containsKey(Key) && isSqlOnFile(format) && ReadRules.arePaths(Seq(path)) =>
        val opts = options.asCaseSensitiveMap().asScala.toMap
        val asOf = ReadRules.asOfOf(opts - ClauseKey, Seq(path), opts.getOrElse(ClauseKey, TxCommitConf.AsOfOption))
        if (!ReadRules.enabled(session)) { asOf.foreach(a => throw ReadRules.disabled(Seq(path), a)); u }
        else {
          val read = opts - ClauseKey
          ReadRules.pathRead(session, reads, format, Seq(path), read, None, asOf, sqlOnFile = true).fold[LogicalPlan](
            snapshot => u.copy(options = new CaseInsensitiveStringMap((read + (Key -> snapshot)).asJava)),
            r => LogicalRelation(r))
        }
    }

  /** `format`.`path` is SQL on a file: a file format that is not a namespace of the current catalog. */
  private def isSqlOnFile(format: String): Boolean =
    session.sessionState.conf.runSQLonFile && ReadRules.isFileSource(session, format) && !isNamespace(format)

  private def isNamespace(name: String): Boolean =
    session.sessionState.catalogManager.currentCatalog match {
      case c: SupportsNamespaces => Try(c.namespaceExists(Array(name))).getOrElse(true)
      case _ => true
    }
}
