package io.txcommit.read

import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.commit.{DecideGroup, DerivedWork, OpenGroups, WriteIntent}
import io.txcommit.conf.TxCommitConf
import io.txcommit.store.CommitStore
import io.txcommit.testing.{ForwardingCommitStore, TempTable}
import io.txcommit.testing.GroupJobs.job

/**
 * A read of several tables holds each multi-table transaction whole or not at all
 * (docs/protocol.md, I35), whatever commits while it lists their logs: log first (the driver's
 * snapshot, and every filter copy judging by it) and by the clock cut.
 */
class JointSnapshotSuite extends AnyFunSuite {

  /** The read filter of a log-first read of `tables` (found with the stores given). */
  private def read(tables: Seq[(TempTable, CommitStore)]): CommittedFilesFilter = {
    val conf = new Configuration(tables.head._1.conf)
    val readId = java.util.UUID.randomUUID().toString
    val snapshots = Joint.take(tables.map { case (t, s) => Joint.Found(t.table, s, None) }, conf, readId)
    conf.set(TxCommitConf.SnapshotOption, SnapshotHandle(readId, snapshots.toVector).encode)
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }

  private def visible(f: CommittedFilesFilter, t: TempTable, rel: String): Boolean = f.accept(new Path(t.table, rel))

  /** A store whose `commits/` listing runs `after` once, right after it listed (a commit landing just then). */
  private final class ListingThen(t: TempTable, after: () => Unit) extends ForwardingCommitStore(t.store) {
    val lists = new AtomicInteger()
    override def list(dir: Path): Seq[FileStatus] = {
      val out = inner.list(dir)
      if (dir == t.layout.commitsDir && lists.incrementAndGet() == 1) after()
      out
    }
  }

  test("a transaction committed after one table's log was listed is read in every table, the other listed again") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), group = Some(g))
    var rb: Option[io.txcommit.log.CommitRecord] = None
    // B's log is listed before its write of the transaction is prepared; the transaction then
    // commits before the read asks its decision (the checkpoints of both were listed first).
    val lateB = new ListingThen(b,
      () => {
        rb = Some(job(b, Seq(""), group = Some(g))._2)
        DecideGroup.commit(g, b.conf, DerivedWork.Inline)
      })
    val f = read(Seq(a -> a.store, b -> lateB))
    assert(lateB.lists.get == 2, "B's commits/ was listed again")
    assert(visible(f, a, ra.added.head.path) && visible(f, b, rb.get.added.head.path), "both writes, or neither")
  }

  test("a transaction committed after the read asked it stays out of every table") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), group = Some(g))
    val (_, rb) = job(b, Seq(""), group = Some(g))
    val f = read(Seq(a -> a.store, b -> b.store))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(!visible(f, a, ra.added.head.path) && !visible(f, b, rb.added.head.path))
    val copy = io.txcommit.testing.TwoPartitionTable.copyOf(f)
    assert(!visible(copy, a, ra.added.head.path) && !visible(copy, b, rb.added.head.path),
      "a copy of the filter (an executor) judges by the snapshot, not by the decision it would find now")
    val later = read(Seq(a -> a.store, b -> b.store))
    assert(visible(later, a, ra.added.head.path) && visible(later, b, rb.added.head.path))
  }

  test(
    "an overwrite the read found undecided is applied nowhere, and a record after it that overlaps makes it ask again") {
    val a = new TempTable
    // No checkpoint: one covering the decided overwrite would hide its record from the read.
    a.conf.set(TxCommitConf.CheckpointInterval, "0")
    val g = OpenGroups.begin(None, 60000L)
    val (_, old) = job(a, Seq("k=1"))
    val (_, over) = job(a, Seq("k=1"), WriteIntent(staticScopes = Seq("k=1")), group = Some(g))
    val undecided = read(Seq(a -> a.store))
    assert(visible(undecided, a, old.added.head.path) && !visible(undecided, a, over.added.head.path))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val (_, later) = job(a, Seq("k=1"), WriteIntent(staticScopes = Seq("k=1")))
    // A store that answers "no decision" once (a read that asked before the group was decided):
    // the overwrite after it on the same partition proves the group was decided, so it asks again.
    val decisions = new AtomicInteger()
    val stale = new ForwardingCommitStore(a.store) {
      override def read(path: Path): Option[Array[Byte]] =
        if (path.getParent == a.layout.groupsDir && decisions.incrementAndGet() == 1) None else inner.read(path)
    }
    io.txcommit.log.Groups.forget(over.group.get) // as a JVM that has not read it yet
    val f = read(Seq(a -> stale))
    assert(decisions.get >= 2, "asked again")
    assert(visible(f, a, later.added.head.path) && !visible(f, a, over.added.head.path) &&
        !visible(f, a, old.added.head.path), "the table as it is: the later overwrite applied on top of the group's")
  }

  test("the clock cut dates a transaction by its decision: one decided after the read began is out of every table") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), group = Some(g))
    val (_, rb) = job(b, Seq(""), group = Some(g))
    val before = new CommittedFilesFilter
    before.setConf(new Configuration(a.conf))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    // The decision was created after this read's cut: neither table shows the transaction.
    assert(!before.accept(new Path(a.table, ra.added.head.path)) && !before.accept(new Path(b.table,
        rb.added.head.path)))
    Thread.sleep(TxCommitConf.DefaultMaxClockSkewMs + 50)
    val after = new CommittedFilesFilter
    after.setConf(new Configuration(a.conf))
    assert(after.accept(new Path(a.table, ra.added.head.path)) && after.accept(new Path(b.table, rb.added.head.path)))
  }

  test("a snapshot handle carries the undecided replacing records it holds no part of") {
    val h = SnapshotHandle("r",
      Vector(TableSnapshot("file:/t", 2L, 9L, Vector.empty, Vector(4L, 7L)),
        TableSnapshot("file:/u", 0L, 0L, Vector.empty)))
    assert(SnapshotHandle.decode(h.encode) == Right(Some(h)))
    assert(SnapshotHandle.decode("v1;r;file%3A%2Ft|0|3||2,x").isLeft, "an open sequence that is not a number")
  }

  test("a read planned from the log (the files a LogFileIndex reads) holds a transaction in both tables or neither") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), group = Some(g))
    val (_, rb) = job(b, Seq(""), group = Some(g))
    def planned(): Set[Path] = ReadFiles.planNow(Seq(a.table, b.table), new Configuration(a.conf))._2 match {
      case ReadFiles.Files(files, _) => files.map(_.getPath).toSet
      case ReadFiles.SparkLists => fail("the read was not planned from the log")
    }
    val written = Set(new Path(a.table, ra.added.head.path), new Path(b.table, rb.added.head.path))
    assert(planned().intersect(written).isEmpty, "prepared, not decided: in neither table")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(written.subsetOf(planned()), "committed: in both tables")
  }
}
