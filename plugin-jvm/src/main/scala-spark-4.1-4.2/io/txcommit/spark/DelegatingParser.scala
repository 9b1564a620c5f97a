package io.txcommit.spark

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/** Spark 4.1's and 4.2's parser with [[ours]] tried first on every statement (4.3 added
  * splitStatements and parseTemporalTableIdentifier, which these lines never call). */
abstract class DelegatingParser(delegate: ParserInterface) extends ParserInterface {
  /** The plan of a statement this parser handles itself; None for any other SQL. */
  protected def ours(sqlText: String): Option[LogicalPlan]

  override def parsePlan(sqlText: String): LogicalPlan = ours(sqlText).getOrElse(delegate.parsePlan(sqlText))
  override def parsePlanWithParameters(sqlText: String, ctx: ParameterContext): LogicalPlan =
    ours(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, ctx))
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
