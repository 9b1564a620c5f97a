package io.txcommit.spark

import java.util.UUID

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.mapreduce.{JobContext, OutputCommitter, TaskAttemptContext}
import org.apache.spark.TaskContext
import org.apache.spark.internal.io.{FileCommitProtocol, FileNameSpec}
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.apache.spark.mapred.SparkHadoopMapRedUtil

import io.txcommit.{CommitOutcomeUnknownException, Paths, UnsupportedWriteException}
import io.txcommit.commit._
import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{DataFileName, TableState, TxnId}
import io.txcommit.store.{Adapters, CommitStore, StagedFile}

/**
 * The txcommit commit protocol (`spark.sql.sources.commitProtocolClass`).
 *
 * Tasks write data files straight to their final directory, named with the transaction id and
 * the task attempt id; nothing is staged or renamed. The job commits by creating ONE commit
 * record exclusively through the store's primitive; readers show a txcommit file only when
 * its transaction's record names it. See docs/protocol.md for the invariants.
 *
 * Overwrites do not delete anything: Spark's `deleteWithJob` (static overwrite, called before
 * `setupJob`) only records the overwritten directories, and a dynamic partition overwrite
 * replaces the partition directories it writes; the commit then logically deletes the old
 * files in its record (a replacing commit, `_txcommit/replace/`), all at once.
 */
class TxCommitProtocol(jobId: String, path: String, dynamicPartitionOverwrite: Boolean)
  extends FileCommitProtocol with Serializable {

  private val table = new Path(path)
  private val txn: String = TxnId.generate()
  private val token: String = UUID.randomUUID().toString
  private val startedAt: Long = System.currentTimeMillis()

  /** Driver side: files of task attempts that committed (for abort clean-up). */
  @transient private lazy val committedByTasks = ArrayBuffer.empty[StagedFile]

  /** Executor side: files this task attempt was given: (relative path, path written). */
  @transient private var taskFiles: ArrayBuffer[(String, Path)] = _

  /** Executor side: the store this task attempt writes through. */
  @transient private var taskStore: CommitStore = _

  /** Driver side: directories Spark asked to delete for a static overwrite (before setupJob). */
  @transient private lazy val overwriteScopes = ArrayBuffer.empty[String]

  /** Driver side, set by setupJob: what the job replaces, and what it saw when it started. */
  @transient private var intent: WriteIntent = WriteIntent()
  @transient private var base: ReplaceBase = ReplaceBase(0L, Set.empty)

  /** Set when the job commit could not tell whether its record was created: abort keeps every file. */
  @transient private var heartbeat: Option[TxnHeartbeat] = None
  @volatile @transient private var outcomeUnknown: Option[CommitOutcomeUnknownException] = None

  /** Driver side, set by setupJob: whether this job creates the table's log (its first write). */
  @transient private var nesting: NestingSeen = NestingSeen(createsTable = false)

  /** Set when the job commit found a second log on its path: abort removes the log it created. */
  @volatile @transient private var nestingRefused: Boolean = false

  private def context(jc: JobContext): TxnContext = {
    val conf = jc.getConfiguration
    TxnContext(table, txn, token, jobId, startedAt, conf, Adapters.open(table, conf))
  }

  /**
   * Static overwrite (`mode("overwrite")`, `INSERT OVERWRITE ... [PARTITION (k=v)]`): Spark
   * calls this on the driver BEFORE setupJob, to clear the table or the static partition. Nothing
   * is deleted: the directory becomes the scope of this job's replacing commit, whose record
   * logically deletes the old files at the commit point (readers see the old data until then).
   */
  override def deleteWithJob(fs: FileSystem, target: Path, recursive: Boolean): Boolean = {
    val root = table.toUri.getPath.stripSuffix("/")
    val dir = fs.makeQualified(target).toUri.getPath.stripSuffix("/")
    val scope =
      if (dir == root) ""
      else Paths.relativize(table, new Path(dir)).getOrElse(throw new UnsupportedWriteException(
          s"the overwrite of ${Paths.display(table)} would delete ${Paths.display(target)}, outside " +
            "the table directory (a custom partition location), which txcommit cannot replace " +
            "atomically. Disable txcommit for this write (txcommit.disable(spark)) or drop the " +
            "custom location."))
    logInfo(s"txcommit: txn $txn on ${Paths.display(table)}: overwrite of " +
      s"${if (scope.isEmpty) "the whole table" else scope} recorded; old files stay visible " +
      "until the commit, which removes them logically")
    overwriteScopes.synchronized { overwriteScopes += scope }
    true
  }

  override def setupJob(jobContext: JobContext): Unit = {
    val conf = jobContext.getConfiguration
    TxCommitConf.haltAt(conf) // validate early: a bad value fails the job before any write
    TxCommitConf.bool(conf, TxCommitConf.CleanupAttempts, default = true)
    TxCommitConf.bool(conf, TxCommitConf.KeepAbortedFiles, default = false)
    TxCommitConf.heartbeatIntervalMs(conf)
    intent = WriteIntent(
      staticScopes = overwriteScopes.synchronized(overwriteScopes.toList),
      dynamicPartitions = dynamicPartitionOverwrite,
      writeId = WriteIntent.writeId(conf),
      policy = WriteIntent.policy(conf),
      mergeSchema = WriteIntent.mergeSchema(conf),
      enforceNotNull = WriteIntent.enforceNotNull(conf))
    val ctx = context(jobContext)
    val timings = new StageTimings
    nesting = CheckTableNesting.run(ctx, (), timings)
    HaltPoint.maybeHalt(conf, HaltPoint.JobAfterNestingCheck)
    if (intent.isReplacing && !nesting.createsTable) CheckReplaceScope.run(ctx,
      if (intent.dynamicPartitions || intent.writeId.isDefined) Seq("") else intent.staticScopes, timings)
    RollForwardReplacements.run(ctx, (), timings)
    RollForward.run(ctx, (), timings)
    if (intent.isReplacing) {
      if (intent.policy == WriteIdPolicy.Fail) CheckWriteId.run(ctx, intent, timings)
      val state = new TableState(table, ctx.store, conf)
      base = ReplaceBase(state.replaceLog.highest, state.commitTxns)
    }
    StartTransaction.run(ctx, intent.isReplacing, timings)
    heartbeat = Some(TxnHeartbeat.start(ctx, intent.isReplacing, TxCommitConf.heartbeatIntervalMs(conf)))
    logInfo(s"txcommit: ${ctx.describe}: started (Spark job $jobId, ${intent.operation}" +
      intent.writeId.map(w => s", write id '$w'").getOrElse("") +
      (if (intent.isReplacing) s", after replacement sequence ${base.sequence}" else "") + ")")
  }

  override def newTaskTempFile(
      taskContext: TaskAttemptContext, dir: Option[String], spec: FileNameSpec): String = {
    val split = taskContext.getTaskAttemptID.getTaskID.getId
    val name = DataFileName(spec.prefix, split, txn, attemptId(taskContext), spec.suffix)
    val rel = dir.filter(_.nonEmpty).map(d => s"$d/$name").getOrElse(name)
    Paths.unsafeRelativePath(rel).foreach { why =>
      throw new UnsupportedWriteException(s"output file '$rel' of ${Paths.display(table)} is " +
        s"not inside the table directory ($why)")
    }
    val written = store(taskContext).dataWritePath(
      table, new Path(table, rel), txn, taskContext.getTaskAttemptID.toString)
    taskFiles += rel -> written
    written.toString
  }

  override def newTaskTempFile(
      taskContext: TaskAttemptContext, dir: Option[String], ext: String): String =
    newTaskTempFile(taskContext, dir, FileNameSpec("", ext))

  override def newTaskTempFileAbsPath(
      taskContext: TaskAttemptContext, absoluteDir: String, spec: FileNameSpec): String =
    throw new UnsupportedWriteException(
      s"the write to ${Paths.display(table)} puts files in a custom partition location " +
        s"($absoluteDir), outside the table directory, which txcommit cannot commit atomically. " +
        "Disable txcommit for this write (txcommit.disable(spark)) or drop the custom location.")

  override def newTaskTempFileAbsPath(
      taskContext: TaskAttemptContext, absoluteDir: String, ext: String): String =
    newTaskTempFileAbsPath(taskContext, absoluteDir, FileNameSpec("", ext))

  override def setupTask(taskContext: TaskAttemptContext): Unit = {
    taskFiles = ArrayBuffer.empty
    taskStore = null
  }

  override def commitTask(taskContext: TaskAttemptContext): TaskCommitMessage = {
    val conf = taskContext.getConfiguration
    HaltPoint.maybeHalt(conf, HaltPoint.TaskBeforeCommit)
    // Only one attempt per partition may commit: Spark's output commit coordinator decides,
    // and a denied attempt fails with CommitDeniedException (its files stay hidden).
    val attempt = taskContext.getTaskAttemptID
    val manifest = TaskManifest.of(store(taskContext), table, attempt.toString, Option(taskFiles).toSeq.flatten)
    SparkHadoopMapRedUtil.commitTask(
      TxCommitProtocol.Authorizer, taskContext, attempt.getJobID.getId, attempt.getTaskID.getId)
    new TaskCommitMessage(manifest)
  }

  override def abortTask(taskContext: TaskAttemptContext): Unit = {
    val conf = taskContext.getConfiguration
    if (!TxCommitConf.bool(conf, TxCommitConf.KeepAbortedFiles, default = false)) {
      Option(taskFiles).toSeq.flatten.foreach { case (rel, written) =>
        try {
          val s = store(taskContext)
          s.stagedFile(table, rel, written).foreach(f => s.discardData(table, Seq(f)))
        } catch {
          case e: Exception => logWarning(s"txcommit: could not discard aborted file $rel: ${e.getMessage}")
        }
      }
    }
  }

  override def onTaskCommit(taskCommit: TaskCommitMessage): Unit = taskCommit.obj match {
    case m: TaskManifest => committedByTasks.synchronized { committedByTasks ++= m.files }
    case _ => ()
  }

  override def commitJob(jobContext: JobContext, taskCommits: Seq[TaskCommitMessage]): Unit = {
    stopHeartbeat() // the commit runs minutes at most; VACUUM's horizon is an hour or more
    val ctx = context(jobContext)
    try RecheckTableNesting.run(ctx, nesting, new StageTimings)
    catch { case e: UnsupportedWriteException => nestingRefused = true; throw e }
    val committed =
      try JobCommitter.commit(ctx, taskCommits, intent, base)
      catch { case e: CommitOutcomeUnknownException => outcomeUnknown = Some(e); throw e }
    committed.foreach(r => org.apache.spark.sql.txcommit.RowCounts.committed(table, r.txn, jobContext.getConfiguration))
  }

  private def stopHeartbeat(): Unit = { heartbeat.foreach(_.stop()); heartbeat = None }

  override def abortJob(jobContext: JobContext): Unit = {
    stopHeartbeat()
    // If the job failed because its store is unusable, there is nothing to abort; never let
    // abort's own error hide the one that failed the job.
    scala.util.Try(context(jobContext)) match {
      case scala.util.Success(ctx) =>
        val files = committedByTasks.synchronized(committedByTasks.toList)
        AbortTransaction.unlessOutcomeUnknown(ctx, outcomeUnknown.isDefined, files)
        if (nestingRefused && nesting.createsTable) RemoveCreatedLog.run(ctx, (), new StageTimings)
      case scala.util.Failure(e) =>
        logWarning(s"txcommit: txn $txn on ${Paths.display(table)}: nothing to abort (${e.getMessage})")
    }
  }

  private def store(taskContext: TaskAttemptContext): CommitStore = {
    if (taskStore == null) taskStore = Adapters.open(table, taskContext.getConfiguration)
    taskStore
  }

  /** Spark's unique task attempt id when running in a task, else the Hadoop attempt number. */
  private def attemptId(taskContext: TaskAttemptContext): Long =
    Option(TaskContext.get()).map(_.taskAttemptId())
      .getOrElse(taskContext.getTaskAttemptID.getId.toLong)
}

object TxCommitProtocol {

  /**
   * A Hadoop committer that only asks Spark's output commit coordinator for permission: the
   * data is already in place, so there is nothing to move.
   */
  private object Authorizer extends OutputCommitter {
    override def setupJob(jobContext: JobContext): Unit = ()
    override def setupTask(taskContext: TaskAttemptContext): Unit = ()
    override def needsTaskCommit(taskContext: TaskAttemptContext): Boolean = true
    override def commitTask(taskContext: TaskAttemptContext): Unit = ()
    override def abortTask(taskContext: TaskAttemptContext): Unit = ()
  }
}
