package io.txcommit.store

import org.apache.hadoop.fs.{FileStatus, Path}

/** The atomicity primitive a store offers for publishing a file exclusively. */
sealed abstract class Primitive(val name: String)
object Primitive {
  /** Write a temporary file, then rename it to the target without overwrite (POSIX, HDFS). */
  case object Rename extends Primitive("rename")
}

/**
 * What txcommit needs from a store, and what each store adapter must guarantee.
 *
 *  1. `createExclusive(target, bytes)` is atomic and exclusive: a reader sees either no file
 *     or all of `bytes`, never a part; of any number of concurrent callers for one target,
 *     exactly one succeeds and every other gets [[io.txcommit.CommitConflictException]]; an
 *     existing target is never overwritten. The commit record is published only this way.
 *  2. `writeReplacing(target, bytes)` makes `bytes` visible in full (readers see the old or the
 *     new content, never a part) and may overwrite: it is used only for derived files
 *     (`_SUCCESS`, markers) that can be rewritten from the log.
 *  3. `list(dir)` returns every file whose create or publish completed before the call
 *     (list-after-write consistency), and none deleted before it; a missing directory lists
 *     as empty.
 *  4. Data files are written by Spark's own writers straight to their final place; the store
 *     need not hide them (the log does), and must not move or copy them.
 *  5. Nothing a store logs or throws contains credentials.
 */
trait CommitStore {
  def primitive: Primitive
  def createExclusive(target: Path, bytes: Array[Byte]): Unit
  def writeReplacing(target: Path, bytes: Array[Byte]): Unit
  def read(path: Path): Option[Array[Byte]]
  def list(dir: Path): Seq[FileStatus]
  def exists(path: Path): Boolean
  def delete(path: Path): Boolean
}
