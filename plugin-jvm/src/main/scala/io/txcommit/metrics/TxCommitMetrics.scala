package io.txcommit.metrics

import com.codahale.metrics.{Counter, Histogram, MetricRegistry, Timer}

import io.txcommit.commit._
import io.txcommit.streaming.ClaimStreamingBatch

/**
 * What this JVM's txcommit did, for Spark's metrics system: the plugin registers the registry as
 * the source `txcommit` (`org.apache.spark.sql.txcommit.TxCommitMetricsSource`) on the driver and
 * on every executor, so every sink Spark is configured with (Prometheus, JMX, CSV, Graphite ...)
 * reports them as `<app>.<driver|executor id>.txcommit.<name>`. Counts are since the JVM started.
 * Every metric exists from the start (Spark copies a source's metrics when it registers it), so a
 * dashboard sees zeros rather than gaps. docs/operations.md lists them with a scrape example.
 */
object TxCommitMetrics {
  val registry = new MetricRegistry

  /** Transactions committed (batch jobs and streaming batches; restores too). */
  val commits: Counter = registry.counter("commits")

  /** Commits refused because another writer committed first (`TXCOMMIT_COMMIT_CONFLICT`). */
  val conflicts: Counter = registry.counter("conflicts")

  /** Jobs (or task attempts) that found their transaction fenced (`TXCOMMIT_FENCED`). */
  val fencedJobs: Counter = registry.counter("fencedJobs")

  /** Transactions VACUUM fenced before deleting their files (taken for dead). */
  val fences: Counter = registry.counter("fences")

  /** Commits whose outcome the store left unknown (`TXCOMMIT_COMMIT_OUTCOME_UNKNOWN`). */
  val outcomeUnknown: Counter = registry.counter("commitOutcomeUnknown")

  /** A job commit from its first stage to its record (and derived work) in place. */
  val commitTime: Timer = registry.timer("commit.time")

  /** Store requests to the log that one read's snapshot took (LIST, GET), per read. */
  val readLogRequests: Histogram = registry.histogram("read.logRequests")

  /** Files VACUUM deleted, and their bytes (dry runs count nothing). */
  val vacuumDeletedFiles: Counter = registry.counter("vacuum.deletedFiles")
  val vacuumDeletedBytes: Counter = registry.counter("vacuum.deletedBytes")

  /** Every commit stage, as logs and `_SUCCESS` name it. */
  val stages: Seq[CommitStage[_, _]] = Seq(StartTransaction, CheckTableNesting, RecheckTableNesting,
    CheckReplaceScope, RemoveCreatedLog, RollForward, RollForwardReplacements, RecordTableProperties, RecordReadMode,
    CollectManifests, CheckWriteId, SkipTransaction, CheckConflicts, CheckSchema, PublishData,
    PublishCommitRecord, PublishReplaceRecord, PublishRestoreRecord, CopyReplaceRecord, WriteSuccessSummary,
    WriteCheckpoint, WriteManifests, CleanupAttempts, CleanupStaging, AbortTransaction, ClaimStreamingBatch)

  private val stageTimers: Map[String, Timer] = stages.map(s => s.name -> registry.timer(s"stage.${s.name}")).toMap

  /** The time each run of stage `name` took (`stage.<name>`: count, rate, percentiles). */
  def stage(name: String): Option[Timer] = stageTimers.get(name)
}
