package io.txcommit.spark

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** The parser of Spark 4.1 to 4.3: 4.1 added parsePlanWithParameters, a statement too. */
abstract class DelegatingParserBase(delegate: ParserInterface) extends DelegatingParserCore(delegate) {
  override def parsePlanWithParameters(sqlText: String, ctx: ParameterContext): LogicalPlan =
    ours(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, ctx))
}
