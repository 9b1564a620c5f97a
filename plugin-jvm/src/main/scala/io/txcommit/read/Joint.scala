package io.txcommit.read

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import io.txcommit.{ListingChangedException, Paths}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{
  Checkpoint,
  CheckpointLog,
  CommitRecord,
  GroupDecisions,
  GroupRef,
  LogLayout,
  Participant,
  ReplaceLog
}
import io.txcommit.store.{Adapters, CommitStore}

/**
 * The log-first snapshots of the tables of one read, taken together so that each multi-table
 * transaction (a group, docs/protocol.md, I35) is in all of them or in none:
 *
 *  1. the logs are listed: with one table as before (at once); with several, every table's
 *     `checkpoints/` first, then every table's `commits/` and `replace/`. A checkpoint covers a
 *     group's writes only once the group committed, which it did after every write of it was
 *     prepared: so a checkpoint listed in the first round means every table's second round holds
 *     that group's records;
 *  2. each group whose prepared records the listings found is asked its decision once, for the
 *     whole read ([[GroupDecisions]]); a committed one is in every snapshot, an undecided or
 *     aborted one in none (its `replace/` slots are `open`, its appends left out);
 *  3. a group found committed whose decision names a record of a table of the read that the
 *     table's listing lacks (prepared after that listing: the decision came later still) makes
 *     the read list that table's `commits/` and `replace/` again; a group asked while undecided
 *     that a later listed record depends on (a replacing record after it overlapping its scope,
 *     which a writer creates only once the group is decided: I36) is asked again. Until neither
 *     is left, at most [[LogFirstSnapshot.MaxRounds]] rounds (then the read fails, naming the
 *     tables, rather than show part of a group).
 *
 * Cost: nothing more for a read of tables without groups' records but the ordering of step 1
 * for reads of several tables (two round trips instead of one); one GET per group a read meets
 * undecided; none for a group this JVM saw decided (kept forever: a decision never changes).
 */
private[read] object Joint {

  /**
   * A table a read found: its directory, store, the `commits/` listing that found it (if it took
   * one) and, where a listing of a directory holding it returned them too, its checkpoints and
   * `replace/` ([[LogFirstSnapshot.fromListing]]). Listings it brings serve a read of it alone.
   */
  final case class Found(dir: Path, store: CommitStore, commits: Option[Seq[FileStatus]],
      rest: Option[(CheckpointLog, Seq[FileStatus])] = None)

  /** One table's log as listed for the read. */
  private final case class Listed(found: Found, commits: Seq[FileStatus], checkpoints: CheckpointLog,
      replace: Seq[FileStatus]) {
    val committed: Seq[String] = commits.flatMap(st => LogLayout.txnOfRecordName(st.getPath.getName))
    val through: Long = replace.flatMap(st => LogLayout.sequenceOfRecordName(st.getPath.getName)).foldLeft(0L)(math.max)
  }

  /** A table's snapshot built from its listing; `replacedRaw` holds prepared records whatever their groups decided. */
  private final case class Built(listed: Listed, snapshot: TableSnapshot, checkpoint: Option[Checkpoint],
      replacedRaw: ReplaceLog, replaced: ReplaceLog, preparedAppends: Seq[GroupRef]) {
    def groupsMet: Seq[GroupRef] = replacedRaw.records.flatMap(_.group) ++ preparedAppends

    /** Whether the listing holds `p`'s record (a checkpoint that covers it counts). */
    def holds(p: Participant): Boolean =
      p.sequence.fold(listed.committed.contains(p.txn) || checkpoint.exists(_.covers(p.txn)))(_ <= listed.through)
  }

  def take(found: Seq[Found], conf: Configuration, readId: String): Seq[TableSnapshot] =
    if (found.isEmpty) Nil
    else {
      val ignoreCorrupt = TxCommitConf.bool(conf, TxCommitConf.IgnoreCorruptRecords, default = false)
      val stores = found.map(f => f.dir -> f.store).toMap
      val groups = new GroupDecisions(root => stores.getOrElse(root, Adapters.open(root, conf)))
      val tableOf = found.map(f => f.dir.toString -> f.dir).toMap
      def tableNamed(url: String): Option[Path] =
        tableOf.get(url).orElse(Try { val p = new Path(url); p.getFileSystem(conf).makeQualified(p).toString }
            .toOption.flatMap(tableOf.get))
      @scala.annotation.tailrec
      def settle(listed: Map[Path, Listed], round: Int): Seq[Built] = {
        val built = found.map(f => build(listed(f.dir), groups, ignoreCorrupt))
        val committed = built.flatMap(_.groupsMet).distinctBy(_.id).flatMap(groups.decision).filter(_.committed)
        val missing = (for {
          d <- committed
          p <- d.participants
          dir <- tableNamed(p.table)
          b <- built.find(_.listed.found.dir == dir)
          if !b.holds(p)
        } yield dir).distinct
        val stale = built.flatMap(dependedOn(_, groups)).distinctBy(_.id)
        if (missing.isEmpty && stale.isEmpty) built
        else if (round >= LogFirstSnapshot.MaxRounds) {
          throw new ListingChangedException(
            s"the logs of ${missing.map(Paths.display).mkString(", ")} kept " +
              s"changing while this read listed them ($round rounds: transactions across them committed meanwhile); " +
              "nothing was read. Run the read again.", null)
        } else {
          stale.foreach(groups.askAgain)
          settle(listed ++ relist(missing.map(listed)).map(l => l.found.dir -> l), round + 1)
        }
      }
      val built = settle(listAll(found).map(l => l.found.dir -> l).toMap, 1)
      built.map { b =>
        LogFirstReader.seed(readId, b.snapshot, b.checkpoint, b.replaced)
        b.snapshot
      }
    }

  /** Step 1: every table's log; with several tables, every `checkpoints/` before any `commits/` or `replace/`. */
  private def listAll(found: Seq[Found]): Seq[Listed] = found match {
    case Seq(f) =>
      val layout = LogLayout(f.dir)
      (f.commits, f.rest) match {
        case (Some(commits), Some((checkpoints, replace))) => Seq(Listed(f, commits, checkpoints, replace))
        case (Some(commits), None) =>
          val (checkpoints, replace) =
            LogRequests.atOnce(CheckpointLog.list(layout, f.store.list), f.store.list(layout.replaceDir))
          Seq(Listed(f, commits, checkpoints, replace))
        case (None, _) =>
          val (commits, (checkpoints, replace)) = LogRequests.atOnce(f.store.list(layout.commitsDir),
            LogRequests.atOnce(CheckpointLog.list(layout, f.store.list), f.store.list(layout.replaceDir)))
          Seq(Listed(f, commits, checkpoints, replace))
      }
    case _ =>
      // The checkpoints a listing of a directory holding the tables brought were listed before
      // anything here: they serve; their `commits/` and `replace/` are listed again, after all.
      val checkpoints = LogRequests.all(found.map(f =>
          () => f.rest.fold(CheckpointLog.list(LogLayout(f.dir), f.store.list))(_._1)))
      found.zip(checkpoints).zip(logsOf(found)).map { case ((f, cp), (commits, replace)) =>
        Listed(f, commits, cp, replace)
      }
  }

  /** `commits/` and `replace/` of each table, all at once. */
  private def logsOf(found: Seq[Found]): Seq[(Seq[FileStatus], Seq[FileStatus])] =
    LogRequests.all(found.flatMap(f =>
        Seq(() => f.store.list(LogLayout(f.dir).commitsDir), () => f.store.list(LogLayout(f.dir).replaceDir))))
      .grouped(2).map(p => (p.head, p(1))).toSeq

  private def relist(tables: Seq[Listed]): Seq[Listed] =
    tables.zip(logsOf(tables.map(_.found))).map { case (l, (commits, replace)) =>
      l.copy(commits = commits, replace = replace)
    }

  private def build(l: Listed, groups: GroupDecisions, ignoreCorrupt: Boolean): Built = {
    val f = l.found
    val layout = LogLayout(f.dir)
    val read: Path => Option[Array[Byte]] = p => f.store.read(p)
    val checkpoint = CheckpointLog.newest(l.checkpoints, read, Paths.display, _.through <= l.through)
    val covered = checkpoint.fold(Set.empty[String])(_.committed.keySet)
    val replacedRaw = ReplaceLog.load(layout, _ => l.replace, read, Paths.display, e => if (!ignoreCorrupt) throw e,
      after = checkpoint.fold(0L)(_.through))
    val uncovered = l.committed.filterNot(covered).distinct.sorted
    val records = LogRequests.records(f.dir, f.store, uncovered)
    def groupOf(txn: String) = records.get(txn).flatten.flatMap(_.group)
    val appends = uncovered.filter(t => groupOf(t).forall(groups.commits(_, t)))
    val open = replacedRaw.records.filterNot(groups.committed).flatMap(_.sequence).toVector
    val snapshot = TableSnapshot(f.dir.toString, checkpoint.fold(0L)(_.number), l.through, appends.toVector, open)
    Built(l, snapshot, checkpoint, replacedRaw, replacedRaw.decided(groups.committed),
      uncovered.filterNot(t => records.get(t).flatten.exists(_.replacing)).flatMap(groupOf))
  }

  /** Groups this read asked while undecided that a later record of `b`'s listing shows were decided since (I36). */
  private def dependedOn(b: Built, groups: GroupDecisions): Seq[GroupRef] = {
    val records = b.replacedRaw.records
    records.filter(groups.undecided).filter { r =>
      records.exists(later => later.sequence.exists(s => r.sequence.exists(_ < s)) && dependsOn(later, r))
    }.flatMap(_.group)
  }

  private def dependsOn(later: CommitRecord, r: CommitRecord): Boolean =
    ReplaceLog.scopesOverlap(later.replacement.map(_.scope).getOrElse(Nil),
      r.replacement.map(_.scope).getOrElse(Nil)) ||
      (r.writeId.isDefined && later.writeId == r.writeId)
}
