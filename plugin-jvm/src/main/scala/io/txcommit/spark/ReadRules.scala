package io.txcommit.spark

import java.time.Instant
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Cast, Expression}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTablePartition, UnresolvedCatalogRelation}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{
  DataSource,
  DataSourceUtils,
  FileFormat,
  HadoopFsRelation,
  LogicalRelation
}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2
import org.apache.spark.sql.txcommit.{LogFileIndex, LogRelations}
import org.apache.spark.sql.types.{StructType, TimestampType}

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.TableVersions
import io.txcommit.read.{
  AsOfListing,
  AsOfOption,
  LogFirstReader,
  LogFirstSnapshot,
  ReadFiles,
  SnapshotHandle,
  TableSnapshot
}

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
   * The snapshot of now of every read of the plan being analyzed, taken together (set by
   * [[LogFirstReads]] for its reads and the catalog tables', by each read's roots; its
   * [[CatalogTableSnapshots]] takes it): each multi-table transaction is in all of the plan's
   * tables or in none (docs/protocol.md, I35). A scalar subquery is analyzed on its own, with its
   * own.
   */
  private val joint = new ThreadLocal[Map[Seq[String], String]] {
    override def initialValue(): Map[Seq[String], String] = Map.empty
  }

  /**
   * Takes one snapshot of every table `reads` (each read's roots) name, for this plan's rules. A
   * plan of one read takes its own when it is resolved: a read planned from the log
   * ([[ReadFiles.planNow]]) holds each transaction whole across its tables too.
   */
  def planJoint(session: SparkSession, reads: Seq[Seq[String]]): Unit = {
    val all = reads.flatten.distinct
    joint.set(
      if (all.isEmpty || reads.distinct.size < 2) Map.empty
      else {
        val handle = LogFirstSnapshot.forRoots(all.map(new Path(_)), session.sessionState.newHadoopConf()).fold("")(
          _.encode)
        reads.map(_ -> handle).toMap
      })
  }

  /** The plan's joint snapshot is taken by every read that needed one. */
  def endJoint(): Unit = joint.set(Map.empty)

  /** The plan's joint snapshot for the read of now of `roots`, if the plan took one ("" for none). */
  private def jointOf(roots: Seq[String], asOf: Option[AsOfOption]): Option[String] =
    if (asOf.isDefined) None else joint.get.get(roots)

  /**
   * The reads of one statement, as a rule resolves them in one pass over its plan: a table read
   * twice in it (a self-join, a multi-insert's shared source) is read from one snapshot, with the
   * same files, so both reads show one version of it and Spark can reuse one scan's exchange for
   * both. A read with other options, or of another version, is planned apart.
   */
  final class StatementReads {
    private val planned = scala.collection.mutable.HashMap.empty[(Seq[String], Map[String, String],
          Option[AsOfOption]), Either[String, Plan]]
    private val snapshots = scala.collection.mutable.HashMap.empty[(Seq[String], Option[AsOfOption]), String]

    private[ReadRules] def plan(roots: Seq[String], options: Map[String, String], asOf: Option[AsOfOption])(
        take: => Either[String, Plan]): Either[String, Plan] = planned.getOrElseUpdate((roots, options, asOf), take)

    private[ReadRules] def snapshot(roots: Seq[String], asOf: Option[AsOfOption])(take: => String): String =
      snapshots.getOrElseUpdate((roots, asOf), take)
  }

  /**
   * The encoded snapshot of the tables `roots` are, or are partition directories of, now or as
   * of `asOf` ("" for none; a past snapshot of no table is an error). A read of now takes the
   * plan's joint snapshot when there is one.
   */
  def snapshotOf(session: SparkSession, roots: Seq[String], asOf: Option[AsOfOption]): String =
    jointOf(roots, asOf).getOrElse(handleOf(session, roots, asOf).fold("")(_.encode))

  /** The snapshot of `roots` taken now, decoded: None when no root is in a txcommit table. */
  def handleOf(session: SparkSession, roots: Seq[String], asOf: Option[AsOfOption]): Option[SnapshotHandle] = {
    val handle = LogFirstSnapshot.forRoots(roots.map(new Path(_)), session.sessionState.newHadoopConf(), asOf)
    asOf.foreach { a =>
      if (handle.isEmpty) throw refused(roots,
        s"${a.option} '${a.value.text}' asks for a past snapshot, but no " +
          "txcommit table (a directory holding _txcommit/ with a committed transaction) is at or above this path")
    }
    handle
  }

  /**
   * Read options a file index planned from the log does not honour, so Spark's own listing (with
   * the read filter) reads them: modification-time bounds (a file read from the log carries its
   * transaction's start time, not the store's), and a read's own hidden-name rule.
   */
  private val ListingOnlyOptions = Set("modifiedbefore", "modifiedafter", "ignoredpathsegmentregex")

  /**
   * A batch read of `paths` in `format` (with `options`, a user's schema; now, or as of `asOf`),
   * resolved before Spark lists anything (docs/readers.md): Right, the relation
   * `ResolveDataSource` would build over a [[org.apache.spark.sql.txcommit.LogFileIndex]] of the
   * files the read's snapshot shows (a plain root's from the one listing Spark would make);
   * Left, the snapshot option (empty for no table) with which Spark's own listing reads it: a
   * format Spark reads another way, an option the index does not honour, a glob, a delegate path
   * filter, a root holding a streaming sink's log, a root that is gone.
   */
  def pathRead(session: SparkSession, reads: StatementReads, format: String, paths: Seq[String],
      options: Map[String, String], userSchema: Option[StructType], asOf: Option[AsOfOption],
      sqlOnFile: Boolean = false)
      : Either[String, HadoopFsRelation] = {
    val pathOption = options.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }
    val roots = paths ++ pathOption
    val fileFormat = LogRelations.fileFormat(session, format)
    // A `path` or `paths` option beside path parameters: Spark refuses the read with its own
    // error, which it must give before anything is listed (not after a walk of the root).
    val pathsOption = options.keys.exists(_.equalsIgnoreCase("paths"))
    if (fileFormat.isEmpty || ((pathOption.isDefined || pathsOption) && paths.nonEmpty))
      Left(reads.snapshot(roots, asOf)(snapshotOf(session, roots, asOf)))
    else reads.plan(roots, options, asOf)(plan(session, roots, options, asOf)).map { p =>
      // ResolveDataSource moves a single path into the options (SQL on a file keeps it apart).
      val relationOptions =
        if (!sqlOnFile && paths.size == 1 && pathOption.isEmpty) options + ("path" -> paths.head) else options
      val index = new LogFileIndex(session, p.roots, relationOptions, userSchema, p.files, p.retake, p.pastFiles,
        p.pastFilesThere)
      LogRelations.relation(session, fileFormat.get, relationOptions + (Key -> p.snapshot), userSchema, index)
    }
  }

  /**
   * A batch read of the catalog table `table` (with the read's `options`; now, or as of `asOf`)
   * resolved as [[pathRead]]: Right, what `FindDataSourceTable` resolves it to (the table's
   * schema and partition columns) over a [[org.apache.spark.sql.txcommit.LogFileIndex]]. A read
   * of now of a table whose partitions the catalog tracks reads the catalog's partitions, as
   * Spark does; a read of a past snapshot reads the partitions the log holds then (the catalog
   * knows only today's). Left as [[pathRead]]'s, and for a bucketed table or a partition located
   * anywhere but its own `k=v` directory of the table.
   */
  def tableRead(session: SparkSession, reads: StatementReads, table: CatalogTable, options: Map[String, String],
      asOf: Option[AsOfOption]): Either[String, LogicalPlan] = {
    val extra = new CaseInsensitiveStringMap(options.asJava)
    val conf = session.sessionState.conf
    val tracked = conf.manageFilesourcePartitions && table.tracksPartitionsInCatalog &&
      table.partitionColumnNames.nonEmpty && asOf.isEmpty
    val roots = Seq(table.location.toString)
    val fileFormat = LogRelations.fileFormat(session, table.provider.getOrElse(""))
    val partitions = if (tracked) Some(session.sessionState.catalog.listPartitions(table.identifier)) else None
    val unchanged = UnchangedTableReads.of(session, table, options, partitions, asOf)
    if (table.bucketSpec.isDefined || fileFormat.isEmpty)
      Left(reads.snapshot(roots, asOf)(unchanged.snapshot(snapshotOf(session, roots, asOf))))
    else {
      val dsOptions = DataSourceUtils.generateDatasourceOptions(extra, table)
      reads.plan(roots, dsOptions, asOf)(plan(session, roots, dsOptions, asOf)).flatMap { p =>
        val keep = partitions.fold(Option((_: Path) => true))(catalogPartitions(session, table, _, p.roots.head))
        keep.toRight(unchanged.snapshot(p.snapshot)).map { keep =>
          val inCatalog = (files: Seq[FileStatus]) => files.filter(f => keep(f.getPath.getParent))
          val schema = Some(table.schema).filter(_.nonEmpty)
          val relation = unchanged.relation(p.snapshot, p.files) {
            val index = new LogFileIndex(session, p.roots, dsOptions, schema, p.files, p.retake, p.pastFiles,
              p.pastFilesThere, inCatalog)
            LogRelations.relation(session, fileFormat.get, dsOptions + (Key -> p.snapshot), schema, index,
              table.partitionColumnNames)
          }
          session.sessionState.catalog.getRelation(table, extra).transform {
            case _: UnresolvedCatalogRelation => LogicalRelation(relation, table)
          }
        }
      }
    }
  }

  /**
   * The last read of now of each catalog table in a session, reused by the next read of it while
   * the table's log, catalog entry and read options are unchanged, so two reads of an unchanged
   * table are equal relations, as two of Spark's own reads of a catalog table are. Spark relies on
   * that equality: `saveAsTable` in overwrite mode finds a query reading the table it replaces by
   * comparing the query's relations with a fresh read of the table, before it drops the table
   * (and, for a managed table, its files). A read still takes its snapshot; only what it builds
   * from an unchanged one is the last read's. A snapshot names its log's records by number
   * (a log deleted and written again may reach the same numbers), so a planned read is reused
   * only when its files are the same files too, and a listed read only when the driver loaded
   * the same records for both.
   */
  private object UnchangedTableReads {
    private final case class Key(table: Seq[Any], options: Map[String, String], partitions: Option[Seq[Any]])
    private final case class Last(tables: Vector[TableSnapshot], snapshot: String, relation: Option[HadoopFsRelation],
        files: Seq[(String, Long, Long)])
    // Per session, a few tables each (a session's recent reads), dropped with the session.
    private val bySession = new java.util.WeakHashMap[SparkSession, java.util.Map[Key, Last]]()
    private val PerSession = 64

    final class Of private[UnchangedTableReads] (session: SparkSession, key: Option[Key]) {

      /**
       * The last read's snapshot if `snapshot` holds what it held (the same records, as the
       * driver loaded them), else `snapshot` (now the last).
       */
      def snapshot(snapshot: String): String = handleOf(snapshot).fold(snapshot) { case (k, handle) =>
        last(k).filter(l => l.tables == handle.tables && sameRecords(l.snapshot, handle)).map(_.snapshot).getOrElse {
          remember(k, Last(handle.tables, snapshot, None, Nil))
          snapshot
        }
      }

      /**
       * The last read's relation if `snapshot` holds what its did and `files` are its files, else
       * `build`'s (now the last).
       */
      def relation(snapshot: String, files: Seq[FileStatus])(build: => HadoopFsRelation): HadoopFsRelation = {
        val same = files.map(f => (f.getPath.toString, f.getLen, f.getModificationTime))
        handleOf(snapshot).fold(build) { case (k, handle) =>
          last(k).filter(l => l.tables == handle.tables && l.files == same).flatMap(_.relation).getOrElse {
            val built = build
            remember(k, Last(handle.tables, snapshot, Some(built), same))
            built
          }
        }
      }

      private def handleOf(snapshot: String): Option[(Key, SnapshotHandle)] =
        key.zip(SnapshotHandle.decode(snapshot).toOption.flatten)

      private def sameRecords(lastSnapshot: String, now: SnapshotHandle): Boolean =
        SnapshotHandle.decode(lastSnapshot).toOption.flatten.exists(last =>
          now.tables.forall(t => LogFirstReader.sameRecords(last.readId, now.readId, t.root)))

      private def reads: java.util.Map[Key, Last] =
        bySession.synchronized(bySession.computeIfAbsent(session, _ => lru()))
      private def last(k: Key): Option[Last] = { val r = reads; r.synchronized(Option(r.get(k))) }
      private def remember(k: Key, l: Last): Unit = { val r = reads; r.synchronized(r.put(k, l)) }
    }

    private def lru(): java.util.Map[Key, Last] = new java.util.LinkedHashMap[Key, Last](16, 0.75f, true) {
      override def removeEldestEntry(e: java.util.Map.Entry[Key, Last]): Boolean = size() > PerSession
    }

    /** Reads of now only: a past snapshot is fixed, and its read is built anew. */
    def of(session: SparkSession, table: CatalogTable, options: Map[String, String],
        partitions: Option[Seq[CatalogTablePartition]], asOf: Option[AsOfOption]): Of =
      new Of(session,
        if (asOf.isDefined) None
        else Some(Key(
            Seq(table.identifier, table.location, table.schema, table.partitionColumnNames, table.bucketSpec,
              table.provider, table.storage.properties),
            options, partitions.map(_.map(p => (p.spec, p.location))))))
  }

  /**
   * Whether a directory of the table at `root` is in one of the catalog's partitions of `table`
   * (at or below its location); None when a partition lies anywhere but its own `k=v` directory
   * (Spark's listing reads those).
   */
  private def catalogPartitions(session: SparkSession, table: CatalogTable, listed: Seq[CatalogTablePartition],
      root: Path): Option[Path => Boolean] = {
    val hadoopConf = session.sessionState.newHadoopConf()
    val partitions = listed.map { p =>
      val path = new Path(p.location)
      val default = org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils.generatePartitionPath(p.spec,
        table.partitionColumnNames, root)
      (path.getFileSystem(hadoopConf).makeQualified(path), default)
    }
    val locations = partitions.map(_._1)
    // A partition not at its own `k=v` directory: its files' paths do not say their partition
    // values, which only the catalog holds. Spark's listing of the catalog's partitions reads it.
    if (partitions.exists { case (l, default) => l.toString.stripSuffix("/") != default.toString.stripSuffix("/") })
      None
    else {
      val dirs = locations.map(_.toString).toSet
      Some(dir =>
        Iterator.iterate(dir)(_.getParent).takeWhile(d => d != null && d.depth >= root.depth)
          .exists(d => dirs(d.toString)))
    }
  }

  /**
   * A read planned from its snapshot: its qualified roots, its files, how to take them anew
   * (REFRESH), the snapshot option it carries (empty where it reads no table), a past snapshot's
   * files a later commit removed and the check that they are still there where a read selects.
   */
  final case class Plan private[ReadRules] (roots: Seq[Path], files: Seq[FileStatus], retake: () => Seq[FileStatus],
      snapshot: String, pastFiles: Set[Path], pastFilesThere: Seq[Path] => Unit)

  /** Left: the snapshot option of a read Spark's own listing reads. */
  private def plan(session: SparkSession, roots: Seq[String], options: Map[String, String],
      asOf: Option[AsOfOption]): Either[String, Plan] = {
    val lower = options.keySet.map(_.toLowerCase(Locale.ROOT))
    val hadoopConf = session.sessionState.newHadoopConfWithOptions(options)
    val sessionRegex = session.sessionState.conf.getConfString(IgnoredPathSegmentRegex, DefaultIgnoredPathSegments)
    val delegate = Option(hadoopConf.get(TxCommitConf.DelegateFilter)).exists(_.trim.nonEmpty)
    if (roots.isEmpty || lower.exists(ListingOnlyOptions) || sessionRegex != DefaultIgnoredPathSegments ||
      delegate || roots.exists(LogFirstSnapshot.isGlob)) Left(snapshotOf(session, roots, asOf))
    else {
      val qualified = roots.map { r =>
        val p = new Path(r)
        p.getFileSystem(hadoopConf).makeQualified(p)
      }
      def now(): (Option[SnapshotHandle], ReadFiles.Outcome) = ReadFiles.planNow(qualified, hadoopConf)
      // The plan's joint snapshot, where it holds a table of this read: its files are that snapshot's (I35).
      val shared = jointOf(roots, asOf).flatMap(v => SnapshotHandle.decode(v).toOption.flatten).filter(h =>
        h.tables.exists(t =>
          qualified.exists(r => r.toString == t.root || Paths.relativize(new Path(t.root), r).isDefined)))
      val (handle, outcome) = (asOf, shared) match {
        case (None, Some(h)) => (Some(h), ReadFiles.of(h, qualified, hadoopConf))
        case (None, None) => now()
        case (Some(_), _) =>
          val h = handleOf(session, roots, asOf)
          (h, ReadFiles.of(h.get, qualified, hadoopConf))
      }
      val snapshot = handle.fold("")(_.encode)
      outcome match {
        case ReadFiles.SparkLists => Left(snapshot)
        case ReadFiles.Files(found, _) =>
          val retake = () =>
            if (asOf.isDefined) found
            else now()._2 match {
              case ReadFiles.Files(files, _) => files
              case ReadFiles.SparkLists => found
            }
          val past = handle.toSeq.flatMap(AsOfListing.of)
          val pastFilesThere = (dirs: Seq[Path]) =>
            past.foreach { case (table, listing) => listing.verify(table, dirs, Nil, hadoopConf) }
          val pastFiles = past.flatMap { case (table, l) => l.files.map(f => new Path(table, f.path)) }.toSet
          Right(Plan(qualified, found, retake, snapshot, pastFiles, pastFilesThere))
      }
    }
  }

  private val IgnoredPathSegmentRegex = "spark.sql.files.ignoredPathSegmentRegex"
  private val DefaultIgnoredPathSegments = "^[._]"

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
