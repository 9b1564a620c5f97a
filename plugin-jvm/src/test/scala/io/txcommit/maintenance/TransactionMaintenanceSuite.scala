package io.txcommit.maintenance

import java.nio.file.{Files => JFiles}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.TransactionException
import io.txcommit.commit.{DecideGroup, DerivedWork, OpenGroups, WriteIntent}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CheckpointLog, CheckpointWriter, Decision, Groups, RecordCodec, TableState, TableVersions}
import io.txcommit.read.{LogFirstSnapshot, ReadFiles, SnapshotAsOf}
import io.txcommit.store.Adapters
import io.txcommit.testing.{LateDecisionAdapter, TempTable}
import io.txcommit.testing.GroupJobs.{job, visibleFiles}

/**
 * Maintenance beside multi-table transactions (docs/protocol.md, I37), on local tables: VACUUM
 * never deletes a write of a transaction not decided while its lease lives, and decides one
 * whose lease ran out aborted before deleting it; history shows one row per table naming the
 * transaction; a version is the whole transaction, dated by its decision, in every table; a
 * restore goes back to before it.
 */
class TransactionMaintenanceSuite extends AnyFunSuite {
  private def exists(t: TempTable, rel: String): Boolean = JFiles.exists(t.dir.resolve(rel))

  private def vacuumAll(t: TempTable) = Vacuum.run(t.table, t.conf, VacuumOptions(retainHours = 0, force = true))

  test("VACUUM at its most aggressive keeps an undecided transaction's files while its lease lives") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq("k=1"), group = Some(g))
    val (_, rb) = job(b, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
    assert(vacuumAll(a).isEmpty && vacuumAll(b).isEmpty)
    assert(exists(a, ra.added.head.path) && exists(b, rb.added.head.path))
    assert(!b.store.exists(b.layout.commitRecord(rb.txn)), "not fenced: its transaction may still commit")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(visibleFiles(a) == ra.added.map(_.path) && visibleFiles(b) == rb.added.map(_.path))
    vacuumAll(a)
    vacuumAll(b)
    assert(visibleFiles(a) == ra.added.map(_.path) && visibleFiles(b) == rb.added.map(_.path), "committed: kept")
  }

  test("VACUUM decides a transaction whose lease ran out aborted, then deletes its files; its COMMIT fails") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 200L)
    val (_, ra) = job(a, Seq("k=1"), group = Some(g))
    val (_, rb) = job(b, Seq(""), group = Some(g))
    Thread.sleep(1500) // the lease (200 ms) and the clock allowance (1 s)
    val deleted = vacuumAll(b).filter(_.deleted).map(_.path)
    assert(deleted.contains(rb.added.head.path), deleted)
    val d = Decision.read(a.store.read(ra.group.get.decisionPath).get, ra.group.get)
    assert(!d.committed && d.decidedBy == Decision.ByLeaseExpiry)
    assert(!b.store.read(b.layout.commitRecord(rb.txn)).exists(RecordCodec.decode(_, "r", rb.txn).isFence),
      "no fence: the decision is final")
    assert(intercept[TransactionException](DecideGroup.commit(g, a.conf, DerivedWork.Inline)).getMessage.contains(
        "lease"))
    assert(visibleFiles(a).isEmpty && visibleFiles(b).isEmpty)
    vacuumAll(a)
    assert(!exists(a, ra.added.head.path))
    assert(a.store.exists(ra.group.get.decisionPath), "decisions stay: other tables' records name them")
  }

  test("a snapshot that found a transaction undecided keeps it undecided when its COMMIT lands in the same JVM") {
    val (a, b) = (new TempTable, new TempTable)
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
    job(b, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
    val state = new TableState(a.table, a.store, a.conf)
    assert(!state.isCommitted(ra.txn), "no decision yet")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline) // this JVM now knows it committed
    assert(state.undecided.map(_.txn).contains(ra.txn),
      "the snapshot's answer holds: undecided (kept), not taken for neither committed nor undecided")
  }

  test("VACUUM keeps a consolidation's overwrite whose COMMIT lands in its JVM while it runs, at each decision read") {
    // The bank transfer on S3 under VACUUM FORCE, VACUUM in the writer's server: it asked the
    // consolidation's decision (none yet), the COMMIT landed, then it collected the undecided
    // records; the overwrite's file was deleted and the writer's next read failed on it.
    val commitsDuring = (1 to 6).map { n =>
      val (a, b) = (new TempTable, new TempTable)
      val g = OpenGroups.begin(None, 60000L)
      val (_, ra) = job(a, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
      val (_, rb) = job(b, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
      val hooked = new Configuration(a.conf)
      hooked.set(Adapters.ConfPrefix + "file", "local-late-decision")
      LateDecisionAdapter.afterRead(n)(DecideGroup.commit(g, a.conf, DerivedWork.Inline))
      val deleted = Vacuum.run(a.table, hooked, VacuumOptions(retainHours = 0, force = true))
        .filter(_.deleted).map(_.path)
      val during = LateDecisionAdapter.ran()
      if (!during) DecideGroup.commit(g, a.conf, DerivedWork.Inline)
      assert(!deleted.contains(ra.added.head.path), s"COMMIT after decision read $n: $deleted")
      assert(visibleFiles(a) == ra.added.map(_.path) && exists(a, ra.added.head.path) &&
          visibleFiles(b) == rb.added.map(_.path), s"COMMIT after decision read $n: the transaction is whole")
      during
    }
    assert(commitsDuring.count(identity) >= 3, s"COMMITs landed inside VACUUM: $commitsDuring")
  }

  test("VACUUM that asked a transaction's decision before its COMMIT keeps its append, covered by a newer checkpoint") {
    // The bank transfer on S3 under VACUUM FORCE: VACUUM listed the prepared append and asked its
    // decision (none yet); the COMMIT landed and its derived work wrote a checkpoint covering the
    // append; VACUUM then listed the checkpoints. The append is committed, so its file stays.
    val a = new TempTable
    val g = OpenGroups.begin(None, 60000L)
    val (_, r) = job(a, Seq("k=1"), group = Some(g))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    CheckpointWriter.write(a.table, a.store, None)
    assert(CheckpointLog.newest(CheckpointLog.list(a.layout, a.store.list), a.store.read, _.toString, _ => true)
        .exists(_.covers(r.txn)), "a checkpoint covers the committed append")
    Groups.forget(r.group.get) // this JVM has not read the decision: VACUUM asks the store
    val late = new Configuration(a.conf)
    late.set(Adapters.ConfPrefix + "file", "local-late-decision")
    LateDecisionAdapter.hidden.set(true)
    val deleted =
      try Vacuum.run(a.table, late, VacuumOptions(retainHours = 0, force = true)).filter(_.deleted).map(_.path)
      finally LateDecisionAdapter.hidden.set(false)
    assert(!deleted.contains(r.added.head.path), deleted)
    assert(visibleFiles(a) == r.added.map(_.path) && exists(a, r.added.head.path), "the committed append is whole")
  }

  test("VACUUM deletes a rolled-back transaction's files past its horizon only, and decided leases") {
    val a = new TempTable
    a.conf.set(TxCommitConf.KeepAbortedFiles, "true") // as a driver that died after its rollback
    val g = OpenGroups.begin(None, 60000L)
    val (_, r) = job(a, Seq("k=1"), group = Some(g))
    DecideGroup.rollback(g, a.conf)
    assert(Vacuum.run(a.table, a.conf, VacuumOptions(retainHours = 1)).isEmpty, "younger than the horizon")
    val twoHoursLater = System.currentTimeMillis() + 2 * 3600L * 1000
    val gone = Vacuum.run(a.table, a.conf, VacuumOptions(retainHours = 1), now = twoHoursLater)
      .map(e => e.path -> e.deleted).toMap
    assert(gone.get(r.added.head.path).contains(true))
    assert(gone.get(s"_txcommit/groups/${g.id}/lease.json").contains(true))
    assert(a.store.exists(r.group.get.decisionPath))
  }

  test(
    "a read holding the snapshot an overwrite replaced loses its files to VACUUM RETAIN 0 HOURS FORCE, not at 1 hour") {
    // The bank transfer's reader under VACUUM FORCE: the read took its snapshot of both tables
    // (the first consolidation), a second consolidation committed, VACUUM ran, then the read
    // listed its data. FORCE deletes what the second removed: the files of the snapshot the
    // read still holds, and nothing of the committed transaction.
    val (a, b) = (new TempTable, new TempTable)
    def consolidate(): (String, String) = {
      val g = OpenGroups.begin(None, 60000L)
      val (_, ra) = job(a, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
      val (_, rb) = job(b, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
      DecideGroup.commit(g, a.conf, DerivedWork.Inline)
      (ra.added.head.path, rb.added.head.path)
    }
    val (a1, b1) = consolidate()
    val held = LogFirstSnapshot.forRoots(Seq(a.table, b.table), a.conf).get
    def readHeld(): Set[String] = ReadFiles.of(held, Seq(a.table, b.table), a.conf) match {
      case ReadFiles.Files(files, _) => files.map(st => st.getPath.toUri.getPath).toSet
      case other => fail(s"not planned: $other")
    }
    val whole = Set(s"${a.dir}/$a1", s"${b.dir}/$b1")
    assert(readHeld() == whole)
    val (a2, b2) = consolidate()
    assert(Vacuum.run(a.table, a.conf, VacuumOptions(retainHours = 1)).forall(_.kind != "data"),
      "at the horizon no data file goes")
    assert(readHeld() == whole, "at the horizon the held snapshot reads whole")
    val gone = vacuumAll(a).filter(e => e.deleted && e.kind == "data").map(_.path)
    assert(gone == Seq(a1), "FORCE deletes exactly the files the committed overwrite removed")
    assert(readHeld() == Set(s"${b.dir}/$b1"), "the held snapshot lost table a's files, with no error")
    assert(visibleFiles(a) == Seq(a2) && visibleFiles(b) == Seq(b2), "the committed transaction is whole")
  }

  test("history shows one row per table naming the transaction: prepared, then committed with its version") {
    val (a, b) = (new TempTable, new TempTable)
    job(a, Seq(""))
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq(""), group = Some(g))
    val (_, rb) = job(b, Seq(""), WriteIntent(staticScopes = Seq("")), group = Some(g))
    def row(t: TempTable, txn: String) = History.rows(t.table, t.conf).find(_.txn == txn).get
    assert(row(a, ra.txn).state == "prepared" && row(a, ra.txn).transaction.contains(g.id))
    assert(row(b, rb.txn).state == "prepared" && row(b, rb.txn).sequence.contains(1L) && row(b, rb.txn).version.isEmpty)
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val (ca, cb) = (row(a, ra.txn), row(b, rb.txn))
    assert(ca.state == "committed" && cb.state == "committed" && ca.transaction.contains(g.id))
    assert(ca.version.contains(2L) && cb.version.contains(1L))
    assert(ca.storeTime == cb.storeTime, "a version is the transaction: one decision, one store time, in every table")
    val rolled = OpenGroups.begin(None, 60000L)
    val (_, rr) = job(a, Seq(""), group = Some(rolled))
    DecideGroup.rollback(rolled, a.conf)
    assert(row(a, rr.txn).state == "aborted" && row(a, rr.txn).transaction.contains(rolled.id))
  }

  test("a version is the whole transaction: dated by its decision, in every table; earlier versions hold none of it") {
    val a = new TempTable
    job(a, Seq("k=1"))
    val g = OpenGroups.begin(None, 60000L)
    // The transaction's overwrite of k=1 holds replace/ sequence 1; a plain overwrite of k=2
    // (sequence 2) commits before the transaction's decision.
    val (_, over) = job(a, Seq("k=1"), WriteIntent(staticScopes = Seq("k=1")), group = Some(g))
    Thread.sleep(20)
    val (_, plain) = job(a, Seq("k=2"), WriteIntent(staticScopes = Seq("k=2")))
    Thread.sleep(20)
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    def at(txn: String) =
      SnapshotAsOf.resolve(a.table, a.store, TableVersions.AsOfTxn(txn), "txcommit.asOf", ignoreCorrupt = false).get
    val beforeDecision = at(plain.txn)
    assert(beforeDecision.versions.versions.map(_.txn).takeRight(2) == Seq(plain.txn, over.txn), "ordered by decision")
    assert(beforeDecision.snapshot.through == 2L && beforeDecision.snapshot.open == Vector(1L),
      "the plain overwrite in, the transaction's slot before it out")
    assert(at(over.txn).snapshot.open.isEmpty)
    // RESTORE to the version before the decision: the transaction's overwrite is undone.
    val (_, restore) = Restore.toVersion(a.table, a.conf, TableVersions.AsOfTxn(plain.txn), "TXCOMMIT RESTORE")
    assert(restore.removed.map(_.path) == over.added.map(_.path))
    assert(visibleFiles(a).contains(plain.added.head.path) && !visibleFiles(a).contains(over.added.head.path))
  }

  test("RESTORE of one table to before a transaction undoes it in that table only; the other keeps it") {
    val (a, b) = (new TempTable, new TempTable)
    val (_, a0) = job(a, Seq("k=1"))
    val (_, b0) = job(b, Seq("k=1"))
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq("k=1", "k=2"), group = Some(g))
    val (_, rb) = job(b, Seq("k=2"), group = Some(g))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val (_, restore) = Restore.toVersion(a.table, a.conf, TableVersions.AsOfTxn(a0.txn), "TXCOMMIT RESTORE")
    assert(restore.removed.map(_.path).sorted == ra.added.map(_.path).sorted)
    assert(visibleFiles(a) == a0.added.map(_.path), "table a is back before the transaction")
    assert(visibleFiles(b).sorted == (b0.added ++ rb.added).map(_.path).sorted, "table b keeps the transaction")
  }

  test("RESTORE to a version inside or after a transaction holds all of its writes to that table") {
    // The transaction writes table a twice (an append and an overwrite of k=1) and b once;
    // each of a's writes is a version, both dated by the one decision.
    val (a, b) = (new TempTable, new TempTable)
    val (_, a0) = job(a, Seq("k=1"))
    val g = OpenGroups.begin(None, 60000L)
    val (_, first) = job(a, Seq("k=2"), group = Some(g))
    val (_, second) = job(a, Seq("k=1"), WriteIntent(staticScopes = Seq("k=1")), group = Some(g))
    job(b, Seq(""), group = Some(g))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val whole = (first.added ++ second.added).map(_.path).sorted
    Thread.sleep(20)
    val (_, later) = job(a, Seq("k=3"))
    val after = (whole ++ later.added.map(_.path)).sorted
    def restoreTo(txn: String): Seq[String] = {
      Restore.toVersion(a.table, a.conf, TableVersions.AsOfTxn(txn), "TXCOMMIT RESTORE")
      visibleFiles(a).sorted
    }
    assert(restoreTo(first.txn) == whole, s"as of the transaction's first write (${first.txn})")
    assert(restoreTo(later.txn) == after, "as of a version after the transaction")
    assert(restoreTo(second.txn) == whole, s"as of the transaction's second write (${second.txn})")
    assert(restoreTo(a0.txn) == a0.added.map(_.path), "as of before it: none of it")
    assert(restoreTo(first.txn) == whole, "and back")
  }

  /** The files `t`'s symlink manifest of partition `d` names, relative to the table; None: no manifest. */
  private def manifest(t: TempTable, d: String): Option[Seq[String]] =
    t.store.read(t.layout.manifest(d)).map(bytes =>
      new String(bytes, java.nio.charset.StandardCharsets.UTF_8).split("\n").toSeq.filter(_.nonEmpty)
        .map(_.stripPrefix(t.table.toString + "/")).sorted)

  test("manifests name an undecided transaction's files in no table, and in each table once its decision ran") {
    val (a, b) = (new TempTable, new TempTable)
    Seq(a, b).foreach(_.conf.set(TxCommitConf.Manifests, "true"))
    val (_, a0) = job(a, Seq("k=1"))
    val (_, b0) = job(b, Seq("k=1"))
    def paths(rs: io.txcommit.log.CommitRecord*)(d: String): Seq[String] =
      rs.flatMap(_.added.map(_.path)).filter(p => io.txcommit.log.CommitRecord.dirOf(p) == d).sorted
    val g = OpenGroups.begin(None, 60000L)
    val (_, ra) = job(a, Seq("k=1", "k=2"), group = Some(g))
    val (_, rb) = job(b, Seq("k=2"), WriteIntent(staticScopes = Seq("")), group = Some(g))
    def before(): Unit = {
      assert(manifest(a, "k=1").contains(paths(a0)("k=1")) && manifest(a, "k=2").isEmpty, "a: undecided, not named")
      assert(manifest(b, "k=1").contains(paths(b0)("k=1")) && manifest(b, "k=2").isEmpty, "b: undecided, not named")
    }
    before()
    // A plain commit to a meanwhile rewrites its manifests from the log: still without the transaction.
    val (_, a1) = job(a, Seq("k=1"))
    assert(manifest(a, "k=1").contains(paths(a0, a1)("k=1")) && manifest(a, "k=2").isEmpty)
    // The decision, with b's manifests not yet rewritten (they are each table's derived work, one
    // table after the other: b's is left out here as by a driver that died between the two).
    b.conf.set(TxCommitConf.Manifests, "false")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(manifest(a, "k=1").contains(paths(a0, a1, ra)("k=1")) && manifest(a, "k=2").contains(paths(ra)("k=2")))
    assert(manifest(b, "k=1").contains(paths(b0)("k=1")) && manifest(b, "k=2").isEmpty,
      "b's manifests show the transaction only once its own pass ran")
    // The next commit to b with manifests on rolls them forward: the overwrite replaced k=1.
    b.conf.set(TxCommitConf.Manifests, "true")
    val (_, b1) = job(b, Seq("k=3"))
    assert(manifest(b, "k=1").isEmpty, "the transaction's overwrite removed k=1's file")
    assert(manifest(b, "k=2").contains(paths(rb)("k=2")) && manifest(b, "k=3").contains(paths(b1)("k=3")))
    // A rolled-back transaction is named by no manifest, before or after its decision.
    val rolled = OpenGroups.begin(None, 60000L)
    val (_, rr) = job(a, Seq("k=4"), group = Some(rolled))
    job(a, Seq("k=2"))
    DecideGroup.rollback(rolled, a.conf)
    job(a, Seq("k=2"))
    assert(manifest(a, "k=4").isEmpty && !manifest(a, "k=2").exists(_.exists(rr.added.map(_.path).contains)))
  }
}
