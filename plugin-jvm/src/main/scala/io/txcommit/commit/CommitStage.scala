package io.txcommit.commit

import org.slf4j.{Logger, LoggerFactory, MDC}

import io.txcommit.Paths
import io.txcommit.metrics.TxCommitMetrics

/**
 * One stage of the protocol. The base class runs, times and logs it, so that a log at 3 a.m.
 * reads as a sequence of named stages, each with its transaction, table and duration: at DEBUG
 * (a commit's one INFO line is JobCommitter's), with the table and the transaction in the
 * logging context (`txcommit.table`, `txcommit.txn`: a log4j2 filter on them shows one table's
 * stages, docs/operations.md), and its time in the metric `stage.<name>`.
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

  final def run(ctx: TxnContext, in: I, timings: StageTimings): O =
    CommitStage.inContext(ctx) {
      val start = System.nanoTime()
      log.debug(s"txcommit: ${ctx.describe}: stage '$name' starting")
      try {
        val out = execute(ctx, in)
        val ns = System.nanoTime() - start
        timings.record(name, ns / 1000000)
        TxCommitMetrics.stage(name).foreach(_.update(ns, java.util.concurrent.TimeUnit.NANOSECONDS))
        log.debug(s"txcommit: ${ctx.describe}: stage '$name' done in ${ns / 1000000} ms")
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

  /** Keys of the logging context (slf4j MDC) while a stage of a transaction runs. */
  val TableKey = "txcommit.table"
  val TxnKey = "txcommit.txn"

  /** Runs `body` with `ctx`'s table and transaction in the logging context, then restores it. */
  def inContext[A](ctx: TxnContext)(body: => A): A = {
    val (table, txn) = (Option(MDC.get(TableKey)), Option(MDC.get(TxnKey)))
    MDC.put(TableKey, Paths.display(ctx.table))
    MDC.put(TxnKey, ctx.txn)
    try body
    finally {
      table.fold(MDC.remove(TableKey))(MDC.put(TableKey, _))
      txn.fold(MDC.remove(TxnKey))(MDC.put(TxnKey, _))
    }
  }
}
