package io.txcommit.read

import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.util.{Failure, Try}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.TimeTravelException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointLog, LogLayout, TxnId}
import io.txcommit.log.TableVersions.AsOf
import io.txcommit.metrics.TxCommitMetrics
import io.txcommit.store.{Adapters, Links}

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
 * @param appends    committed transactions the checkpoint does not cover, sorted (a group's
 *                   prepared append only when its group committed it: I33)
 * @param open       `replace/` sequences after the checkpoint, up to `through`, whose prepared
 *                   record no decision committed when the read asked (it commits nothing here)
 */
final case class TableSnapshot(root: String, checkpoint: Long, through: Long, appends: Vector[String],
    open: Vector[Long] = Vector.empty)

/** The log-first snapshots of one read (one per table it reads), as a read option carries them. */
final case class SnapshotHandle(readId: String, tables: Vector[TableSnapshot]) {

  /**
   * `v1;<read>;<root>|<checkpoint>|<through>|<txn>,<txn>...[|<open>,<open>...];...`: roots
   * URL-encoded, so no separator clashes; the open sequences only where there are some.
   */
  def encode: String =
    (Seq(SnapshotHandle.Version, readId) ++ tables.map(t =>
      (Seq(URLEncoder.encode(t.root, UTF_8), t.checkpoint.toString, t.through.toString, t.appends.mkString(",")) ++
        (if (t.open.isEmpty) Nil else Seq(t.open.mkString(",")))).mkString("|"))).mkString(";")

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
          case root :: cp :: through :: txns :: open =>
            for {
              c <- cp.toLongOption.filter(_ >= 0)
              t <- through.toLongOption.filter(_ >= 0)
              ids = if (txns.isEmpty) Vector.empty else txns.split(",").toVector
              if ids.forall(TxnId.isValid)
              seqs <- open match {
                case Nil => Some(Vector.empty[Long])
                case o :: Nil =>
                  val all = o.split(",").toVector.map(_.toLongOption.filter(_ > 0))
                  if (all.forall(_.isDefined)) Some(all.flatten) else None
                case _ => None
              }
            } yield TableSnapshot(URLDecoder.decode(root, UTF_8), c, t, ids, seqs)
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

  /** At most this many rounds of listing again (a group committed during the read, I35), then the read fails. */
  val MaxRounds = 8

  /**
   * The log-first snapshots for a read of `roots`: for each root, the table it is, and the
   * tables it is a partition directory of (its `name=value` ancestors, up to the first other
   * directory; more than one only in a tree nested by a version without I18). Nothing else is
   * probed: a root where none is found (a directory holding tables, a directory of a table that
   * is not a partition directory, a glob, a store without an adapter) is judged by the read
   * filter's own rule (clock cut), as before.
   *
   * The snapshots of one read hold every multi-table transaction (a group, docs/protocol.md,
   * I35) whole or not at all, across all its tables: each group's decision is asked once for the
   * read, and a table whose listing lacks a record of a group the read found committed is listed
   * again ([[Joint]]).
   */
  def forRoots(roots: Seq[Path], conf: Configuration, asOf: Option[AsOfOption] = None): Option[SnapshotHandle] = {
    val readId = UUID.randomUUID().toString
    val requests = new java.util.concurrent.atomic.LongAdder
    val tables = asOf match {
      case Some(_) =>
        roots.distinct.flatMap(r => find(r, conf)(d => take(d, conf, readId, asOf, Some(requests))))
          .distinctBy(_.root).toVector
      case None => joint(roots.distinct.flatMap(found(_, conf)), conf, readId, requests)
    }
    if (tables.nonEmpty) TxCommitMetrics.readLogRequests.update(requests.sum())
    if (tables.isEmpty) None else Some(SnapshotHandle(readId, tables))
  }

  /** The tables on `root`'s walk (see [[find]]), not listed yet: [[joint]] lists them together. */
  private[read] def found(root: Path, conf: Configuration): Seq[Joint.Found] = find(root, conf)(discover(_, conf))

  /**
   * The snapshots of the tables `found` for read `readId`, taken together ([[Joint]]); the
   * requests their stores were sent are added to `requests`.
   */
  private[read] def joint(found: Seq[Joint.Found], conf: Configuration, readId: String,
      requests: java.util.concurrent.atomic.LongAdder): Vector[TableSnapshot] = {
    val tables = found.distinctBy(_.dir.toString)
    try Joint.take(tables, conf, readId).toVector
    finally tables.foreach(f => requests.add(f.store.requests.total))
  }

  /**
   * What `take` finds on `root`'s walk (a root a link leads inside a table is refused first:
   * [[ReadLinks]]). A directory whose log cannot be listed (credentials
   * scoped below it, a store error) ends the walk: the read then keeps what it found, and a root
   * with none is judged by the clock cut, which handles such directories, as before.
   */
  private def find[A](root: Path, conf: Configuration)(take: Path => Option[A]): Seq[A] =
    if (isGlob(root.toString)) Nil
    else Try(root.getFileSystem(conf).makeQualified(root)).toOption.toSeq.flatMap { q =>
      ReadLinks.check(q, conf)
      val walk = candidates(q).iterator.map(d => Try(take(d)))
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
   * The snapshot of the table at `dir`, listed now (with the groups its records name decided:
   * [[Joint]]), or as of a past version ([[SnapshotAsOf]]); None when `dir` holds no committed
   * record. The checkpoint and the `replace/` records read here (cached JVM-wide by listed file)
   * are kept for read `readId`, so the driver's listing reads none again. The requests the store
   * was sent are added to `requests`.
   */
  def take(dir: Path, conf: Configuration, readId: String, asOf: Option[AsOfOption] = None,
      requests: Option[java.util.concurrent.atomic.LongAdder] = None): Option[TableSnapshot] =
    asOf match {
      case None =>
        val counted = requests.getOrElse(new java.util.concurrent.atomic.LongAdder)
        joint(discover(dir, conf).toSeq, conf, readId, counted).headOption
      case Some(a) =>
        Try(Adapters.open(dir, conf)).toOption.flatMap { store =>
          try {
            val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
            SnapshotAsOf.resolve(dir, store, a.value, a.option, ignoreCorrupt, conf).map { r =>
              LogFirstReader.seed(readId, r.snapshot, r.checkpoint, r.replaced)
              AsOfListing.expect(readId, r.snapshot.root, r.listing)
              r.snapshot
            }
          } finally requests.foreach(_.add(store.requests.total))
        }
    }

  /**
   * The table at `dir` from listings of its log already made (`commits/`, its checkpoints,
   * `replace/`), before any data they judge: the keys a flat listing of a directory holding the
   * table returned ahead of the table's data (docs/readers.md); None when `commits/` holds no
   * record or no adapter serves it. [[Joint]] uses these listings for a read of this table
   * alone; a read of several tables lists their logs again, in its order.
   */
  def fromListing(dir: Path, conf: Configuration, commits: Seq[FileStatus], checkpoints: Seq[FileStatus],
      replace: Seq[FileStatus]): Option[Joint.Found] =
    if (!commits.exists(st => LogLayout.txnOfRecordName(st.getPath.getName).isDefined)) None
    else Try(Adapters.open(dir, conf)).toOption.map { store =>
      TableLogReader.Roots.put(dir.toString, java.lang.Boolean.TRUE)
      val cps = CheckpointLog(checkpoints.flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName).map(_ -> st))
          .sortBy(-_._1))
      Joint.Found(dir, store, Some(commits), Some((cps, replace)))
    }

  /**
   * Whether `dir` is a table (holds a committed record): a directory this JVM knows for a table
   * root (one never stops being one) costs nothing; any other costs one LIST of `commits/`,
   * kept as the table's listing when it is the read's only table. None: not a table, or no
   * adapter serves it.
   */
  private def discover(dir: Path, conf: Configuration): Option[Joint.Found] =
    Try(Adapters.open(dir, conf)).toOption.flatMap { store =>
      if (TableLogReader.Roots.get(dir.toString).isDefined) Some(Joint.Found(dir, store, None))
      else {
        val listed = store.list(LogLayout(dir).commitsDir)
        if (listed.exists(st => LogLayout.txnOfRecordName(st.getPath.getName).isDefined)) {
          TableLogReader.Roots.put(dir.toString, java.lang.Boolean.TRUE)
          Some(Joint.Found(dir, store, Some(listed)))
        } else None
      }
    }
}
