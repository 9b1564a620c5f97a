package io.txcommit.spark

import org.apache.spark.sql.catalyst.parser.{ParserInterface, SqlStatementSplitResult}

/** Spark 4.3's parser with [[ours]] tried first on every statement. */
abstract class DelegatingParser(delegate: ParserInterface) extends DelegatingParserBase(delegate) {
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
  override def parseTemporalTableIdentifier(sqlText: String) = delegate.parseTemporalTableIdentifier(sqlText)
}
