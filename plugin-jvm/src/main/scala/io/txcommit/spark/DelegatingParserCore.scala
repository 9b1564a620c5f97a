package io.txcommit.spark

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * A parser with [[ours]] tried first on every statement, and every other call handed to
 * Spark's: the members every Spark line has. Each line's `DelegatingParser` (in its
 * scala-spark-<line> folder) adds the members that line introduced. Compiled per line: a
 * parser compiled against a later line calls ParserInterface members (and its trait
 * initializer) that an earlier one lacks, and a session fails to build it.
 */
abstract class DelegatingParserCore(delegate: ParserInterface) extends ParserInterface {

  /** The plan of a statement this parser handles itself; None for any other SQL. */
  protected def ours(sqlText: String): Option[LogicalPlan]

  override def parsePlan(sqlText: String): LogicalPlan = ours(sqlText).getOrElse(delegate.parsePlan(sqlText))
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}
