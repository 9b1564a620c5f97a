package io.txcommit.commit

import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.ReadMode
import io.txcommit.manifest.ManifestSwitch

/** What job setup leaves for the job commit. */
final case class JobStarted(nesting: NestingSeen, base: ReplaceBase, heartbeat: Option[TxnHeartbeat])

/**
 * Job setup, the stages in order, for every write: a batch job and a streaming micro-batch run
 * this one sequence ([[JobCommitter]] is the job commit's). A micro-batch skips what only a
 * batch job needs: it replaces nothing, starts no heartbeat (its job runs for one trigger), and
 * leaves rolling the table forward (a listing of every commit record) to the batch jobs, which
 * run rarely, instead of paying it on every trigger of a stream.
 */
object JobSetup {

  def run(ctx: TxnContext, intent: WriteIntent, streaming: Boolean): JobStarted = {
    val conf = ctx.conf
    TxCommitConf.haltAt(conf) // validate early: a bad value fails the job before any write
    TxCommitConf.bool(conf, TxCommitConf.CleanupAttempts, default = true)
    TxCommitConf.bool(conf, TxCommitConf.KeepAbortedFiles, default = false)
    if (!streaming) TxCommitConf.heartbeatIntervalMs(conf)
    val timings = new StageTimings
    val nesting = CheckTableNesting.run(ctx, (), timings)
    HaltPoint.maybeHalt(conf, HaltPoint.JobAfterNestingCheck)
    if (intent.isReplacing && !nesting.createsTable) CheckReplaceScope.run(ctx,
      if (intent.dynamicPartitions || intent.writeId.isDefined) Seq("") else intent.staticScopes, timings)
    // A table this write creates in a directory holding no data file is log-only (I32).
    if (nesting.createsTable && !streaming && TxCommitConf.newTableReads(conf) == ReadMode.Log)
      RecordReadMode.run(ctx, (), timings)
    val properties = ManifestSwitch.recorded(conf)
    if (properties.nonEmpty) RecordTableProperties.run(ctx, properties, timings)
    if (!streaming) {
      RollForwardReplacements.run(ctx, (), timings)
      RollForward.run(ctx, (), timings)
    }
    val base =
      if (!intent.isReplacing) ReplaceBase(0L, Set.empty)
      else {
        if (intent.policy == WriteIdPolicy.Fail) CheckWriteId.run(ctx, intent, timings)
        val state = ctx.state()
        ReplaceBase(state.replaceLog.highest, state.commitTxns, state.undecided.map(_.txn).toSet)
      }
    StartTransaction.run(ctx, intent.isReplacing, timings)
    if (nesting.createsTable) claimNewTable(ctx, nesting, timings)
    val heartbeat =
      if (streaming) None
      else Some(TxnHeartbeat.start(ctx, intent.isReplacing, TxCommitConf.heartbeatIntervalMs(conf)))
    JobStarted(nesting, base, heartbeat)
  }

  /**
   * A first write looks again for another log above or below its path once its own log exists
   * (I18; [[CheckTableNesting]] says why this settles a race), before it writes any data: the
   * tree then holds no file of this job, so the look costs what setup's did. Refused, it
   * aborts and removes the log it created, and fails the job before any task runs (Spark calls
   * no `abortJob` for a job whose setup failed).
   */
  private def claimNewTable(ctx: TxnContext, nesting: NestingSeen, timings: StageTimings): Unit =
    try RecheckTableNesting.run(ctx, nesting, timings)
    catch {
      case e: io.txcommit.UnsupportedWriteException =>
        AbortTransaction.run(ctx, Nil, timings)
        RemoveCreatedLog.run(ctx, (), timings)
        throw e
    }
}
