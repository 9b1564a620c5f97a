package io.txcommit.read

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{CommitRecord, DataFileName, RemovedFile, Replacement, TxnId}
import io.txcommit.testing.{TempTable, TwoPartitionTable}
import io.txcommit.testing.TwoPartitionTable.{copyOf, file, record}

/**
 * One cut per read (protocol invariant I15), at the exact interleavings a concurrent writer
 * produces: a listing that began before a commit, and filter copies (as Spark ships them to
 * executors) deserialised before and after one.
 */
class ReadSnapshotSuite extends AnyFunSuite {
  private def filterFor(t: TempTable): CommittedFilesFilter = {
    val conf = new org.apache.hadoop.conf.Configuration(t.conf)
    conf.set(TxCommitConf.MaxClockSkewMs, "0") // one clock: these tests are the writer too
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }

  /** The shared two-partition table; an overwrite replaces the old generation (sequence 1). */
  private final class Table extends TwoPartitionTable {
    def overwrite(committedAt: Long): Seq[String] = overwrite(1L, committedAt, oldFiles)
  }

  private def now: Long = { Thread.sleep(2); System.currentTimeMillis() }

  test("a listing that met the table before an overwrite committed sees the old generation whole") {
    val x = new Table
    val f = filterFor(x.t)
    assert(x.visible(f, x.oldFiles.head))
    val fresh = x.overwrite(now)
    assert(!fresh.exists(x.visible(f, _)), "the overwrite's files, through its commits/ copy")
    assert(x.visible(f, x.oldFiles(1)), "the old generation stays whole")
  }

  test("an overwrite that committed after the read began is not applied, even if met first") {
    val x = new Table
    val f = filterFor(x.t)
    val fresh = x.overwrite(now) // commits while Spark lists, before the filter sees a file
    assert(x.oldFiles.forall(x.visible(f, _)),
      "old files: a directory listed before the " +
        "overwrite's files were written would otherwise show neither generation")
    assert(!fresh.exists(x.visible(f, _)))
    assert(fresh.forall(x.visible(filterFor(x.t), _)), "the next read sees the new generation")
    assert(!x.oldFiles.exists(x.visible(filterFor(x.t), _)))
  }

  test("an append that committed after the read began is hidden in every partition") {
    val x = new Table
    val f = filterFor(x.t)
    val (files, publish) = x.stagedAppend(now)
    publish()
    assert(!files.exists(x.visible(f, _)))
    assert(files.forall(x.visible(filterFor(x.t), _)))
  }

  test("filter copies deserialised before and after an append's record appears judge alike") {
    val x = new Table
    val driver = filterFor(x.t)
    // A commit made before the read began, whose record was still being published when the
    // first executor looked (a slow PUT): the executors must not split on it.
    val (files, publish) = x.stagedAppend(System.currentTimeMillis() - 10000)
    val before = copyOf(driver)
    assert(!x.visible(before, files.head), "not there yet when this executor looked")
    publish()
    val after = copyOf(driver)
    assert(!x.visible(after, files(1)), "another executor of the same read: the same answer")
    assert(!x.visible(driver, files(1)), "and the driver")
    assert(files.forall(x.visible(filterFor(x.t), _)), "a new read sees it")
  }

  test("filter copies deserialised before and after an overwrite's record appears judge alike") {
    val x = new Table
    val driver = filterFor(x.t)
    val before = copyOf(driver)
    assert(x.visible(before, x.oldFiles.head))
    val fresh = x.overwrite(System.currentTimeMillis() - 10000)
    val after = copyOf(driver)
    assert(x.visible(after, x.oldFiles(1)), "the read agreed on no replacement")
    assert(!fresh.exists(x.visible(after, _)))
    assert(fresh.forall(x.visible(filterFor(x.t), _)))
  }

  test("the first proposal of a read fixes the answer; other reads decide for themselves") {
    val a = ReadCut("read-a", 100L, None, 0L)
    val b = ReadCut("read-b", 100L, None, 0L)
    assert(CutArbiter.Local.agreeHighest(a, "t", 3L) == 3L)
    assert(CutArbiter.Local.agreeHighest(a, "t", 4L) == 3L)
    assert(CutArbiter.Local.agreeHighest(b, "t", 4L) == 4L)
    assert(!CutArbiter.Local.agreeCommitted(a, "t", "x", proposed = false))
    assert(!CutArbiter.Local.agreeCommitted(a, "t", "x", proposed = true))
    assert(CutArbiter.Local.agreeCommitted(a, "u", "x", proposed = true), "another table")
  }

  test("a commit of the reading application counts at its time; another's after the clock allowance") {
    val cut = ReadCut("r", 10000L, Some("app-1"), 1000L)
    val r = record(TxnId.generate(), 10000L, Nil)
    assert(cut.precedes(r.copy(appId = Some("app-1")), storedAt = None))
    assert(!cut.precedes(r.copy(appId = Some("app-2")), storedAt = None))
    assert(cut.precedes(r.copy(appId = Some("app-2"), committedAt = 9000L), storedAt = None))
    assert(!cut.precedes(r.copy(committedAt = 10001L, appId = Some("app-1")), storedAt = None))
  }

  test("another application's commit counts at the store's time, whatever its writer's clock says") {
    val cut = ReadCut("r", 10000L, Some("app-1"), 1000L)
    val hour = 3600L * 1000L
    val ahead = record(TxnId.generate(), 9000L + hour, Nil).copy(appId = Some("app-2"))
    assert(cut.precedes(ahead, storedAt = Some(9000L)), "a writer clock an hour ahead delays nothing")
    assert(!cut.precedes(ahead, storedAt = Some(9001L)), "the store's time still takes the allowance")
    val behind = record(TxnId.generate(), 9000L - hour, Nil).copy(appId = Some("app-2"))
    assert(!cut.precedes(behind, storedAt = Some(10000L)),
      "a writer clock an hour behind cannot slip a commit made during the listing into the read")
    assert(cut.precedes(ahead.copy(appId = Some("app-1"), committedAt = 10000L), storedAt = Some(20000L)),
      "the reading application's own commit counts at its own clock")
    assert(!cut.precedes(ahead, storedAt = None) && cut.precedes(behind, storedAt = None),
      "a store that keeps no time leaves the writer's clock")
  }

  test("a replacing commit dated in the future hides no replacing commit published after it") {
    val x = new Table
    def replace(seq: Long, committedAt: Long, scope: Seq[String], files: Seq[String], removed: Seq[String]): Unit = {
      val txn = DataFileName.txnOf(files.head.split("/").last).get
      files.foreach(x.t.touch(_))
      val r = record(txn, committedAt, files).copy(operation = CommitRecord.OverwritePartitions,
        replacement = Some(Replacement(seq, scope, removed.map(RemovedFile(_, 3L)))))
      x.t.publishRecord(x.t.layout.replaceRecord(seq), r)
    }
    // Another driver whose clock runs 10 minutes ahead overwrote the table; then this application
    // overwrote k=1 (its record is later in sequence order, so it committed later).
    val ahead = TxnId.generate()
    val aheadFiles = Seq(file(1, ahead), file(2, ahead))
    replace(1L, System.currentTimeMillis() + 10 * 60 * 1000L, Seq(""), aheadFiles, x.oldFiles)
    val mine = TxnId.generate()
    replace(2L, now, Seq("k=1"), Seq(file(1, mine)), Seq(aheadFiles.head))
    val f = filterFor(x.t)
    Thread.sleep(2)
    assert(x.visible(f, file(1, mine)), "the later overwrite of k=1 is hidden by the earlier record's clock")
    assert(!x.visible(f, aheadFiles.head), "k=1 as the future-dated overwrite left it")
    assert(x.visible(f, aheadFiles(1)), "a record before one the read applies is applied too")
    assert(!x.oldFiles.exists(x.visible(f, _)))
  }

  test("a nonsense clock allowance is an error naming the key") {
    val conf = new org.apache.hadoop.conf.Configuration()
    conf.set(TxCommitConf.MaxClockSkewMs, "soon")
    val e = intercept[io.txcommit.InvalidConfException](TxCommitConf.maxClockSkewMs(conf))
    assert(e.getMessage.contains(TxCommitConf.MaxClockSkewMs) && e.getMessage.contains("soon"))
  }
}
