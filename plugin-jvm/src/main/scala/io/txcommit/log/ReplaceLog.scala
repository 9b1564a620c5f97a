package io.txcommit.log

import org.apache.hadoop.fs.{FileStatus, Path}

/**
 * The replacing commits of one table (`_txcommit/replace/<sequence>.json`), in sequence order,
 * as one listing saw them. `records` are the commits; `excluded` the prepared records of groups
 * that do not commit in this view (undecided, aborted: I33), which hold their sequence numbers
 * and nothing else. A log just loaded holds every record in `records`: [[decided]] sorts them. Records are immutable, so decoded ones are cached JVM-wide by file
 * (path, length and modification time, so a table deleted and written anew at the same path
 * does not reuse its predecessor's records), bounded (least recently used go first): a read
 * lists `replace/` once and fetches only records it has not seen.
 */
final case class ReplaceLog(records: Seq[CommitRecord], excluded: Seq[CommitRecord] = Nil) {

  /** The highest sequence listed, commit or not (0 when there is none): the next record's is one more. */
  val highest: Long = (records.iterator ++ excluded.iterator).flatMap(_.sequence).foldLeft(0L)(math.max)

  /** This log with only the records `commits` judges committed (a prepared record whose group did not commit it is excluded). */
  def decided(commits: CommitRecord => Boolean): ReplaceLog = {
    val (in, out) = records.partition(r => !r.isPrepared || commits(r))
    if (out.isEmpty) this else ReplaceLog(in, (excluded ++ out).sortBy(_.sequence.getOrElse(0L)))
  }
  lazy val byTxn: Map[String, CommitRecord] = records.map(r => r.txn -> r).toMap

  /** The removals of these records by the reader rule (restores cancel earlier removals). */
  lazy val net: NetRemovals = NetRemovals.fold(Nil, records)
  def after(sequence: Long): Seq[CommitRecord] = records.filter(_.sequence.exists(_ > sequence))
  def withWriteId(id: String): Seq[CommitRecord] = records.filter(_.writeId.contains(id))
}

object ReplaceLog {
  val Empty: ReplaceLog = ReplaceLog(Nil)

  /** At most this many file entries (added plus removed) of decoded records stay cached. */
  val CacheMaxFiles: Long = 1000000L
  private[txcommit] val cache = new BoundedCache[(String, Long, Long), CommitRecord](CacheMaxFiles,
    r => 1L + r.added.size + r.removed.size + r.restored.size)

  /** Whether this JVM holds the decoded record listed as `st` (reading it costs nothing). */
  def isCached(st: FileStatus): Boolean = cache.get((st.getPath.toString, st.getLen, st.getModificationTime)).isDefined

  /**
   * Loads the log of `layout`'s table with the given store operations: the records with a
   * sequence above `after` (those up to it are not read: a checkpoint holds them). `onCorrupt`
   * decides what a corrupt record does: rethrow (default: the read fails and names the file) or
   * skip it.
   */
  def load(layout: LogLayout, list: Path => Seq[FileStatus], read: Path => Option[Array[Byte]],
      display: Path => String,
      onCorrupt: io.txcommit.CorruptCommitRecordException => Unit = e => throw e,
      after: Long = 0L): ReplaceLog = {
    val entries = list(layout.replaceDir).flatMap { st =>
      LogLayout.sequenceOfRecordName(st.getPath.getName).filter(_ > after).map(seq => seq -> st)
    }.sortBy(_._1)
    val records = entries.flatMap { case (seq, st) =>
      val key = (st.getPath.toString, st.getLen, st.getModificationTime)
      cache.get(key).orElse {
        read(st.getPath).flatMap { bytes =>
          try {
            val r = RecordCodec.decodeReplacement(bytes, display(st.getPath), seq)
            if (bytes.length.toLong == st.getLen) cache.put(key, r)
            Some(r)
          } catch {
            case e: io.txcommit.CorruptCommitRecordException => onCorrupt(e); None
          }
        }
      }
    }
    ReplaceLog(records)
  }

  /** Two scopes overlap when one directory equals or contains the other ("" is the table). */
  def overlaps(a: String, b: String): Boolean =
    a.isEmpty || b.isEmpty || a == b || a.startsWith(b + "/") || b.startsWith(a + "/")

  def scopesOverlap(a: Seq[String], b: Seq[String]): Boolean =
    a.exists(x => b.exists(y => overlaps(x, y)))
}
