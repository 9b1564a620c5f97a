package io.txcommit.commit

import org.slf4j.{Logger, LoggerFactory}

/**
 * One stage of the protocol. The base class runs, times and logs it, so that a log at 3 a.m.
 * reads as a sequence of named stages, each with its transaction, table and duration.
 */
abstract class CommitStage[I, O](val name: String) {
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

/** Durations of the stages that ran, in order, for `_SUCCESS` and logs. */
final class StageTimings {
  private val entries = scala.collection.mutable.LinkedHashMap.empty[String, Long]
  def record(stage: String, ms: Long): Unit = synchronized { entries(stage) = ms }
  def all: Seq[(String, Long)] = synchronized { entries.toSeq }
}
