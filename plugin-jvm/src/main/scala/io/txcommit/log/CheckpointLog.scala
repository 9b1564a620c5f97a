package io.txcommit.log

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.fs.{FileStatus, Path}
import org.slf4j.LoggerFactory

import io.txcommit.CorruptCheckpointException

/**
 * The checkpoints of one table (`_txcommit/checkpoints/`), as one listing saw them. A checkpoint
 * is immutable, so decoded ones are cached JVM-wide by file (path, length and modification time,
 * so a table deleted and written anew never reuses its predecessor's), bounded. A checkpoint
 * that does not decode is skipped, with one warning per file: it only summarises records that
 * stay in the log, so the read stays exact and reads those records instead.
 */
final case class CheckpointLog(listed: Seq[(Long, FileStatus)]) {

  /** The highest number listed (0: none), usable or not: the next checkpoint's number is one more. */
  val highest: Long = listed.headOption.map(_._1).getOrElse(0L)
}

object CheckpointLog {
  private val log = LoggerFactory.getLogger(getClass)

  /** At most this many file entries of decoded checkpoints stay cached in a JVM. */
  val CacheMaxFiles: Long = 2000000L
  private[txcommit] val cache = new BoundedCache[(String, Long, Long), Checkpoint](CacheMaxFiles,
    c => 1L + c.files + c.committed.size + c.removed.size)
  private val warned = ConcurrentHashMap.newKeySet[(String, Long, Long)]()

  /** Lists `checkpoints/`, newest first. */
  def list(layout: LogLayout, list: Path => Seq[FileStatus]): CheckpointLog =
    CheckpointLog(list(layout.checkpointsDir).flatMap { st =>
      LogLayout.sequenceOfRecordName(st.getPath.getName).map(_ -> st)
    }.sortBy(-_._1))

  /**
   * The newest listed checkpoint that decodes and is `usable` (at most `maxTries` read), or
   * None: the reader rule then reads records only.
   */
  def newest(listed: CheckpointLog, read: Path => Option[Array[Byte]], display: Path => String,
      usable: Checkpoint => Boolean, maxTries: Int = 8): Option[Checkpoint] =
    listed.listed.iterator.take(maxTries).flatMap { case (n, st) => load(n, st, read, display) }.find(usable)

  /** Checkpoint `number` of `layout`'s table, read by name (another JVM of a read chose it). */
  def byNumber(layout: LogLayout, number: Long, read: Path => Option[Array[Byte]],
      display: Path => String): Option[Checkpoint] = {
    val path = layout.checkpoint(number)
    read(path).flatMap(b => decoded(b, (path.toString, b.length.toLong, -1L), path, display, number))
  }

  private def load(number: Long, st: FileStatus, read: Path => Option[Array[Byte]],
      display: Path => String): Option[Checkpoint] = {
    val key = (st.getPath.toString, st.getLen, st.getModificationTime)
    cache.get(key).orElse(read(st.getPath).flatMap { bytes =>
      val c = decoded(bytes, key, st.getPath, display, number)
      if (bytes.length.toLong == st.getLen) c.foreach(cache.put(key, _))
      c
    })
  }

  private def decoded(bytes: Array[Byte], key: (String, Long, Long), path: Path, display: Path => String,
      number: Long): Option[Checkpoint] =
    try Some(CheckpointCodec.decode(bytes, display(path), number))
    catch {
      case e: CorruptCheckpointException =>
        if (warned.add(key)) log.warn(e.getMessage)
        None
    }
}
