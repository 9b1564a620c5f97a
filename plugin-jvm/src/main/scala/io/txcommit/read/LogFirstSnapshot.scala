package io.txcommit.read

import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.util.{Failure, Try}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{Paths, TimeTravelException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointLog, LogLayout, ReplaceLog, TxnId}
import io.txcommit.log.TableVersions.AsOf
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.store.{Adapters, CommitStore, Links}

/**
 * One table's snapshot as a read fixed it by listing the table's log BEFORE any data was listed:
 * the newest usable checkpoint, every `replace/` record up to `through`, and the appends whose
 * `commits/` record was listed (those the checkpoint does not cover). No clock decides anything:
 * a record a listing returned was complete, with all its data files, before that listing
 * returned, so every file it names is in the data listing that follows, and a transaction that
 * commits later is in no part of the read. Immutable and small (transaction ids, two numbers), so
 * it travels as a read option to every JVM that lists part of the read.
 *
 * @param root       the table directory (qualified)
 * @param checkpoint the checkpoint's number (0: none)
 * @param through    the highest `replace/` sequence listed (0: none)
 * @param appends    committed transactions the checkpoint does not cover, sorted
 */
final case class TableSnapshot(root: String, checkpoint: Long, through: Long, appends: Vector[String])

/** The log-first snapshots of one read (one per table it reads), as a read option carries them. */
final case class SnapshotHandle(readId: String, tables: Vector[TableSnapshot]) {

  /** `v1;<read>;<root>|<checkpoint>|<through>|<txn>,<txn>...;...`: roots URL-encoded, so no separator clashes. */
  def encode: String =
    (Seq(SnapshotHandle.Version, readId) ++ tables.map(t =>
      Seq(URLEncoder.encode(t.root, UTF_8), t.checkpoint.toString, t.through.toString, t.appends.mkString(","))
        .mkString("|"))).mkString(";")

  /** The tables holding `file`, the nearest (longest root) first. */
  def tablesOf(file: Path): List[TableSnapshot] = {
    val f = file.toString
    tables.filter(t => f.startsWith(t.root.stripSuffix("/") + "/")).sortBy(-_.root.length).toList
  }
}

object SnapshotHandle {
  private val Version = "v1"

  /** The handle a read option holds; None for an empty value (a read the rule saw, with no table). */
  def decode(value: String): Either[String, Option[SnapshotHandle]] =
    if (value.trim.isEmpty) Right(None)
    else value.split(";", -1).toList match {
      case Version :: readId :: tables if readId.nonEmpty =>
        val parsed = tables.map(_.split("\\|", -1).toList match {
          case root :: cp :: through :: txns :: Nil =>
            for {
              c <- cp.toLongOption.filter(_ >= 0)
              t <- through.toLongOption.filter(_ >= 0)
              ids = if (txns.isEmpty) Vector.empty else txns.split(",").toVector
              if ids.forall(TxnId.isValid)
            } yield TableSnapshot(URLDecoder.decode(root, UTF_8), c, t, ids)
          case _ => None
        })
        if (parsed.forall(_.isDefined)) Right(Some(SnapshotHandle(readId, parsed.flatten.toVector)))
        else Left(value.take(200))
      case _ => Left(value.take(200))
    }
}

/** A past snapshot a read asked for: `value`, as the read option or SQL clause `option` gave it. */
final case class AsOfOption(value: AsOf, option: String)

object LogFirstSnapshot {

  /**
   * The log-first snapshots for a read of `roots`: for each root, the table it is, and the
   * tables it is a partition directory of (its `name=value` ancestors, up to the first other
   * directory; more than one only in a tree nested by a version without I18). Nothing else is
   * probed: a root where none is found (a directory holding tables, a directory of a table that
   * is not a partition directory, a glob, a store without an adapter) is judged by the read
   * filter's own rule (clock cut), as before.
   */
  def forRoots(roots: Seq[Path], conf: Configuration, asOf: Option[AsOfOption] = None): Option[SnapshotHandle] = {
    val readId = UUID.randomUUID().toString
    val requests = new java.util.concurrent.atomic.LongAdder
    val tables = roots.distinct.flatMap(r => find(r, conf, readId, asOf, requests)).distinctBy(_.root).toVector
    if (tables.nonEmpty) TxCommitMetrics.readLogRequests.update(requests.sum())
    if (tables.isEmpty) None else Some(SnapshotHandle(readId, tables))
  }

  /**
   * The tables found on `root`'s walk (a root a link leads inside a table is refused first:
   * [[ReadLinks]]). A directory whose log cannot be listed (credentials
   * scoped below it, a store error) ends the walk: the read then keeps what it found, and a root
   * with none is judged by the clock cut, which handles such directories, as before.
   */
  private[read] def find(root: Path, conf: Configuration, readId: String, asOf: Option[AsOfOption],
      requests: java.util.concurrent.atomic.LongAdder = new java.util.concurrent.atomic.LongAdder): Seq[TableSnapshot] =
    if (isGlob(root.toString)) Nil
    else Try(root.getFileSystem(conf).makeQualified(root)).toOption.toSeq.flatMap { q =>
      ReadLinks.check(q, conf)
      val walk = candidates(q).iterator.map(d => Try(take(d, conf, readId, asOf, Some(requests))))
      walk.takeWhile {
        case Failure(e: TimeTravelException) => throw e // a snapshot asked for that cannot be read
        case Failure(e) if Links.unfollowed(e) => throw ReadLinks.notFollowed(q, conf, e)
        case t => t.isSuccess
      }.flatMap(_.get).toSeq
    }

  /** `dir`, then the directories above it while the one below is a partition directory. */
  private def candidates(dir: Path): List[Path] =
    if (TreeListing.isPartitionDir(dir) && dir.getParent != null) dir :: candidates(dir.getParent) else List(dir)

  /** Whether `p` is a glob (Spark's `SparkHadoopUtil.isGlobPath`): no snapshot is taken of one. */
  private[txcommit] def isGlob(p: String): Boolean = p.exists("{}[]*?\\".contains(_))

  /**
   * The snapshot of the table at `dir`, listed now; None when `dir` holds no committed record
   * (one LIST: a plain directory costs a read this and nothing more).
   *
   * The three listings may run in any order, and at once: every record any of them returns was
   * complete before the data listing that follows begins, and what one listing finds without
   * the other still judges whole. A checkpoint whose `through` is beyond the `replace/` listing
   * is not used (an older one, or the records, serve). A replacing commit's `commits/` copy
   * listed without its `replace/` record adds nothing ([[LogFirstReader]]: a copy commits nothing
   * by itself), so that commit is out of the snapshot entirely. `commits/` goes first only for a
   * directory not known to be a table, so that a plain directory costs one LIST; a known table
   * root (one never stops being one) lists all three at once: one round trip. The checkpoint
   * and the `replace/` records read here (cached JVM-wide by listed file) are kept for read
   * `readId`, so the driver's listing reads none again. The requests the store was sent are
   * added to `requests`.
   */
  def take(dir: Path, conf: Configuration, readId: String, asOf: Option[AsOfOption] = None,
      requests: Option[java.util.concurrent.atomic.LongAdder] = None): Option[TableSnapshot] =
    Try(Adapters.open(dir, conf)).toOption.flatMap { store =>
      try asOf.fold(takeNow(dir, conf, readId, store)) { a =>
          val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
          SnapshotAsOf.resolve(dir, store, a.value, a.option, ignoreCorrupt).map { r =>
            LogFirstReader.seed(readId, r.snapshot, r.checkpoint, r.replaced)
            AsOfListing.expect(readId, r.snapshot.root, r.listing)
            r.snapshot
          }
        }
      finally requests.foreach(_.add(store.requests.total))
    }

  private def takeNow(dir: Path, conf: Configuration, readId: String, store: CommitStore): Option[TableSnapshot] = {
    val layout = LogLayout(dir)
    def commits() = store.list(layout.commitsDir).flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName))
    def others() = LogRequests.atOnce(CheckpointLog.list(layout, store.list), store.list(layout.replaceDir))
    val (committed, (checkpoints, replaceListing)) =
      if (TableLogReader.Roots.get(dir.toString).isDefined) LogRequests.atOnce(commits(), others())
      else {
        val c = commits()
        (c, if (c.isEmpty) (CheckpointLog(Nil), Nil) else others())
      }
    if (committed.isEmpty) None else Some(listed(dir, conf, readId, store, committed, checkpoints, replaceListing))
  }

  /**
   * The snapshot of the table at `dir` from listings of its log already made (`commits/`, its
   * checkpoints, `replace/`), before any data they judge: [[take]]'s, or the keys a flat listing
   * of a directory holding the table returned ahead of the table's data (docs/readers.md).
   */
  def fromListing(dir: Path, conf: Configuration, readId: String, commits: Seq[FileStatus],
      checkpoints: Seq[FileStatus], replace: Seq[FileStatus]): Option[TableSnapshot] = {
    val committed = commits.flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName))
    if (committed.isEmpty) None
    else Try(Adapters.open(dir, conf)).toOption.map { store =>
      val cps = CheckpointLog(checkpoints.flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName).map(_ -> st))
          .sortBy(-_._1))
      listed(dir, conf, readId, store, committed, cps, replace)
    }
  }

  private def listed(dir: Path, conf: Configuration, readId: String, store: CommitStore, committed: Seq[String],
      checkpoints: CheckpointLog, replaceListing: Seq[FileStatus]): TableSnapshot = {
    locally {
      TableLogReader.Roots.put(dir.toString, java.lang.Boolean.TRUE)
      val through = replaceListing.flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName))
        .foldLeft(0L)(math.max)
      val checkpoint = CheckpointLog.newest(checkpoints, read(store), Paths.display, _.through <= through)
      val covered = checkpoint.fold(Set.empty[String])(_.committed.keySet)
      val snapshot = TableSnapshot(dir.toString, checkpoint.fold(0L)(_.number), through,
        committed.filterNot(covered).distinct.sorted.toVector)
      val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
      val replaced = ReplaceLog.load(LogLayout(dir), _ => replaceListing, read(store), Paths.display,
        e => if (!ignoreCorrupt) throw e, after = checkpoint.fold(0L)(_.through))
      LogFirstReader.seed(readId, snapshot, checkpoint, replaced)
      LogRequests.prefetchRecords(dir, store, snapshot.appends)
      snapshot
    }
  }

  private def read(store: CommitStore): Path => Option[Array[Byte]] = p => store.read(p)
}
