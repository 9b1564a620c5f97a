package io.txcommit.spark

import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.util.Try

import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.spark.internal.io.{FileCommitProtocol, FileNameSpec}
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage

import io.txcommit.{CommitOutcomeUnknownException, Paths, UnsupportedWriteException}
import io.txcommit.commit._
import io.txcommit.fault.HaltPoint
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{GroupRef, Groups, TxnId}
import io.txcommit.manifest.ManifestSwitch
import io.txcommit.store.{Adapters, StagedFile}

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

  /** The task side: data file names, each attempt's files, its commit and abort. */
  private val tasks = new TaskWrites(table, txn, "table")

  /** Driver side: directories Spark asked to delete for a static overwrite (before setupJob). */
  @transient private lazy val overwriteScopes = ArrayBuffer.empty[String]

  /** Driver side, set by setupJob: what the job replaces, and what it saw when it started. */
  @transient private var intent: WriteIntent = WriteIntent()
  @transient private var base: ReplaceBase = ReplaceBase(0L, Set.empty)

  /** Set when the job commit could not tell whether its record was created: abort keeps every file. */
  @transient private var heartbeat: Option[TxnHeartbeat] = None
  @volatile @transient private var outcomeUnknown: Option[CommitOutcomeUnknownException] = None

  /**
   * Driver side, set by setupJob when the session has a multi-table transaction open
   * (`spark.txcommit.transaction`, set by TXCOMMIT BEGIN): the job publishes a prepared record,
   * which the transaction's decision commits with the others (docs/protocol.md, I33).
   */
  @transient private var group: Option[(OpenGroup, GroupRef)] = None
  @transient private var groupEnded: Boolean = false

  private def context(jc: JobContext): TxnContext = {
    val conf = jc.getConfiguration
    TxnContext(table, txn, token, jobId, startedAt, conf, Adapters.open(table, conf), group.map(_._2))
  }

  /** This job is done with its transaction: prepared (`failed` None) or failed. Once. */
  private def endGroupJob(failed: Option[String]): Unit = group.foreach { case (g, _) =>
    if (!groupEnded) { groupEnded = true; g.ended(failed) }
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
    if (dir == root && Try(fs.getFileStatus(target)).toOption.exists(_.isFile)) {
      // The path is a plain file, no table: nothing to replace atomically. Spark's own protocol
      // deletes it at this point, and a table is a directory, so the file goes first here too.
      logWarning(s"txcommit: txn $txn: the overwrite of ${Paths.display(table)} replaces a plain file " +
        "(not a table) with a table: the file is deleted now, as Spark's own commit protocol does")
      return fs.delete(target, false)
    }
    val scope =
      if (dir == root) ""
      else Paths.relativize(table, new Path(dir)).getOrElse(throw new UnsupportedWriteException(
          s"the overwrite of ${Paths.display(table)} would delete ${Paths.display(target)}, outside " +
            "the table directory (a custom partition location), which txcommit cannot replace " +
            "atomically. Disable txcommit for this write (txcommit.disable(spark)) or drop the " +
            "custom location."))
    logDebug(s"txcommit: txn $txn on ${Paths.display(table)}: overwrite of " +
      s"${if (scope.isEmpty) "the whole table" else scope} recorded; old files stay visible " +
      "until the commit, which removes them logically")
    overwriteScopes.synchronized { overwriteScopes += scope }
    true
  }

  override def setupJob(jobContext: JobContext): Unit = {
    val conf = jobContext.getConfiguration
    intent = WriteIntent(
      staticScopes = overwriteScopes.synchronized(overwriteScopes.toList),
      dynamicPartitions = dynamicPartitionOverwrite,
      writeId = WriteIntent.writeId(conf),
      policy = WriteIntent.policy(conf),
      mergeSchema = WriteIntent.mergeSchema(conf),
      enforceNotNull = WriteIntent.enforceNotNull(conf))
    // Read now, so a bad txcommit.manifests value fails the job before it writes anything.
    val manifests = ManifestSwitch.option(conf)
    group = Option(conf.get(TxCommitConf.Group)).map(_.trim).filter(_.nonEmpty).map { id =>
      val g = OpenGroups.forWrite(id)
      (g, g.join(table, conf, Adapters.open(table, conf)))
    }
    val ctx = context(jobContext)
    val started =
      try JobSetup.run(ctx, intent, streaming = false)
      catch { case e: Throwable => endGroupJob(Some(s"setup of ${ctx.describe}: ${e.getMessage}")); throw e }
    base = started.base
    heartbeat = started.heartbeat
    logDebug(s"txcommit: ${ctx.describe}: started (Spark job $jobId, ${intent.operation}" +
      intent.writeId.map(w => s", write id '$w'").getOrElse("") +
      (if (intent.isReplacing) s", after replacement sequence ${base.sequence}" else "") +
      manifests.fold("")(on => s", manifests ${if (on) "on" else "off"} for this write") + ")")
  }

  override def newTaskTempFile(
      taskContext: TaskAttemptContext, dir: Option[String], spec: FileNameSpec): String =
    tasks.newFile(taskContext, dir, spec)

  override def newTaskTempFile(
      taskContext: TaskAttemptContext, dir: Option[String], ext: String): String =
    newTaskTempFile(taskContext, dir, FileNameSpec("", ext))

  /**
   * A partition with a custom location: inside the table directory, a file there is the table's
   * like any other; outside, a write is refused when its statement is analysed
   * ([[CustomLocationWrites]]), and this is the last line for a write that got past it.
   */
  override def newTaskTempFileAbsPath(
      taskContext: TaskAttemptContext, absoluteDir: String, spec: FileNameSpec): String = {
    val at = new Path(absoluteDir)
    val qualified = at.getFileSystem(taskContext.getConfiguration).makeQualified(at)
    TxCommitProtocol.inside(table.getFileSystem(taskContext.getConfiguration).makeQualified(table), qualified) match {
      case Some(rel) => tasks.newFile(taskContext, Some(rel), spec)
      case None => throw new UnsupportedWriteException(
          s"the write to ${Paths.display(table)} puts files in a custom partition location " +
            s"(${Paths.display(at)}), outside the table directory, which txcommit cannot commit atomically. " +
            "Disable txcommit for this write (txcommit.disable(spark)) or drop the custom location.")
    }
  }

  override def newTaskTempFileAbsPath(
      taskContext: TaskAttemptContext, absoluteDir: String, ext: String): String =
    newTaskTempFileAbsPath(taskContext, absoluteDir, FileNameSpec("", ext))

  override def setupTask(taskContext: TaskAttemptContext): Unit = tasks.setup()

  override def commitTask(taskContext: TaskAttemptContext): TaskCommitMessage = {
    HaltPoint.maybeHalt(taskContext.getConfiguration, HaltPoint.TaskBeforeCommit)
    // Only one attempt per partition may commit: Spark's output commit coordinator decides,
    // and a denied attempt fails with CommitDeniedException (its files stay hidden).
    tasks.commit(taskContext)
  }

  override def abortTask(taskContext: TaskAttemptContext): Unit = tasks.abort(taskContext)

  override def onTaskCommit(taskCommit: TaskCommitMessage): Unit = taskCommit.obj match {
    case m: TaskManifest => committedByTasks.synchronized { committedByTasks ++= m.files }
    case _ => ()
  }

  override def commitJob(jobContext: JobContext, taskCommits: Seq[TaskCommitMessage]): Unit = {
    stopHeartbeat() // the commit runs minutes at most; VACUUM's horizon is an hour or more
    val ctx = context(jobContext)
    // The commit's INFO line waits for the rows Spark counts once the write returns.
    val report: CommitReport = line =>
      org.apache.spark.sql.txcommit.RowCounts.committed(table, line,
        jobContext.getConfiguration)
    val committed =
      try JobCommitter.commit(ctx, taskCommits, intent, base, report = report)
      catch { case e: CommitOutcomeUnknownException => outcomeUnknown = Some(e); throw e }
    group.foreach { case (g, ref) =>
      committed.filter(_.isPrepared).foreach(r => g.add(ctx, r))
      g.store.foreach(Groups.renewLease(ref, _))
      endGroupJob(None)
    }
  }

  private def stopHeartbeat(): Unit = { heartbeat.foreach(_.stop()); heartbeat = None }

  override def abortJob(jobContext: JobContext): Unit = {
    stopHeartbeat()
    endGroupJob(Some(s"txn $txn on ${Paths.display(table)} aborted"))
    // If the job failed because its store is unusable, there is nothing to abort; never let
    // abort's own error hide the one that failed the job.
    scala.util.Try(context(jobContext)) match {
      case scala.util.Success(ctx) =>
        val files = committedByTasks.synchronized(committedByTasks.toList)
        AbortTransaction.unlessOutcomeUnknown(ctx, outcomeUnknown.isDefined, files)
      case scala.util.Failure(e) =>
        logWarning(s"txcommit: txn $txn on ${Paths.display(table)}: nothing to abort (${e.getMessage})")
    }
  }
}

object TxCommitProtocol {

  /** `dir` relative to the table `root` (both qualified), when it lies strictly inside it on the same store. */
  def inside(root: Path, dir: Path): Option[String] =
    if (root.toUri.getScheme != dir.toUri.getScheme || root.toUri.getAuthority != dir.toUri.getAuthority) None
    else Paths.relativize(root, dir)
}
