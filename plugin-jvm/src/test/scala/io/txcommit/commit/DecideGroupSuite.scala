package io.txcommit.commit

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, CommitOutcomeUnknownException, TransactionException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{Decision, GroupRef, Groups, LogLayout, RecordCodec, TableState}
import io.txcommit.testing.{ForwardingCommitStore, GroupJobs, TempTable}
import io.txcommit.testing.GroupJobs.{file, job, visible, visibleFiles}

/**
 * Multi-table transactions (docs/protocol.md, I33, I34, I36), their stages alone on local
 * tables: each write prepares, the decision commits them all at once or none, whoever decides
 * first decides, and a replacing commit never passes an undecided overwrite of its scope.
 */
class DecideGroupSuite extends AnyFunSuite {
  private val Lease = 60000L

  private def begin(location: Option[Path] = None, leaseMs: Long = Lease) = OpenGroups.begin(location, leaseMs)

  private def overwrite(scope: String = "") = WriteIntent(staticScopes = Seq(scope))

  private def decisionOf(g: OpenGroup): Decision = {
    val ref = g.decisionRef.get
    Decision.read(g.store.get.read(ref.decisionPath).get, ref)
  }

  test("writes to two tables are invisible until the decision, then visible in both at once") {
    val (a, b) = (new TempTable, new TempTable)
    val (_, a0) = job(a, Seq("k=1"))
    val (_, b0) = job(b, Seq(""))
    val g = begin()
    val (_, ra) = job(a, Seq("k=2"), group = Some(g))
    val (_, rb) = job(b, Seq(""), overwrite(), group = Some(g))
    assert(ra.isPrepared && rb.isPrepared && rb.sequence.contains(1L))
    val (fa, fb, fb0) = (ra.added.head.path, rb.added.head.path, b0.added.head.path)
    // Prepared: readers see each table as it was, the overwrite's removal included.
    assert(!visible(a, fa) && visible(a, a0.added.head.path))
    assert(!visible(b, fb) && visible(b, fb0))
    assert(!new TableState(a.table, a.store, a.conf).isCommitted(ra.txn))
    assert(!b.store.exists(b.layout.commitRecord(rb.txn)), "no commits/ copy before the decision")
    val d = DecideGroup.commit(g, a.conf, DerivedWork.Inline).get
    assert(d.committed && d.participants.map(_.txn).toSet == Set(ra.txn, rb.txn))
    assert(g.decisionRef.get.decisionPath == new Path(a.layout.groupsDir, s"${g.id}.json"), "the first table keeps it")
    assert(visibleFiles(a) == Seq(a0.added.head.path, fa).sorted)
    assert(visibleFiles(b) == Seq(fb), "the overwrite's removal applies with its files")
    // The derived work of each table follows the decision.
    assert(b.store.exists(b.layout.commitRecord(rb.txn)) && b.store.exists(b.layout.success))
    assert(RecordCodec.successTxn(a.store.read(a.layout.success).get).contains(ra.txn))
  }

  test("ROLLBACK decides aborted: nothing is visible, and the writes' files are discarded") {
    val (a, b) = (new TempTable, new TempTable)
    val (_, b0) = job(b, Seq(""))
    val g = begin()
    val (_, ra) = job(a, Seq(""), group = Some(g))
    val (_, rb) = job(b, Seq(""), overwrite(), group = Some(g))
    val d = DecideGroup.rollback(g, a.conf).get
    assert(!d.committed && d.decidedBy == Decision.ByRollback)
    assert(visibleFiles(a).isEmpty && visibleFiles(b) == b0.added.map(_.path))
    assert(!new java.io.File(new Path(a.table, ra.added.head.path).toUri).exists())
    assert(!new java.io.File(new Path(b.table, rb.added.head.path).toUri).exists())
    assert(intercept[TransactionException](DecideGroup.commit(g, a.conf)).getMessage.contains("rolled back"))
    assert(intercept[TransactionException](job(a, Seq(""), group = Some(g))).getMessage.contains("rolled back"))
  }

  test("a write that failed leaves the transaction only a rollback; one still running refuses COMMIT") {
    val a = new TempTable
    val g = begin()
    job(a, Seq(""), group = Some(g))
    g.join(a.table, a.conf, a.store) // a job that started and did not end yet
    assert(intercept[TransactionException](DecideGroup.commit(g, a.conf)).getMessage.contains("still running"))
    g.ended(Some("task failed for good"))
    val e = intercept[TransactionException](DecideGroup.commit(g, a.conf))
    assert(e.getMessage.contains("task failed for good") && e.getMessage.contains("ROLLBACK"))
    assert(!a.store.exists(g.decisionRef.get.decisionPath), "no decision: COMMIT refused before it")
    DecideGroup.rollback(g, a.conf)
    assert(visibleFiles(a).isEmpty)
  }

  test("the decision lives in the directory the transaction names, which no table's reader mistakes for data") {
    val (a, loc) = (new TempTable, new TempTable)
    val g = begin(location = Some(loc.table))
    val (_, ra) = job(a, Seq(""), group = Some(g))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(ra.group.get.decision == new Path(loc.layout.groupsDir, s"${g.id}.json").toString)
    assert(visibleFiles(a) == ra.added.map(_.path))
    assert(!a.store.exists(a.layout.groupsDir) || a.store.list(a.layout.groupsDir).isEmpty)
  }

  test("a decision whose create was answered with an error but landed is the commit (a lost answer)") {
    val a = new TempTable
    val lost = new ForwardingCommitStore(a.store) {
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        inner.createExclusive(target, bytes)
        if (target.getParent.getName == "groups") throw new java.io.IOException("connection reset")
      }
    }
    // The decision's store (the table's) loses the answer of the decision's create.
    val lossy = new OpenGroup(io.txcommit.log.TxnId.generate(), Some(a.table), Lease, (_, _) => lost)
    val ref = lossy.join(a.table, a.conf, lost)
    val (ctx, r) = job(a, Seq(""))
    val prepared = r.copy(group = Some(ref))
    a.store.delete(a.layout.commitRecord(r.txn))
    a.store.createExclusive(a.layout.commitRecord(r.txn), RecordCodec.encode(prepared))
    lossy.add(ctx.copy(group = Some(ref)), prepared)
    lossy.ended(None)
    val d = DecideGroup.commit(lossy, a.conf, DerivedWork.Inline).get
    assert(d.committed && d.token == lossy.token)
    assert(visibleFiles(a) == prepared.added.map(_.path))
  }

  test("a decision whose outcome cannot be read back is 'may have committed'; COMMIT again settles it") {
    val a = new TempTable
    @volatile var failReads = true
    val flaky = new ForwardingCommitStore(a.store) {
      override def createExclusive(target: Path, bytes: Array[Byte]): Unit = {
        inner.createExclusive(target, bytes)
        if (target.getParent.getName == "groups") throw new java.io.IOException("timed out")
      }
      override def read(path: Path): Option[Array[Byte]] =
        if (failReads && path.getParent.getName == "groups") throw new java.io.IOException("timed out")
        else inner.read(path)
    }
    val g = new OpenGroup(io.txcommit.log.TxnId.generate(), Some(a.table), Lease, (_, _) => flaky)
    val plain = a.context()
    val ctx = plain.copy(group = Some(g.join(a.table, a.conf, flaky)))
    a.touch(file("", ctx.txn))
    val r = JobCommitter.commit(ctx,
      Seq(new org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage(
          TaskManifest("a", Seq(io.txcommit.store.StagedFile(file("", ctx.txn), 3L))))),
      cleanup = DerivedWork.Inline).get
    g.add(ctx, r)
    g.ended(None)
    val e = intercept[CommitOutcomeUnknownException](DecideGroup.commit(g, a.conf, DerivedWork.Inline))
    assert(e.getMessage.contains("may have committed") && e.getMessage.contains(g.id))
    failReads = false
    assert(DecideGroup.commit(g, a.conf, DerivedWork.Inline).exists(_.committed), "the first create landed: it is ours")
    assert(visibleFiles(a) == r.added.map(_.path))
  }

  test("an undecided transaction is rolled back once its lease ran out, and its COMMIT then fails naming it") {
    val a = new TempTable
    // A lease of a minute, judged now and by a judge two minutes on: no sleep that a loaded
    // machine could outlast (a 100 ms lease expired during the job itself in a CI run).
    val g = begin(leaseMs = 60000L)
    val (_, r) = job(a, Seq(""), group = Some(g))
    val ref = r.group.get
    assert(Groups.abortIfExpired(ref, a.store, 0L, System.currentTimeMillis(), 0L).isEmpty, "the lease still lives")
    val aborted = Groups.abortIfExpired(ref, a.store, 0L, System.currentTimeMillis() + 120000L, 0L).get
    assert(!aborted.committed && aborted.decidedBy == Decision.ByLeaseExpiry)
    val e = intercept[TransactionException](DecideGroup.commit(g, a.conf, DerivedWork.Inline))
    assert(e.getMessage.contains("lease") && e.getMessage.contains(g.id))
    assert(visibleFiles(a).isEmpty)
  }

  test("a lease is judged by the store's time of the lease: a writer clock an hour ahead changes nothing") {
    val a = new TempTable
    val g = begin(leaseMs = 5000L)
    val (_, r) = job(a, Seq(""), group = Some(g))
    val ref = r.group.get
    // The lease object says the driver thought it was an hour later; the store dated it now.
    a.store.writeReplacing(ref.leasePath,
      RecordCodec.marker("group" -> ref.id, "leaseMs" -> ref.leaseMs,
        "renewedAt" -> (System.currentTimeMillis() + 3600000L)))
    assert(Groups.abortIfExpired(ref, a.store, 0L, System.currentTimeMillis(), 1000L).isEmpty)
    // A judge an hour ahead of the store takes it for expired: the abort is exclusive, so the
    // transaction is decided once, and its COMMIT fails cleanly (nothing visible).
    assert(Groups.abortIfExpired(ref, a.store, 0L, System.currentTimeMillis() + 3600000L, 1000L).exists(!_.committed))
    assert(intercept[TransactionException](DecideGroup.commit(g, a.conf, DerivedWork.Inline)).getMessage.contains(
        "lease"))
    assert(visibleFiles(a).isEmpty)
  }

  test("COMMIT racing with aborts after the lease: exactly one decision, every table agrees with it") {
    for (round <- 1 to 8) {
      val (a, b) = (new TempTable, new TempTable)
      val g = begin(leaseMs = 100L)
      val (_, ra) = job(a, Seq(""), group = Some(g))
      val (_, rb) = job(b, Seq(""), group = Some(g))
      Thread.sleep(150)
      val pool = Executors.newFixedThreadPool(5)
      val go = new CountDownLatch(1)
      val aborts = (1 to 4).map(_ =>
        pool.submit(() => {
          go.await()
          Groups.abortIfExpired(ra.group.get, a.store, 0L, System.currentTimeMillis(), 0L)
        }))
      val commit = pool.submit(() => { go.await(); scala.util.Try(DecideGroup.commit(g, a.conf, DerivedWork.Inline)) })
      go.countDown()
      val committed = commit.get(30, TimeUnit.SECONDS).isSuccess
      val outcomes = aborts.map(_.get(30, TimeUnit.SECONDS).get.committed).distinct
      pool.shutdown()
      assert(outcomes == Seq(committed), s"round $round: every decider reads the one decision")
      assert(visibleFiles(a).nonEmpty == committed && visibleFiles(b).nonEmpty == committed, s"round $round")
      assert(decisionOf(g).committed == committed)
      assert(Set(ra.txn, rb.txn).forall(t => decisionOf(g).commits(t)) == committed)
    }
  }

  test("an overwrite meeting an undecided overwrite of its scope waits; a COMMIT then makes it a conflict") {
    val a = new TempTable
    a.conf.set(TxCommitConf.GroupWaitMs, "20000")
    val g = begin()
    val (_, rg) = job(a, Seq("k=1"), overwrite("k=1"), group = Some(g))
    val pool = Executors.newSingleThreadExecutor()
    val single = pool.submit(() => scala.util.Try(job(a, Seq("k=1"), overwrite("k=1"))))
    Thread.sleep(500)
    assert(!single.isDone, "it waits for the decision")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val e = single.get(30, TimeUnit.SECONDS).failed.get
    pool.shutdown()
    assert(e.isInstanceOf[CommitConflictException] && e.getMessage.contains(rg.txn), e.getMessage)
    assert(visibleFiles(a) == rg.added.map(_.path))
  }

  test("an overwrite meeting an undecided overwrite goes on once it is rolled back, or after its lease") {
    val a = new TempTable
    a.conf.set(TxCommitConf.GroupWaitMs, "20000")
    val g = begin()
    job(a, Seq("k=1"), overwrite("k=1"), group = Some(g))
    val pool = Executors.newSingleThreadExecutor()
    val single = pool.submit(() => job(a, Seq("k=1"), overwrite("k=1"))._2)
    Thread.sleep(300)
    DecideGroup.rollback(g, a.conf)
    val won = single.get(30, TimeUnit.SECONDS)
    assert(visibleFiles(a) == won.added.map(_.path))
    // A driver that died: its lease runs out, and the waiting writer rolls it back itself.
    val dead = begin(leaseMs = 300L)
    job(a, Seq("k=1"), overwrite("k=1"), group = Some(dead))
    val (_, after) = job(a, Seq("k=1"), overwrite("k=1"))
    assert(!decisionOf(dead).committed && decisionOf(dead).decidedBy == Decision.ByLeaseExpiry)
    assert(visibleFiles(a) == after.added.map(_.path))
    pool.shutdown()
  }

  test("an overwrite that waited longer than its wait fails, naming the open transaction; nothing is published") {
    val a = new TempTable
    a.conf.set(TxCommitConf.GroupWaitMs, "200")
    val g = begin()
    job(a, Seq(""), overwrite(), group = Some(g))
    val highest = new TableState(a.table, a.store, a.conf).replaceLog.highest
    val e = intercept[CommitConflictException](job(a, Seq("k=1"), overwrite("k=1")))
    assert(e.getMessage.contains(g.id) && e.getMessage.contains("not decided"), e.getMessage)
    assert(new TableState(a.table, a.store, a.conf).replaceLog.highest == highest)
  }

  test("appends are never held up by an undecided overwrite, and survive it when it commits") {
    val a = new TempTable
    a.conf.set(TxCommitConf.GroupWaitMs, "0")
    val (_, old) = job(a, Seq(""))
    val g = begin()
    val (_, over) = job(a, Seq(""), overwrite(), group = Some(g))
    val (_, append) = job(a, Seq(""))
    assert(visibleFiles(a) == (old.added ++ append.added).map(_.path).sorted)
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(visibleFiles(a) == (over.added ++ append.added).map(_.path).sorted, "the append is serialized after it")
  }

  test("an overwrite that started while a transaction was undecided conflicts with it once it committed") {
    val a = new TempTable
    val g = begin()
    val (_, rg) = job(a, Seq("k=1"), overwrite("k=1"), group = Some(g))
    // The single overwrite's job starts now (base: the group's record is open), and commits after the decision.
    val ctx = a.context()
    val started = JobSetup.run(ctx, overwrite("k=1"), streaming = false)
    started.heartbeat.foreach(_.stop())
    assert(started.base.open == Set(rg.txn))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    a.touch(file("k=1", ctx.txn))
    val e = intercept[CommitConflictException](JobCommitter.commit(ctx,
        Seq(new org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage(
            TaskManifest("a", Seq(io.txcommit.store.StagedFile(file("k=1", ctx.txn), 3L))))),
        overwrite("k=1"), started.base, cleanup = DerivedWork.Inline))
    assert(e.getMessage.contains(rg.txn))
    assert(visibleFiles(a) == rg.added.map(_.path))
  }

  test("a transaction's later writes see its earlier ones: an overwrite after its append replaces it") {
    val a = new TempTable
    val (_, old) = job(a, Seq(""))
    val g = begin()
    val (_, append) = job(a, Seq(""), group = Some(g))
    val (_, over) = job(a, Seq(""), overwrite(), group = Some(g))
    assert(over.removed.map(_.path).toSet == (old.added ++ append.added).map(_.path).toSet)
    val (_, second) = job(a, Seq(""), overwrite(), group = Some(g))
    assert(second.removed.map(_.path) == over.added.map(_.path), "its own overwrites never conflict")
    assert(visibleFiles(a) == old.added.map(_.path))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    assert(visibleFiles(a) == second.added.map(_.path))
  }

  test(
    "a transaction's second write to a table rolls nothing of its first forward: no checkpoint covers it undecided") {
    // Job setup rolls forward the newest record's derived work; for the transaction's own
    // prepared append it wrote a checkpoint judged by the transaction's own view (its records
    // count as done for it), covering the undecided append and, later, passing its overwrite:
    // readers using that checkpoint showed the transaction before its decision.
    val a = new TempTable
    a.conf.set(TxCommitConf.CheckpointInterval, "1") // every commit's derived work writes one
    val (_, old) = job(a, Seq(""))
    val g = begin()
    val (_, append) = job(a, Seq(""), group = Some(g))
    val (_, over) = job(a, Seq(""), overwrite(), group = Some(g))
    job(a, Seq(""), overwrite(), group = Some(g))
    val newest = io.txcommit.log.CheckpointLog.newest(io.txcommit.log.CheckpointLog.list(a.layout, a.store.list),
      a.store.read, _.toString, _ => true)
    assert(
      !newest.exists(c => c.covers(append.txn) || c.covers(over.txn) || c.through >= over.sequence.get),
      s"undecided, covered by checkpoint ${newest.map(c => (c.number, c.through, c.committed.keySet))}")
    assert(visibleFiles(a) == old.added.map(_.path))
  }

  test("a checkpoint covers a transaction only once decided, and never passes an undecided overwrite") {
    val a = new TempTable
    a.conf.set(TxCommitConf.CheckpointInterval, "0") // only the checkpoints this test writes
    job(a, Seq(""))
    val g = begin()
    val (_, append) = job(a, Seq("k=1"), group = Some(g))
    val (_, over) = job(a, Seq("k=2"), overwrite("k=2"), group = Some(g))
    val (_, later) = job(a, Seq("k=3"), overwrite("k=3"))
    val cp = io.txcommit.log.CheckpointWriter.write(a.table, a.store, None).written.get
    assert(!cp.covers(append.txn) && !cp.covers(over.txn) && !cp.covers(later.txn))
    assert(cp.through == over.sequence.get - 1, "it stops before the undecided overwrite")
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val next = io.txcommit.log.CheckpointWriter.write(a.table, a.store, None).written.get
    assert(
      next.covers(append.txn) && next.covers(over.txn) && next.covers(later.txn) && next.through == later.sequence.get)
    assert(visibleFiles(a).toSet == (append.added ++ over.added ++ later.added).map(_.path).toSet ++
      visibleFiles(a).filterNot(_.startsWith("k=")))
  }

  test("a checkpoint passes a transaction decided aborted, covering nothing of it") {
    val a = new TempTable
    a.conf.set(TxCommitConf.CheckpointInterval, "0")
    val g = begin()
    val (_, append) = job(a, Seq("k=1"), group = Some(g))
    val (_, over) = job(a, Seq("k=2"), overwrite("k=2"), group = Some(g))
    DecideGroup.rollback(g, a.conf)
    val cp = io.txcommit.log.CheckpointWriter.write(a.table, a.store, None).written.get
    assert(cp.through == over.sequence.get && !cp.covers(over.txn) && !cp.covers(append.txn))
    assert(io.txcommit.log.CheckpointWriter.write(a.table, a.store, None).written.isEmpty, "then it is up to date")
  }

  test("the decision's JSON is as the protocol writes it, and a prepared record names it") {
    val a = new TempTable
    val g = begin()
    val (_, r) = job(a, Seq(""), group = Some(g))
    DecideGroup.commit(g, a.conf, DerivedWork.Inline)
    val text = new String(a.store.read(r.group.get.decisionPath).get, UTF_8)
    val order = Seq("\"format\" : \"txcommit-decision\"", "\"version\" : 1", s"\"group\" : \"${g.id}\"",
      "\"outcome\" : \"committed\"", "\"token\"", "\"decidedAt\"", "\"decidedBy\" : \"commit\"", "\"writer\"",
      "\"participants\"", s"\"txn\" : \"${r.txn}\"").map(text.indexOf)
    assert(order.forall(_ >= 0) && order == order.sorted, text)
    val recordText = new String(a.store.read(a.layout.commitRecord(r.txn)).get, UTF_8)
    assert(recordText.contains("\"version\" : 4") && recordText.contains(s"\"decision\" : \"${r.group.get.decision}\""))
    assert(r.group.get == GroupRef(g.id, new Path(LogLayout(a.table).groupsDir, s"${g.id}.json").toString, Lease))
    assert(GroupJobs.visibleFiles(a) == r.added.map(_.path))
  }
}
