package io.txcommit.conf

import org.apache.hadoop.conf.Configuration

import io.txcommit.InvalidConfException
import io.txcommit.fault.HaltPoint

/**
 * txcommit's confs, read from the Hadoop configuration of a write or a listing (Spark copies
 * every session SQL conf, and spark-defaults.conf entries, into it). Values are validated when
 * a session sets them (see TxCommitSQLConf) and again here, because a Hadoop conf can also be
 * set directly; a bad value is an error that names the key, never a silent default.
 */
object TxCommitConf {
  val ProtocolClass = "io.txcommit.spark.TxCommitProtocol"
  val FilterClass = "io.txcommit.read.CommittedFilesFilter"

  val ReadFilter = "spark.txcommit.read.filter"
  val IgnoreCorruptRecords = "spark.txcommit.read.ignoreCorruptRecords"
  val DelegateFilter = "spark.txcommit.read.delegateFilterClass"

  /** Whether the SQL extension gives file-source reads of a table a log-first snapshot. */
  val LogFirst = "spark.txcommit.read.logFirst"

  /**
   * The read option carrying a read's log-first snapshot ([[io.txcommit.read.SnapshotHandle]]),
   * set by the SQL extension, never by users. Lower case: SQL on files lower-cases option keys.
   */
  val SnapshotOption = "spark.txcommit.read.snapshot"

  /**
   * The read option naming a past snapshot of a txcommit table: a transaction id (the snapshot
   * right after it committed) or an ISO-8601 time (every commit the store dated at or before it).
   * docs/readers.md, "Reading a past snapshot".
   */
  val AsOfOption = "txcommit.asOf"

  /** Delta Lake's time-travel options: refused on txcommit reads, which name [[AsOfOption]]. */
  val DeltaTimeTravelOptions: Seq[String] = Seq("versionAsOf", "timestampAsOf")

  /** How far the clocks of two drivers (a writer's and a reader's) may disagree, in ms. */
  val MaxClockSkewMs = "spark.txcommit.read.maxClockSkewMs"
  val DefaultMaxClockSkewMs = 1000L

  /** At most this many files in one tree listing that finds the logs below a table directory. */
  val TreeListingMaxFiles = "spark.txcommit.read.treeListingMaxFiles"
  val DefaultTreeListingMaxFiles = 10000L
  val CleanupAttempts = "spark.txcommit.commit.cleanupAttempts"

  /** How often (ms) a running job refreshes its pending marker, so VACUUM sees it is alive. */
  val HeartbeatIntervalMs = "spark.txcommit.commit.heartbeatIntervalMs"
  val DefaultHeartbeatIntervalMs = 300000L

  /**
   * A multi-table transaction (docs/protocol.md, I33): `Group` is the session's open transaction
   * (set by `TXCOMMIT BEGIN`, never by users): every write job of the session prepares instead of
   * committing. `LeaseMs`: how long a transaction may show no life (between its writes, or during
   * one) before anyone may decide it aborted. `WaitMs`: how long a replacing commit waits for an
   * undecided transaction holding an overlapping overwrite before it fails with a conflict.
   */
  val Group = "spark.txcommit.transaction"
  val GroupLeaseMs = "spark.txcommit.transaction.leaseMs"
  val DefaultGroupLeaseMs = 900000L
  val GroupWaitMs = "spark.txcommit.transaction.waitMs"
  val DefaultGroupWaitMs = 10000L

  /** About every how many commits a commit writes a checkpoint of the log (0: never). */
  val CheckpointInterval = "spark.txcommit.checkpoint.interval"
  val DefaultCheckpointInterval = 10L

  /**
   * Whether a commit also rewrites the symlink manifests of the partitions it changed, for
   * engines that read file lists (docs/readers.md): the session's default. The writer option
   * [[ManifestsOption]] wins, then the table's property (io.txcommit.manifest.ManifestSwitch).
   */
  val Manifests = "spark.txcommit.manifests.enabled"
  val ManifestsOption = "txcommit.manifests"

  /** How a table txcommit creates is read (`log` or `listing`; docs/protocol.md, I32). */
  val NewTableReads = "spark.txcommit.newTables.reads"

  /** [[NewTableReads]], validated: a bad value names the key. */
  def newTableReads(conf: Configuration): String =
    Option(conf.get(NewTableReads)).map(_.trim.toLowerCase(java.util.Locale.ROOT)).filter(_.nonEmpty) match {
      case None => io.txcommit.log.ReadMode.Log
      case Some(v) if io.txcommit.log.ReadMode.All(v) => v
      case Some(v) => throw new InvalidConfException(NewTableReads, v, "log or listing")
    }

  /** S3 adapters: probe that the endpoint honours If-None-Match before trusting it. */
  val VerifyConditionalPut = "spark.txcommit.s3.verifyConditionalPut"

  /** S3 adapters: a task asks S3 for each data file it wrote before it commits (one HEAD a
    * file), rather than taking the size its writer counted and S3 acknowledged. */
  val CheckDataFiles = "spark.txcommit.s3.checkDataFiles"
  val HaltAt = "spark.txcommit.test.haltAt"
  val KeepAbortedFiles = "spark.txcommit.test.keepAbortedFiles"
  val PauseAt = "spark.txcommit.test.pauseAt"
  val PauseMs = "spark.txcommit.test.pauseMs"

  /** A local file: a pause at `PauseAt` ends as soon as it exists (`PauseMs` still caps it). */
  val ResumeWhen = "spark.txcommit.test.resumeWhen"

  /** Static (server start only): fault injection does nothing unless this is true. */
  val AllowFaultInjection = "spark.txcommit.test.allowFaultInjection"

  /** Hadoop's input path filter key, which Spark's file listing honours. */
  val HadoopPathFilter = "mapreduce.input.pathFilter.class"

  def bool(conf: Configuration, key: String, default: Boolean): Boolean =
    Option(conf.get(key)).map(_.trim.toLowerCase(java.util.Locale.ROOT)) match {
      case None | Some("") => default
      case Some("true") => true
      case Some("false") => false
      case Some(other) => throw new InvalidConfException(key, other, "true or false")
    }

  def maxClockSkewMs(conf: Configuration): Long = millis(conf, MaxClockSkewMs, DefaultMaxClockSkewMs, min = 0L)

  def heartbeatIntervalMs(conf: Configuration): Long =
    millis(conf, HeartbeatIntervalMs, DefaultHeartbeatIntervalMs, min = 100L)

  def groupLeaseMs(conf: Configuration): Long = millis(conf, GroupLeaseMs, DefaultGroupLeaseMs, min = 100L)

  def groupWaitMs(conf: Configuration): Long = millis(conf, GroupWaitMs, DefaultGroupWaitMs, min = 0L)

  def checkpointInterval(conf: Configuration): Long = count(conf, CheckpointInterval, DefaultCheckpointInterval)

  def treeListingMaxFiles(conf: Configuration): Int =
    math.min(count(conf, TreeListingMaxFiles, DefaultTreeListingMaxFiles), Int.MaxValue.toLong).toInt

  private def count(conf: Configuration, key: String, default: Long): Long =
    Option(conf.get(key)).map(_.trim).filter(_.nonEmpty) match {
      case None => default
      case Some(v) => scala.util.Try(v.toLong).toOption.filter(_ >= 0)
          .getOrElse(throw new InvalidConfException(key, v, "a whole number, 0 or more"))
    }

  private def millis(conf: Configuration, key: String, default: Long, min: Long): Long =
    Option(conf.get(key)).map(_.trim).filter(_.nonEmpty) match {
      case None => default
      case Some(v) => scala.util.Try(v.toLong).toOption.filter(_ >= min)
          .getOrElse(throw new InvalidConfException(key, v, s"a number of milliseconds, $min or more"))
    }

  def haltAt(conf: Configuration): Option[HaltPoint] =
    Option(conf.get(HaltAt)).map(_.trim).filter(_.nonEmpty).map { v =>
      HaltPoint.byName.getOrElse(v,
        throw new InvalidConfException(HaltAt, v,
          "one of " + HaltPoint.all.map(_.name).mkString(", ")))
    }
}
