package io.txcommit.commit

import org.apache.hadoop.fs.Path

import io.txcommit.{Paths, TaskFileMissingException}
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
   */
  def of(store: CommitStore, table: Path, attempt: String, written: Seq[(String, Path)]): TaskManifest =
    TaskManifest(attempt, written.map { case (rel, at) =>
      store.stagedFile(table, rel, at).getOrElse(throw new TaskFileMissingException(
        s"task attempt $attempt cannot find the file it wrote, ${Paths.display(at)}: something " +
          "deleted it while the job ran (a VACUUM with a short horizon, or a tool cleaning the " +
          "directory). The attempt fails and Spark retries it; nothing of it is committed. If " +
          "this repeats, stop whatever deletes files under the table while jobs write to it."))
    })
}
