package io.txcommit.commit

import java.util.concurrent.{Executors, ThreadFactory}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import org.apache.hadoop.fs.Path

import io.txcommit.{Paths, TaskFileMissingException, TxCommitException}
import io.txcommit.log.{LogLayout, RecordCodec}
import io.txcommit.store.{CommitStore, StagedFile}

/** What one committed task attempt wrote: sent from the executor to the driver. */
final case class TaskManifest(attempt: String, files: Seq[StagedFile])

object TaskManifest {

  /**
   * The manifest of task attempt `attempt`, which wrote `written` (each file's path relative to
   * `table` and where it was written). Every file Spark opened is created on open, so one the
   * store cannot find was deleted under the task: the attempt fails (Spark retries it) rather
   * than commit a manifest without it, which would commit fewer rows than the job wrote. Built
   * before the task asks to commit, so a failure here is an ordinary task failure.
   *
   * When VACUUM deleted it after fencing the transaction (or another driver fenced it), the
   * whole job is lost, whatever Spark's task retries would do: the attempt fails with the
   * fence's error ([[io.txcommit.FencedException]]), so a job without task retries says it was
   * fenced, as one with them does at its commit point.
   */
  def of(store: CommitStore, table: Path, txn: String, attempt: String, written: Seq[(String, Path)]): TaskManifest =
    TaskManifest(attempt,
      inParallel(written) { case (rel, at) =>
        store.stagedFile(table, rel, at).getOrElse(throw fenced(store, table, txn).getOrElse(
            new TaskFileMissingException(
              s"task attempt $attempt cannot find the file it wrote, ${Paths.display(at)}: something " +
                "deleted it while the job ran (a VACUUM with a short horizon, or a tool cleaning the " +
                "directory). The attempt fails and Spark retries it; nothing of it is committed. If " +
                "this repeats, stop whatever deletes files under the table while jobs write to it.")))
      })

  /** The fence's error when `txn` was fenced: its append commit point holds a fence record. */
  private def fenced(store: CommitStore, table: Path, txn: String): Option[TxCommitException] = {
    val layout = LogLayout(table)
    val at = layout.commitRecord(txn)
    store.read(at).map(b => RecordCodec.decode(b, Paths.display(at), txn)).filter(_.isFence).map { fence =>
      io.txcommit.metrics.TxCommitMetrics.fencedJobs.inc()
      RecordOwner.taken(s"txn $txn on ${Paths.display(table)}", fence, Paths.display(at))
    }
  }

  /** Stat requests in flight at once per executor JVM, across its tasks. */
  val StatThreads = 32

  // A task of a partitioned write holds one file per directory: on an object store one
  // request each, which in turn would add a round trip per file to the task's time.
  private lazy val stats: ExecutionContext = ExecutionContext.fromExecutorService(
    Executors.newFixedThreadPool(StatThreads,
      new ThreadFactory {
        override def newThread(r: Runnable): Thread = {
          val t = new Thread(r, "txcommit-task-stat")
          t.setDaemon(true)
          t
        }
      }))

  private def inParallel[A, B](items: Seq[A])(f: A => B): Seq[B] =
    if (items.size <= 1) items.map(f)
    else Await.result(Future.traverse(items)(a => Future(f(a))(stats))(implicitly, stats), Duration.Inf)
}
