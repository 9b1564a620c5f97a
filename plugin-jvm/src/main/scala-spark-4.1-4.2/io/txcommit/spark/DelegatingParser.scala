package io.txcommit.spark

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 4.1's and 4.2's parser with [[ours]] tried first (4.3 added splitStatements and
  * parseTemporalTableIdentifier, which these lines never call). */
abstract class DelegatingParser(delegate: ParserInterface) extends DelegatingParserBase(delegate)
