package io.txcommit.spark

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 4.0's parser with [[ours]] tried first on every statement (4.0 has no more members). */
abstract class DelegatingParser(delegate: ParserInterface) extends DelegatingParserCore(delegate)
