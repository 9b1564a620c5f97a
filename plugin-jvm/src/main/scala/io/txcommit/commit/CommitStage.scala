package io.txcommit.commit

import org.slf4j.{Logger, LoggerFactory}

/**
 * One stage of the protocol. The base class runs, times and logs it, so that a log at 3 a.m.
 * reads as a sequence of named stages, each with its transaction, table and duration.
 *
 * A stage's `name` (in logs and in `stageDurationsMs` of `_SUCCESS`) is its class name in
 * kebab case, derived, never written by hand: `SkipTransaction` logs as `skip-transaction`,
 * `PublishCommitRecord` as `publish-commit-record`. Renaming a stage class renames its logs.
 */
abstract class CommitStage[I, O] {
  protected val log: Logger = LoggerFactory.getLogger(getClass)

  final val name: String = CommitStage.nameOf(getClass)

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

object CommitStage {

  /** `SkipTransaction$` (a stage object's class) -> `skip-transaction`. */
  def nameOf(cls: Class[_]): String =
    cls.getSimpleName.stripSuffix("$").replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT)
}
