package io.txcommit.commit

import scala.util.control.NonFatal

import org.apache.spark.sql.types.StructType

import io.txcommit.{CorruptCommitRecordException, SchemaMismatchException}
import io.txcommit.log.{SchemaMark, TableSchema, TableState}

/**
 * What the schema guard judges: the schema the job wrote (None when its format gave none),
 * whether it replaces the whole table (then any schema goes), `mergeSchema`, whether NOT NULL
 * columns are enforced (else the written schema counts as nullable throughout: Spark's
 * DataFrame nullability is no declared constraint, a UDF's result is always nullable), the
 * snapshot of the table's log to judge against, and the paths of the files the job wrote
 * (their directories are its partitioning).
 */
final case class SchemaCheck(written: Option[StructType], replacesTable: Boolean, mergeSchema: Boolean,
    state: TableState, enforceNotNull: Boolean = false, files: Seq[String] = Nil)

/**
 * Job commit, before the commit point: refuses a write whose schema cannot be read together
 * with the table's (docs/protocol.md, I27), naming each column with both types and what to
 * do; returns the schema the record carries (the table's schema as of this commit). The table's
 * schema is read from `state`, a snapshot taken at commit time, so records committed while the
 * job ran count; a replacing commit judges again against the snapshot of its conflict check.
 */
object CheckSchema extends CommitStage[SchemaCheck, Option[String]]("check-schema") {
  override protected def execute(ctx: TxnContext, in: SchemaCheck): Option[String] = decide(ctx, in)

  def decide(ctx: TxnContext, in: SchemaCheck): Option[String] = in.written.map { given =>
    val written = if (in.enforceNotNull) given else TableSchema.nullable(given)
    if (in.replacesTable) TableSchema.ddl(written)
    else TableSchema.current(in.state) match {
      case None => TableSchema.ddl(written) // a new table, or one whose records carry no schema
      case Some(mark) =>
        val (since, ddl) = (mark.txn, mark.ddl)
        checkPartitioning(ctx, in, mark)
        val table =
          try TableSchema.parse(ddl)
          catch {
            case NonFatal(e) => throw new CorruptCommitRecordException(
                s"${ctx.describe}: the table's schema, as the record of txn $since carries it ($ddl), cannot be " +
                  s"read (${e.getMessage.linesIterator.toSeq.headOption.getOrElse(e.toString)}). Nothing was " +
                  "committed. Overwrite the whole table (mode(\"overwrite\")) to record its schema anew.", e)
          }
        TableSchema.merge(table, written, in.mergeSchema, in.enforceNotNull) match {
          case Right(merged) => TableSchema.ddl(merged)
          case Left(problems) => throw new SchemaMismatchException(
              s"${ctx.describe}: the write's schema cannot be read together with the table's " +
                s"(as of txn $since: $ddl): " +
                problems.map(_._2).mkString("; ") + ". Nothing was committed. Cast the columns to the " +
                "table's types; write with option(\"mergeSchema\", \"true\") to add new columns; or " +
                "overwrite the whole table (mode(\"overwrite\")) to replace its schema.",
              problems.map(_._1))
        }
    }
  }

  /**
   * A write partitioned unlike the table (its files in other directories: an unpartitioned
   * append to a table partitioned by `day`, whose `day` column then lands in the files at the
   * root) is refused, whatever `mergeSchema` says: Spark's partition discovery and the Python
   * readers would read such a table differently. The table's partitioning is that of the files
   * of the commit that set its schema; unknown (not checked) when that commit or this write
   * added no file, or their directories are not all `name=value`.
   */
  private def checkPartitioning(ctx: TxnContext, in: SchemaCheck, mark: SchemaMark): Unit =
    for {
      mine <- TableSchema.partitioning(in.files)
      theirs <- TableSchema.partitioningOf(in.state, mark.txn)
      if mine != theirs
    } {
      def shown(cols: Seq[String]) = cols.mkString("(", ", ", ")")
      val columns = (mine.diff(theirs) ++ theirs.diff(mine)).distinct
      val fix =
        if (theirs.isEmpty) "write without partitionBy"
        else theirs.map(c => "\"" + c + "\"").mkString("write with partitionBy(", ", ", ")")
      throw new SchemaMismatchException(
        s"${ctx.describe}: this write is not partitioned as the table is: the table's files are " +
          s"partitioned by ${shown(theirs)}, this write's by ${shown(mine)} (as of txn ${mark.txn}). " +
          "Spark and other readers would read such a table differently, so nothing was committed. " +
          s"To add to the table, $fix; to change its partitioning, overwrite the whole table " +
          "(mode(\"overwrite\")).",
        if (columns.nonEmpty) columns else theirs)
    }
}
