package io.txcommit.streaming

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, TaskAttemptContext}
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.apache.spark.internal.io.FileNameSpec
import org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol

import io.txcommit.{CommitOutcomeUnknownException, Paths, UnsupportedWriteException}
import io.txcommit.commit._
import io.txcommit.log.{AddedFile, LogLayout, TxnId}
import io.txcommit.store.{Adapters, StagedFile}
import io.txcommit.streaming.SparkStreamingApi.{FileStreamSinkLog, SinkFileStatus}

/**
 * The streaming file sink's commit protocol (`spark.sql.streaming.commitProtocolClass`): each
 * micro-batch is one txcommit transaction, and Spark's `_spark_metadata` log keeps working
 * (Spark requires a [[ManifestFileCommitProtocol]] there, or the sink log stays empty).
 *
 * Tasks write files named `part-NNNNN-tid-<txn>-<attempt>...` in place (or, on
 * `s3-multipart`, as uploads completed at commit). The batch commit is [[JobCommitter]]'s, as
 * for a batch job, with a [[MicroBatch]]'s two steps (1 and 3), in this order:
 *
 *  1. claim the batch for this txn ([[ClaimStreamingBatch]]: exclusive claims
 *     `_txcommit/streaming/<batch>/<k>.json`; an earlier claimer that did not commit is fenced
 *     first), then publish staged data (multipart completions);
 *  2. create the commit record `_txcommit/commits/<txn>.json` exclusively: txcommit readers
 *     now see the batch, whole. A stalled driver whose claim was taken over finds its commit
 *     point fenced and fails: one batch, one commit;
 *  3. add the batch to `_spark_metadata` (through the checkpoint file manager, exclusively):
 *     Spark's sink readers now see it, and a replay of the batch is skipped by Spark.
 *
 * A crash before 2 leaves files no record names (hidden); Spark replays the batch under a new
 * txn. A crash between 2 and 3: Spark replays the batch (its sink log lacks it); the replay
 * finds the marker, sees the earlier txn committed, discards its own files and adds the
 * EARLIER txn's files to `_spark_metadata`, so both views show the same files exactly once.
 * docs/streaming.md explains why this order and not the other.
 */
class TxCommitSinkProtocol(jobId: String, path: String) extends ManifestFileCommitProtocol(jobId, path) {
  private val table = new Path(path)
  private val txn: String = TxnId.generate()
  private val token: String = UUID.randomUUID().toString
  private val startedAt: Long = System.currentTimeMillis()

  @transient private var sinkLog: FileStreamSinkLog = _
  private var batchId: Long = -1L

  /** Set when the commit record's publish ended with no answer: abort must then keep the files. */
  @volatile @transient private var outcomeUnknown = false

  /** Driver side: files of task attempts that committed (for abort clean-up). */
  @transient private lazy val committedByTasks = ArrayBuffer.empty[StagedFile]
  private val tasks = new TaskWrites(table, txn, "sink")

  override def setupManifestOptions(fileLog: FileStreamSinkLog, batchId: Long): Unit = {
    super.setupManifestOptions(fileLog, batchId)
    this.sinkLog = fileLog
    this.batchId = batchId
  }

  private def context(jc: JobContext): TxnContext = {
    val conf = jc.getConfiguration
    TxnContext(table, txn, token, s"streaming-batch-$batchId", startedAt, conf, Adapters.open(table, conf))
  }

  override def setupJob(jobContext: JobContext): Unit = {
    super.setupJob(jobContext) // checks setupManifestOptions ran
    JobSetup.run(context(jobContext), WriteIntent(), streaming = true)
    logDebug(s"txcommit: streaming batch $batchId of ${Paths.display(table)} is txn $txn")
  }

  override def setupTask(taskContext: TaskAttemptContext): Unit = tasks.setup()

  override def newTaskTempFile(taskContext: TaskAttemptContext, dir: Option[String], spec: FileNameSpec): String =
    tasks.newFile(taskContext, dir, spec)

  override def newTaskTempFileAbsPath(taskContext: TaskAttemptContext, absoluteDir: String, spec: FileNameSpec)
      : String =
    throw new UnsupportedWriteException(s"the streaming sink to ${Paths.display(table)} cannot write " +
      s"outside its directory ($absoluteDir)")

  // Spark 4.0's writers call the extension overloads, which ManifestFileCommitProtocol
  // implements with its own file names: route them through the txcommit ones above.
  override def newTaskTempFile(taskContext: TaskAttemptContext, dir: Option[String], ext: String): String =
    newTaskTempFile(taskContext, dir, FileNameSpec("", ext))

  override def newTaskTempFileAbsPath(taskContext: TaskAttemptContext, absoluteDir: String, ext: String): String =
    newTaskTempFileAbsPath(taskContext, absoluteDir, FileNameSpec("", ext))

  override def commitTask(taskContext: TaskAttemptContext): TaskCommitMessage = tasks.commit(taskContext)

  override def abortTask(taskContext: TaskAttemptContext): Unit = tasks.abort(taskContext)

  override def onTaskCommit(taskCommit: TaskCommitMessage): Unit = taskCommit.obj match {
    case m: TaskManifest => committedByTasks.synchronized { committedByTasks ++= m.files }
    case _ => ()
  }

  override def commitJob(jobContext: JobContext, taskCommits: Seq[TaskCommitMessage]): Unit = {
    require(sinkLog != null, "setupManifestOptions must be called before commitJob")
    val ctx = context(jobContext)
    // A micro-batch appends; the writer's schema options apply to it as to a batch append.
    val intent = WriteIntent(mergeSchema = WriteIntent.mergeSchema(ctx.conf),
      enforceNotNull = WriteIntent.enforceNotNull(ctx.conf))
    try JobCommitter.commit(ctx, taskCommits, intent, kind = new MicroBatch(table, batchId, addToSinkLog))
    catch { case e: CommitOutcomeUnknownException => outcomeUnknown = true; throw e }
  }

  private def addToSinkLog(files: Seq[AddedFile]): Unit = {
    val now = System.currentTimeMillis()
    val statuses = files.map { f =>
      SinkFileStatus(new Path(table, f.path).toUri.toString, f.size, false, now, 1, 0L, FileStreamSinkLog.ADD_ACTION)
    }.toArray
    if (!sinkLog.add(batchId, statuses)) {
      throw new IllegalStateException(s"Race while writing batch $batchId of ${Paths.display(table)}")
    }
  }

  override def abortJob(jobContext: JobContext): Unit =
    scala.util.Try(context(jobContext)) match {
      case scala.util.Success(ctx) =>
        AbortTransaction.unlessOutcomeUnknown(ctx, outcomeUnknown,
          committedByTasks.synchronized(committedByTasks.toList))
      case scala.util.Failure(e) =>
        logWarning(s"txcommit: txn $txn on ${Paths.display(table)}: nothing to abort (${e.getMessage})")
    }
}

object TxCommitSinkProtocol {
  private val mapper = new ObjectMapper()

  /** `<sink>/_txcommit/streaming/<batch>.json`: which txn a batch used, as versions before batch
   *  claims wrote it (read to adopt such a commit on replay). */
  def markerPath(table: Path, batchId: Long): Path = LogLayout(table).batchMarker(batchId)

  def markerBytes(batchId: Long, txn: String): Array[Byte] =
    s"""{"format":"txcommit-streaming-batch","batch":$batchId,"txn":"$txn"}""".getBytes(UTF_8)

  def markerTxn(bytes: Array[Byte]): Option[String] =
    try Option(mapper.readTree(bytes).get("txn")).filter(_.isTextual).map(_.asText()).filter(TxnId.isValid)
    catch { case NonFatal(_) => None }
}
