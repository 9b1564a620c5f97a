package org.apache.spark.sql.txcommit

import org.apache.spark.internal.config.ConfigEntry
import org.apache.spark.sql.internal.SQLConf

import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint

/**
 * Registers txcommit's session confs with Spark's SQLConf so that `spark.conf.set` validates
 * them when a (possibly JVM-less) client sets them, and `SET -v` documents them. It lives in
 * Spark's package because Spark's conf builder is package-private (as Delta Lake does).
 */
object TxCommitSQLConf {
  private val Since = "0.1.0"

  private def flag(key: String, doc: String, default: Boolean): ConfigEntry[Boolean] =
    SQLConf.buildConf(key).doc(s"txcommit: $doc").version(Since).booleanConf.createWithDefault(default)

  val READ_FILTER: ConfigEntry[Boolean] = flag(TxCommitConf.ReadFilter,
    "hide files of uncommitted transactions and failed attempts from reads.", default = true)

  val LOG_FIRST: ConfigEntry[Boolean] = flag(TxCommitConf.LogFirst,
    "file-source reads of a table (DataFrame, Connect and SQL on files) list the table's log " +
      "before its data and read exactly the commits that listing found (no clock); false: every " +
      "read is judged by the clock cut (spark.txcommit.read.maxClockSkewMs).", default = true)

  val IGNORE_CORRUPT_RECORDS: ConfigEntry[Boolean] = flag(TxCommitConf.IgnoreCorruptRecords,
    "when a commit record is corrupt, hide its transaction's files and warn instead of failing " +
      "the read.", default = false)

  val MAX_CLOCK_SKEW_MS: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.MaxClockSkewMs)
    .doc("txcommit: how far (ms) the clock of a driver that writes a table may be behind the " +
      "clock of a driver that reads it. A read sees the transactions that committed before it " +
      "began; a commit by another Spark application counts this much later.")
    .version(Since).longConf.checkValue(_ >= 0, "must be 0 or more")
    .createWithDefault(TxCommitConf.DefaultMaxClockSkewMs)

  val TREE_LISTING_MAX_FILES: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.TreeListingMaxFiles)
    .doc("txcommit: a read finds which partition directories (name=value) of a tree hold a " +
      "transaction log with one recursive listing of the directory above them (on S3 one request " +
      "per 1,000 files) instead of asking each directory. A tree with more files than this is " +
      "asked directory by directory; 0 always asks directory by directory.")
    .version(Since).longConf.checkValue(_ >= 0, "must be 0 or more")
    .createWithDefault(TxCommitConf.DefaultTreeListingMaxFiles)

  val HEARTBEAT_INTERVAL_MS: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.HeartbeatIntervalMs)
    .doc("txcommit: how often (ms) a running job rewrites its pending marker, so that VACUUM, " +
      "judging by the store's modification times, sees it is alive however long it runs.")
    .version(Since).longConf.checkValue(_ >= 100, "must be 100 or more")
    .createWithDefault(TxCommitConf.DefaultHeartbeatIntervalMs)

  val CHECKPOINT_INTERVAL: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.CheckpointInterval)
    .doc("txcommit: about every how many commits to a table a commit also writes a checkpoint " +
      "of its log (after the commit point, so a failure there never fails the job), which a " +
      "reader that has not seen the table reads instead of one record per transaction. A commit " +
      "writes one when its transaction id falls in 1/n of the id space; 0 turns it off (VACUUM " +
      "and TXCOMMIT CHECKPOINT still write them).")
    .version(Since).longConf.checkValue(_ >= 0, "must be 0 or more")
    .createWithDefault(TxCommitConf.DefaultCheckpointInterval)

  val MANIFESTS: ConfigEntry[Boolean] = flag(TxCommitConf.Manifests,
    "after each commit (derived work, never a job failure), rewrite the symlink manifests " +
      "(_symlink_format_manifest/<partition>/manifest) of the partitions it changed, for engines " +
      "that read file lists (Hive's SymlinkTextInputFormat: Trino, Athena, Hive): the default for " +
      s"tables without the property; a write's ${TxCommitConf.ManifestsOption} option wins, then the " +
      "table's property (TXCOMMIT ALTER '<path>' SET ('manifests' = 'true'|'false')), which every " +
      "writer follows. TXCOMMIT GENERATE MANIFEST writes them all.",
    default = false)

  val NEW_TABLE_READS: ConfigEntry[String] = SQLConf.buildConf(TxCommitConf.NewTableReads)
    .doc("txcommit: how a table txcommit creates (a first write to a directory holding no data file) " +
      "is read: log (log-only: reads plan from the log and never list data; a file written without " +
      "txcommit is invisible until a command commits it) or listing (reads list the table and show " +
      "files written without txcommit). TXCOMMIT ALTER '<path>' SET ('reads' = ...) changes a table.")
    .version(Since).stringConf.transform(_.trim.toLowerCase(java.util.Locale.ROOT))
    .checkValues(io.txcommit.log.ReadMode.All).createWithDefault(io.txcommit.log.ReadMode.Log)

  val CLEANUP_ATTEMPTS: ConfigEntry[Boolean] = flag(TxCommitConf.CleanupAttempts,
    "after a commit, delete files of the transaction's failed task attempts.", default = true)

  val KEEP_ABORTED_FILES: ConfigEntry[Boolean] = flag(TxCommitConf.KeepAbortedFiles,
    "(tests only) leave the files of aborted task attempts in place, as a dead executor would.",
    default = false)

  val VERIFY_CONDITIONAL_PUT: ConfigEntry[Boolean] = flag(TxCommitConf.VerifyConditionalPut,
    "before the first commit to an S3 bucket, prove that the endpoint refuses a second " +
      "If-None-Match: * create of one key; refuse to commit if it does not. Turn off only for an " +
      "endpoint you have certified otherwise.", default = true)

  val MAINTENANCE_JOB_THRESHOLD: ConfigEntry[Int] = SQLConf.buildConf(io.txcommit.spark.SparkJobSteps.ThresholdConf)
    .doc("txcommit: from how many files VACUUM deletes, or a restore checks, it does so in a Spark " +
      "job (tasks of 100 files beside one another on the executors) rather than on the driver: a " +
      "Spark Connect client then sees the job's progress. 0 never.")
    .version(Since).intConf.checkValue(_ >= 0, "must be 0 or more")
    .createWithDefault(io.txcommit.spark.SparkJobSteps.DefaultThreshold)

  val CHECK_DATA_FILES: ConfigEntry[Boolean] = flag(TxCommitConf.CheckDataFiles,
    "S3: before a task commits, ask S3 for every data file it wrote (one HEAD a file), so a file " +
      "deleted under the running task by a tool outside txcommit fails the attempt (Spark retries " +
      "it) instead of being committed. Off, a task takes each file's size from the bytes its " +
      "writer sent, which S3 acknowledged before the writer closed it; VACUUM fences a " +
      "transaction before it deletes any of its files, so it never needs the check.",
    default = false)

  /** A conf naming a fault point (tests only); empty for none. */
  private def faultPoint(key: String, what: String): ConfigEntry[String] = SQLConf.buildConf(key)
    .doc(s"txcommit (tests only): $what. Ignored unless the server started with " +
      s"${TxCommitConf.AllowFaultInjection}=true.")
    .version(Since)
    .stringConf
    .checkValues(HaltPoint.all.map(_.name).toSet + "")
    .createWithDefault("")

  val HALT_AT: ConfigEntry[String] = faultPoint(TxCommitConf.HaltAt,
    "halt the JVM at this named point of the protocol")

  val PAUSE_AT: ConfigEntry[String] = faultPoint(TxCommitConf.PauseAt,
    s"pause the thread that reaches this named point of the protocol for ${TxCommitConf.PauseMs} " +
      "ms, as a stalled driver would")

  val PAUSE_MS: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.PauseMs)
    .doc(s"txcommit (tests only): how long (ms) ${TxCommitConf.PauseAt} pauses.")
    .version(Since).longConf.checkValue(_ >= 0, "must be 0 or more").createWithDefault(30000L)

  val WRITE_ID: ConfigEntry[String] = SQLConf.buildConf(io.txcommit.commit.WriteIntent.WriteIdConf)
    .doc("txcommit: the write id of this session's writes (a writer's txcommit.writeId option " +
      "wins): a write with a write id replaces what earlier commits with that id added.")
    .version(Since).stringConf.createWithDefault("")

  val WRITE_ID_POLICY: ConfigEntry[String] = SQLConf.buildConf(io.txcommit.commit.WriteIntent.WriteIdPolicyConf)
    .doc("txcommit: what a write does when its write id is already committed: replace, skip or fail.")
    .version(Since).stringConf.transform(_.toLowerCase(java.util.Locale.ROOT))
    .checkValues(Set("replace", "skip", "fail")).createWithDefault("replace")

  val TRANSACTION: ConfigEntry[String] = SQLConf.buildConf(TxCommitConf.Group)
    .doc("txcommit: the multi-table transaction this session's writes belong to, set by TXCOMMIT BEGIN " +
      "and cleared by TXCOMMIT COMMIT or ROLLBACK (txcommit.transaction(spark) from Python): each write " +
      "prepares, and the transaction's COMMIT makes all of them visible at once.")
    .version(Since).stringConf.createWithDefault("")

  val TRANSACTION_LEASE_MS: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.GroupLeaseMs)
    .doc("txcommit: how long (ms) a multi-table transaction begun in this session may show no life (no " +
      "write running, between its writes or before its COMMIT) before a writer, VACUUM or a reader that " +
      "meets it may roll it back; its COMMIT then fails. A running write keeps it alive.")
    .version(Since).longConf.checkValue(_ >= 100, "must be 100 or more")
    .createWithDefault(TxCommitConf.DefaultGroupLeaseMs)

  val TRANSACTION_WAIT_MS: ConfigEntry[Long] = SQLConf.buildConf(TxCommitConf.GroupWaitMs)
    .doc("txcommit: how long (ms) an overwrite waits for a multi-table transaction that holds an undecided " +
      "overwrite of the same data before it fails with a conflict naming it.")
    .version(Since).longConf.checkValue(_ >= 0, "must be 0 or more")
    .createWithDefault(TxCommitConf.DefaultGroupWaitMs)

  /** Forces registration (Scala objects initialise lazily). */
  def register(): Unit = {
    Seq(READ_FILTER, LOG_FIRST, IGNORE_CORRUPT_RECORDS, MAX_CLOCK_SKEW_MS, TREE_LISTING_MAX_FILES, CHECKPOINT_INTERVAL,
      MANIFESTS, NEW_TABLE_READS, CLEANUP_ATTEMPTS, KEEP_ABORTED_FILES, HALT_AT,
      VERIFY_CONDITIONAL_PUT, WRITE_ID, WRITE_ID_POLICY, MAINTENANCE_JOB_THRESHOLD, CHECK_DATA_FILES, TRANSACTION,
      TRANSACTION_LEASE_MS, TRANSACTION_WAIT_MS)
    ()
  }
}
