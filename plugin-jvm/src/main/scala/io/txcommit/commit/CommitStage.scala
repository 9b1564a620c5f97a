package io.txcommit.commit

import org.slf4j.{Logger, LoggerFactory}

/**
 * One stage of the protocol. The base class runs, times and logs it, so that a log at 3 a.m.
 * reads as a sequence of named stages, each with its transaction, table and duration.
 *
 * A stage's `name` names it in logs and in `stageDurationsMs` of `_SUCCESS`, where the
 * benchmark report and users' tools read it: it is written out, so renaming a class renames
 * nothing a reader sees. Every name is in `conformance/vectors/names.json` ("stages"), which
 * the JVM's `SharedNamesSuite` and the Python package's names (`txcommit._names`) are checked
 * against.
 */
abstract class CommitStage[I, O](final val name: String) {
  protected val log: Logger = LoggerFactory.getLogger(getClass)

  protected def execute(ctx: TxnContext, in: I): O

  final def run(ctx: TxnContext, in: I, timings: StageTimings): O = {
    val start = System.nanoTime()
    log.debug(s"txcommit: ${ctx.describe}: stage '$name' starting")
    try {
      val out = execute(ctx, in)
      val ms = (System.nanoTime() - start) / 1000000
      timings.record(name, ms)
      log.info(s"txcommit: ${ctx.describe}: stage '$name' done in $ms ms")
      out
    } catch {
      case e: Throwable =>
        val ms = (System.nanoTime() - start) / 1000000
        log.error(s"txcommit: ${ctx.describe}: stage '$name' failed after $ms ms: ${e.getMessage}")
        throw e
    }
  }
}
