package io.txcommit.log

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructField, StructType}

/**
 * The schema a table's records carry (docs/protocol.md, I27): Spark DDL of its data columns
 * (partition columns live in directory names, typed by the reader). Records written before the
 * schema guard, and writes of formats that give their schema to no one, carry none: unknown.
 */
object TableSchema {
  /** Where Spark's Parquet writer puts the schema it writes, in the job's conf (before setupJob). */
  val ParquetWrittenSchemaKey = "org.apache.spark.sql.parquet.row.attributes"

  /** Decoded schemas of records in `commits/` (immutable), by record path: what a commit reads. */
  private val cache = new BoundedCache[String, (Long, Option[String])](1000000L, _ => 1L)

  /** An append this JVM just committed: the next commit to the table need not read it back. */
  def committed(layout: LogLayout, r: CommitRecord): Unit =
    if (!r.isReplacing) cache.put(layout.commitRecord(r.txn).toString, (r.committedAt, r.schema))

  /** The schema this job writes, as Spark gave it to the file format; None if it gave none. */
  def written(conf: Configuration): Option[StructType] =
    Option(conf.get(ParquetWrittenSchemaKey)).flatMap { json =>
      try Some(DataType.fromJson(json)).collect { case s: StructType => s }
      catch { case NonFatal(_) => None } // a schema we cannot read is no schema: nothing checked
    }

  /** DDL as the record stores it: `id BIGINT NOT NULL, name STRING`. */
  def ddl(schema: StructType): String = schema.fields.map(_.toDDL).mkString(", ")

  def parse(ddl: String): StructType = StructType.fromDDL(ddl)

  /**
   * The table's schema as of `state`'s snapshot: the one of the committed record carrying a
   * schema that committed last (by `committedAt`, then txn id), with that record's txn.
   */
  def current(state: TableState): Option[(String, String)] = {
    val replacing = state.replaceLog.records.map(r => (r.committedAt, r.txn, r.schema))
    val appends = (state.commitTxns -- state.replaceLog.byTxn.keySet).toSeq.flatMap { t =>
      val key = state.layout.commitRecord(t).toString
      cache.get(key).orElse(state.record(t).map { r =>
        val v = (r.committedAt, r.schema)
        cache.put(key, v)
        v
      }).map { case (at, schema) => (at, t, schema) }
    }
    (replacing ++ appends).collect { case (at, t, Some(s)) => (at, t, s) }
      .maxByOption { case (at, t, _) => (at, t) }
      .map { case (_, t, s) => (t, s) }
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
