package io.txcommit.store

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.fs.Path

/**
 * The data files this JVM's writers closed and the store acknowledged, by the path they were
 * written at ([[DataFileSystem]]): each file's byte count, counted by the writer, and where a
 * store stages data, what publishes it. The task's manifest takes each file from here
 * (`CommitStore.stagedFile`), and the answer to Spark's statistics tracker, which asks each
 * file's size after closing it, comes from here too: neither asks the store again.
 *
 * An entry exists only once the store answered the file's last request with success (its PUT,
 * or its last part), so a file is here only if it is whole in the store; a file whose close
 * failed or was aborted never is. The task removes its entries when it commits or aborts.
 */
object WrittenFiles {

  /** What the writer of one data file knows once the store acknowledged it. */
  final case class Written(size: Long, closedAt: Long, pending: Option[String] = None)

  private val byPath = new ConcurrentHashMap[String, Written]()

  def record(path: Path, written: Written): Unit = byPath.put(path.toString, written)

  def peek(path: Path): Option[Written] = Option(byPath.get(path.toString))

  /** The entry of `path`, removed. */
  def take(path: Path): Option[Written] = Option(byPath.remove(path.toString))

  /** How many files are held (tests: nothing stays behind a task). */
  def held: Int = byPath.size
}
