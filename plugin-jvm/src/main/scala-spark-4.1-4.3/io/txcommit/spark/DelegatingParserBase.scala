package io.txcommit.spark

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/** The parser of Spark 4.1 to 4.3 with [[ours]] tried first on every statement: the members
  * those lines share. Compiled per line, like every class implementing ParserInterface. */
abstract class DelegatingParserBase(delegate: ParserInterface) extends ParserInterface {
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
