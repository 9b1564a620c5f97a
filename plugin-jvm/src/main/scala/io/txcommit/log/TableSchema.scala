package io.txcommit.log

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.apache.spark.sql.catalyst.plans.logical.CreateTable
import org.apache.spark.sql.catalyst.trees.{CurrentOrigin, Origin}
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, Metadata, StructField, StructType}

import io.txcommit.Paths

/**
 * A schema a committed record carries, with the record's txn and `committedAt`: the table's
 * schema is the one of the mark that committed last (by `committedAt`, then txn id).
 */
final case class SchemaMark(txn: String, committedAt: Long, ddl: String)

object SchemaMark {
  def of(r: CommitRecord): Option[SchemaMark] = r.schema.map(SchemaMark(r.txn, r.committedAt, _))

  def latest(marks: Iterable[SchemaMark]): Option[SchemaMark] = marks.maxByOption(m => (m.committedAt, m.txn))
}

/**
 * The schema a table's records carry (docs/protocol.md, I27): Spark DDL of its data columns
 * (partition columns live in directory names, typed by the reader). Records written before the
 * schema guard, and writes of formats that give their schema to no one, carry none: unknown.
 */
object TableSchema {

  /** Where Spark's Parquet writer puts the schema it writes, in the job's conf (before setupJob). */
  val ParquetWrittenSchemaKey = "org.apache.spark.sql.parquet.row.attributes"

  /** What a record in `commits/` (immutable) says, by record path: its mark and its files'
   *  partitioning, or that it is a replacing commit's copy. */
  private final case class Seen(copy: Boolean, mark: Option[SchemaMark], partitioning: Option[Seq[String]])
  private val cache = new BoundedCache[String, Seen](1000000L, _ => 1L)

  /** An append this JVM just committed: the next commit to the table need not read it back. */
  def committed(layout: LogLayout, r: CommitRecord): Unit =
    if (!r.isReplacing) cache.put(layout.commitRecord(r.txn).toString,
      Seen(copy = false, SchemaMark.of(r),
        partitioning(r.added.map(_.path))))

  /** Whether this JVM knows what the record of `txn` in `commits/` says (no read needed). */
  private def known(layout: LogLayout, txn: String): Boolean = cache.get(layout.commitRecord(txn).toString).isDefined

  /** The mark of the append `txn` of `commits/` (None: no schema, a replacing copy, or gone), read once per JVM. */
  private def markOf(layout: LogLayout, read: Path => Option[Array[Byte]], txn: String): Option[SchemaMark] =
    seen(layout, read, txn).flatMap(_.mark)

  private def seen(layout: LogLayout, read: Path => Option[Array[Byte]], txn: String): Option[Seen] = {
    val path = layout.commitRecord(txn)
    cache.get(path.toString).orElse(read(path).map { b =>
      val r = RecordCodec.decode(b, Paths.display(path), txn)
      val seen = Seen(r.isReplacing, if (r.isReplacing) None else SchemaMark.of(r), partitioning(r.added.map(_.path)))
      cache.put(path.toString, seen)
      seen
    }).filterNot(_.copy)
  }

  /**
   * The partitioning of the files the committed record of `txn` adds (see [[partitioning]]),
   * read at most once per JVM for an append (the schema guard read its record already).
   */
  def partitioningOf(state: TableState, txn: String): Option[Seq[String]] =
    state.replaceLog.byTxn.get(txn) match {
      case Some(r) => partitioning(r.added.map(_.path))
      case None => if (state.commitTxns(txn)) seen(state.layout, state.readLog, txn).flatMap(_.partitioning) else None
    }

  /**
   * What the newest checkpoint this JVM used told it about a table (by table path): the
   * transactions it covers, its `through`, its mark. Valid for a later snapshot while the appends
   * it covered that were listed then are listed still, and the `replace/` records up to `through`
   * then listed are listed still, unchanged (records are never deleted: a table deleted and
   * written anew at the same path fails this, and the checkpoint is read again).
   */
  private final case class Base(covered: Set[String], through: Long, mark: Option[SchemaMark],
      appendsListed: Set[String], replaceListed: Set[(String, Long, Long)]) {
    def validFor(txns: Set[String], listing: Set[(String, Long, Long)]): Boolean =
      (appendsListed.nonEmpty || replaceListed.nonEmpty) && appendsListed.subsetOf(txns) && replaceListed.subsetOf(
        listing)
  }
  private val bases = new BoundedCache[String, Base](1000000L, b => 1L + b.covered.size + b.replaceListed.size)

  private def key(st: FileStatus): (String, Long, Long) = (st.getPath.toString, st.getLen, st.getModificationTime)

  private def sequence(st: FileStatus): Long = LogLayout.sequenceOfRecordName(st.getPath.getName).getOrElse(0L)

  /**
   * The table's schema as of `state`'s snapshot (docs/protocol.md, I27): the mark of the
   * committed record carrying a schema that committed last. Its cost is bounded like a read's:
   * the listings of `commits/` and `replace/` (the snapshot's own, shared with whatever else the
   * commit asks of `state`); when this JVM has not yet seen every record listed (nor a checkpoint
   * covering it), also the newest checkpoint that carries the schema (one `LIST` of
   * `checkpoints/`, the checkpoint read once per JVM) and only the records after it. A
   * checkpoint's mark is the latest of those it covers, so the latest of it and of the records it
   * does not cover is the latest of all.
   */
  def current(state: TableState): Option[SchemaMark] = {
    val layout = state.layout
    val txns = state.commitTxns
    val listing = state.replaceListing
    def allKnown(base: Option[Base]): Boolean =
      txns.forall(t => base.exists(_.covered(t)) || known(layout, t)) &&
        listing.forall(st => base.exists(sequence(st) <= _.through) || ReplaceLog.isCached(st))
    val remembered = bases.get(state.table.toString).filter(_.validFor(txns, listing.map(key).toSet))
    val base =
      if (allKnown(remembered)) remembered
      else state.schemaCheckpoint.map { cp =>
        val b = Base(cp.committed.keySet, cp.through, cp.schema.flatten, cp.committed.keySet.intersect(txns),
          listing.filter(sequence(_) <= cp.through).map(key).toSet)
        bases.put(state.table.toString, b)
        b
      }.orElse(remembered)
    val replaced = state.replaceLogAfter(base.map(_.through).getOrElse(0L))
    val covered = base.map(_.covered).getOrElse(Set.empty[String])
    val appends = txns.toSeq.filterNot(t => covered(t) || replaced.byTxn.contains(t))
      .flatMap(markOf(layout, state.readLog, _))
    SchemaMark.latest(base.flatMap(_.mark).toSeq ++ replaced.records.flatMap(SchemaMark.of) ++ appends)
  }

  /**
   * The mark a checkpoint covering `covered` carries, for [[CheckpointWriter]]: the latest of
   * `previous`'s (when it carries one; else of every record it covers, read as the guard reads
   * them: the one time a table whose checkpoints predate the schema pays for its history) and of
   * `records`, the records folded in since; only marks of covered transactions.
   */
  def checkpointMark(previous: Option[Checkpoint], records: Seq[CommitRecord], covered: String => Boolean,
      layout: LogLayout, list: Path => Seq[FileStatus], read: Path => Option[Array[Byte]]): Option[SchemaMark] = {
    val before: Seq[SchemaMark] = previous match {
      case None => Nil
      case Some(p) => p.schema match {
          case Some(m) => m.toSeq
          case None =>
            val all = ReplaceLog.load(layout, list, read, Paths.display, after = 0L)
            all.records.filter(_.sequence.exists(_ <= p.through)).flatMap(SchemaMark.of) ++
              p.committed.keys.toSeq.filterNot(all.byTxn.contains).flatMap(markOf(layout, read, _))
        }
    }
    SchemaMark.latest((before ++ records.flatMap(SchemaMark.of)).filter(m => covered(m.txn)))
  }

  /** The schema this job writes, as Spark gave it to the file format; None if it gave none. */
  def written(conf: Configuration): Option[StructType] =
    Option(conf.get(ParquetWrittenSchemaKey)).flatMap { json =>
      try Some(DataType.fromJson(json)).collect { case s: StructType => s }
      catch { case NonFatal(_) => None } // a schema we cannot read is no schema: nothing checked
    }

  /**
   * The partition columns the files at `paths` (relative to the table) are written under, in
   * order (`day=1/hour=2/part-0` is partitioned by day, hour; `part-0` by nothing); None when
   * there is no file, their directories differ in columns, or one is no `name=value`.
   */
  def partitioning(paths: Seq[String]): Option[Seq[String]] = {
    val each = paths.map { p =>
      val dirs = p.split("/").toSeq.dropRight(1)
      val cols = dirs.map(d => d.indexOf('=')).zip(dirs).collect { case (i, d) if i > 0 => d.substring(0, i) }
      if (cols.size == dirs.size) Some(cols) else None
    }.distinct
    each match {
      case Seq(one) => one
      case _ => None
    }
  }

  /**
   * DDL as the record stores it: `id BIGINT NOT NULL, name STRING`: the columns' names, types and
   * nullability, what the table's files hold. A column's DEFAULT and comment are the catalog's
   * (Spark gives them as column metadata), and `StructType.fromDDL` cannot read a DEFAULT back.
   */
  def ddl(schema: StructType): String = schema.fields.map(_.copy(metadata = Metadata.empty).toDDL).mkString(", ")

  /**
   * The schema a record carries. Parsed with no SQL statement as its origin, so an error names
   * no query of the user's. A record written before DEFAULTs were left out (`s STRING DEFAULT
   * 'abc'`) is read as a CREATE TABLE column list, the one Spark grammar that takes them.
   */
  def parse(ddl: String): StructType = CurrentOrigin.withOrigin(Origin()) {
    try StructType.fromDDL(ddl)
    catch {
      case NonFatal(e) =>
        Try(CatalystSqlParser.parsePlan(s"CREATE TABLE t ($ddl) USING parquet")).toOption
          .collect { case c: CreateTable => StructType(c.tableSchema.fields.map(_.copy(metadata = Metadata.empty))) }
          .getOrElse(throw e)
    }
  }

  /** A column's type without nullability inside it (`catalogString` leaves it out). */
  private def typeKey(f: StructField): String = f.dataType.catalogString

  /** `schema` with every column, and everything inside one, nullable. */
  def nullable(schema: StructType): StructType = StructType(schema.fields.map(f =>
      f.copy(dataType = nullableType(f.dataType), nullable = true)))

  private def nullableType(t: DataType): DataType = t match {
    case s: StructType => nullable(s)
    case ArrayType(e, _) => ArrayType(nullableType(e), containsNull = true)
    case MapType(k, v, _) => MapType(nullableType(k), nullableType(v), valueContainsNull = true)
    case other => other
  }

  /**
   * The table's schema after a write of `written` that keeps the table's other files, or the
   * columns at fault with why. Types must match (case-insensitive names, as Spark reads); a
   * column the table lacks needs `mergeSchema` and is added as nullable (the table's older files
   * have no value for it). With `enforceNotNull`, a NOT NULL column must stay NOT NULL (written
   * so, never left out); without, a nullable write makes the table's column nullable.
   */
  def merge(table: StructType, written: StructType, mergeSchema: Boolean,
      enforceNotNull: Boolean): Either[Seq[(String, String)], StructType] = {
    def key(f: StructField) = f.name.toLowerCase(java.util.Locale.ROOT)
    val byName = written.fields.map(f => key(f) -> f).toMap
    val tableNames = table.fields.map(key).toSet
    val notNullFix = "fill its nulls (coalesce), or write with spark.txcommit.enforceNotNull=false " +
      "to let the column take nulls"
    val kept = table.fields.toSeq.map { tf =>
      byName.get(key(tf)) match {
        case Some(wf) if typeKey(wf) != typeKey(tf) =>
          Left(tf.name -> s"column '${tf.name}': the table has ${tf.dataType.sql}, this write ${wf.dataType.sql}")
        case Some(wf) if enforceNotNull && !tf.nullable && wf.nullable =>
          Left(tf.name -> (s"column '${tf.name}': the table has ${tf.dataType.sql} NOT NULL, this write " +
            s"${wf.dataType.sql} that may be null ($notNullFix)"))
        case None if enforceNotNull && !tf.nullable =>
          Left(tf.name -> (s"column '${tf.name}': the table has ${tf.dataType.sql} NOT NULL, this write " +
            s"lacks it, so its rows would read null ($notNullFix)"))
        case Some(wf) => Right(if (wf.nullable) tf.copy(nullable = true) else tf)
        case None => Right(tf.copy(nullable = true))
      }
    }
    val added = written.fields.toSeq.filterNot(f => tableNames(key(f))).map { wf =>
      if (mergeSchema) Right(wf.copy(nullable = true))
      else Left(wf.name -> (s"column '${wf.name}' (${wf.dataType.sql}) is not in the table; " +
        "write with option(\"mergeSchema\", \"true\") to add it"))
    }
    val problems = (kept ++ added).collect { case Left(p) => p }
    if (problems.nonEmpty) Left(problems)
    else Right(StructType((kept ++ added).collect { case Right(f) => f }))
  }
}
