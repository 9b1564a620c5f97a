package io.txcommit.commit

import scala.util.control.NonFatal

import org.apache.spark.sql.types.StructType

import io.txcommit.{CorruptCommitRecordException, SchemaMismatchException}
import io.txcommit.log.{TableSchema, TableState}

/**
 * What the schema guard judges: the schema the job wrote (None when its format gave none),
 * whether it replaces the whole table (then any schema goes), `mergeSchema`, whether NOT NULL
 * columns are enforced (else the written schema counts as nullable throughout: Spark's
 * DataFrame nullability is no declared constraint, a UDF's result is always nullable), and the
 * snapshot of the table's log to judge against.
 */
final case class SchemaCheck(written: Option[StructType], replacesTable: Boolean, mergeSchema: Boolean,
    state: TableState, enforceNotNull: Boolean = false)

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
}
