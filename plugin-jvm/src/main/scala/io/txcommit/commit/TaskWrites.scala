package io.txcommit.commit

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapreduce.{JobContext, OutputCommitter, TaskAttemptContext}
import org.apache.spark.TaskContext
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.apache.spark.internal.io.FileNameSpec
import org.apache.spark.mapred.SparkHadoopMapRedUtil
import org.slf4j.LoggerFactory

import io.txcommit.{Paths, UnsupportedWriteException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.DataFileName
import io.txcommit.store.{Adapters, CommitStore, Links, WrittenFiles}

/**
 * The task side of one transaction, shared by the batch and the streaming protocol: names each
 * data file with the transaction and the attempt, writes it where the store says (in place, or
 * as an upload completed at job commit), and commits the attempt with a [[TaskManifest]] of its
 * files once Spark's output commit coordinator allows it, or discards them on abort. Nothing is
 * moved. Created on the driver with the protocol and serialised with it; what an attempt wrote
 * lives on its executor only.
 *
 * @param where how errors name the directory written ("table", "sink")
 */
final class TaskWrites(table: Path, txn: String, where: String) extends Serializable {
  @transient private var written: ArrayBuffer[(String, Path)] = _
  @transient private var taskStore: CommitStore = _
  @transient private var ownDirs: mutable.Set[String] = _

  def setup(): Unit = {
    written = ArrayBuffer.empty
    taskStore = null
    ownDirs = null
  }

  /** Where the task writes its next data file, in directory `dir` of the table. */
  def newFile(taskContext: TaskAttemptContext, dir: Option[String], spec: FileNameSpec): String = {
    val split = taskContext.getTaskAttemptID.getTaskID.getId
    val name = DataFileName(spec.prefix, split, txn, attemptId(taskContext), spec.suffix)
    val rel = dir.filter(_.nonEmpty).map(d => s"$d/$name").getOrElse(name)
    Paths.unsafeRelativePath(rel).foreach { why =>
      throw new UnsupportedWriteException(
        s"output file '$rel' of ${Paths.display(table)} is not inside the $where directory ($why)")
    }
    dir.filter(_.nonEmpty).foreach(checkOwn(taskContext, _))
    val at = store(taskContext).dataWritePath(table, new Path(table, rel), txn, taskContext.getTaskAttemptID.toString)
    written += rel -> at
    at.toString
  }

  /** The attempt's manifest; only one attempt per partition gets it (CommitDeniedException). */
  def commit(taskContext: TaskAttemptContext): TaskCommitMessage = {
    val attempt = taskContext.getTaskAttemptID
    val manifest = TaskManifest.of(store(taskContext), table, txn, attempt.toString, files)
    SparkHadoopMapRedUtil.commitTask(TaskWrites.Authorizer, taskContext, attempt.getJobID.getId,
      attempt.getTaskID.getId)
    forgetWritten() // a commit that failed leaves them to the abort, which discards the files
    new TaskCommitMessage(manifest)
  }

  /** Forgets what the attempt wrote (unless the test conf keeps aborted files): hidden anyway. */
  def abort(taskContext: TaskAttemptContext): Unit =
    try {
      if (!TxCommitConf.bool(taskContext.getConfiguration, TxCommitConf.KeepAbortedFiles, default = false)) {
        files.foreach { case (rel, at) =>
          try {
            val s = store(taskContext)
            s.stagedFile(table, rel, at).foreach(f => s.discardData(table, Seq(f)))
          } catch {
            case NonFatal(e) => TaskWrites.log.warn(s"txcommit: could not discard aborted file $rel: ${e.getMessage}")
          }
        }
      }
    } finally forgetWritten()

  /** What this JVM's writers recorded of the attempt's files ([[WrittenFiles]]) is not kept past it. */
  private def forgetWritten(): Unit = files.foreach { case (_, at) => WrittenFiles.take(at) }

  /**
   * Refuses a file in a directory of the table that is a link, before the file exists (I18): its
   * file would lie where the link leads, out of reach of the table's VACUUM, or in another table,
   * whose VACUUM would take it for never committed; a link to another directory of the table
   * would show it twice. Once per directory and task: one `lstat` per directory name locally.
   */
  private def checkOwn(taskContext: TaskAttemptContext, dir: String): Unit = {
    if (ownDirs == null) ownDirs = mutable.HashSet.empty
    if (!ownDirs.contains(dir)) {
      val fs = table.getFileSystem(taskContext.getConfiguration)
      if (Links.followed(fs)) Links.linkBelow(fs, table, dir).foreach { case (at, to) =>
        throw new UnsupportedWriteException(s"the write to ${Paths.display(table)} puts files in " +
          s"${Links.describe(fs, at, to)}: txcommit writes a table's files only in directories of its " +
          "own, where its log and its VACUUM find them (through a link they could land in another " +
          "table, whose VACUUM would delete them as never committed). Nothing was written there. " +
          s"Replace the link with a directory, or write to ${Paths.display(to)} as a table of its own.")
      }
      ownDirs += dir
    }
  }

  private def files: Seq[(String, Path)] = Option(written).toSeq.flatten

  private def store(taskContext: TaskAttemptContext): CommitStore = {
    if (taskStore == null) taskStore = Adapters.open(table, taskContext.getConfiguration)
    taskStore
  }

  /** Spark's unique task attempt id when running in a task, else the Hadoop attempt number. */
  private def attemptId(taskContext: TaskAttemptContext): Long =
    Option(TaskContext.get()).map(_.taskAttemptId()).getOrElse(taskContext.getTaskAttemptID.getId.toLong)
}

object TaskWrites {
  private val log = LoggerFactory.getLogger(classOf[TaskWrites])

  /** A Hadoop committer that only asks Spark's output commit coordinator for permission: the
   *  data is already in place, so there is nothing to move. */
  private object Authorizer extends OutputCommitter {
    override def setupJob(jobContext: JobContext): Unit = ()
    override def setupTask(taskContext: TaskAttemptContext): Unit = ()
    override def needsTaskCommit(taskContext: TaskAttemptContext): Boolean = true
    override def commitTask(taskContext: TaskAttemptContext): Unit = ()
    override def abortTask(taskContext: TaskAttemptContext): Unit = ()
  }
}
