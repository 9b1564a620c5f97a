package io.txcommit.read

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.InvalidConfException
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{AddedFile, CommitRecord, DataFileName, TxnId}
import io.txcommit.testing.{TempTable, TwoPartitionTable}
import io.txcommit.testing.TwoPartitionTable.{copyOf, file}

/**
 * Log-first snapshots (docs/protocol.md, I16): the snapshot is the set of records a listing of
 * the log found before any data was listed, so no writer's clock decides what a read holds, and
 * every copy of the read filter (driver, executors) judges against the same records.
 */
class LogFirstSnapshotSuite extends AnyFunSuite {
  private val HourAhead = System.currentTimeMillis() + 3600L * 1000L

  private val FastClockApp = Some("app-with-a-fast-clock")

  private def record(txn: String, committedAt: Long, files: Seq[String]): CommitRecord =
    TwoPartitionTable.record(txn, committedAt, files, FastClockApp)

  /** The shared two-partition table, read log-first. */
  private final class Table extends TwoPartitionTable(FastClockApp) {

    /** A read's filter, its snapshot taken from the log now (as the SQL extension does). */
    def read(root: Path = t.table): CommittedFilesFilter = {
      val conf = new org.apache.hadoop.conf.Configuration(t.conf)
      LogFirstSnapshot.forRoots(Seq(root), conf).foreach(h => conf.set(TxCommitConf.SnapshotOption, h.encode))
      val f = new CommittedFilesFilter
      f.setConf(conf)
      f
    }
  }

  test("an overwrite by a writer whose clock is an hour ahead is read at once, whole") {
    val x = new Table
    val fresh = x.overwrite(1L, HourAhead, x.oldFiles)
    val f = x.read()
    assert(fresh.forall(x.visible(f, _)), "the overwrite is in the log the read listed first")
    assert(!x.oldFiles.exists(x.visible(f, _)), "and with it its removals")
  }

  test("an append by a writer whose clock is an hour ahead is read at once, in every partition") {
    val x = new Table
    val fresh = x.append(HourAhead)
    val f = x.read()
    assert((fresh ++ x.oldFiles).forall(x.visible(f, _)))
  }

  test("an overwrite whose commits/ copy a snapshot lists without its replace/ record is out of it whole") {
    // The log's listings run at once for a known table: the commits/ listing may find a copy
    // whose replace/ record the replace/ listing, run earlier, did not.
    val x = new Table
    val first = x.read()
    assert(x.oldFiles.forall(x.visible(first, _)))
    val fresh = x.overwrite(1L, System.currentTimeMillis(), x.oldFiles)
    val overwrite = DataFileName.txnOf(new Path(fresh.head).getName).get
    val listedEarly = SnapshotHandle("read-with-a-late-copy",
      Vector(TableSnapshot(x.t.table.toString, 0L, 0L, Vector(x.old, overwrite).sorted)))
    val conf = new org.apache.hadoop.conf.Configuration(x.t.conf)
    conf.set(TxCommitConf.SnapshotOption, listedEarly.encode)
    val f = new CommittedFilesFilter
    f.setConf(conf)
    assert(!fresh.exists(x.visible(f, _)), "the copy adds nothing")
    assert(x.oldFiles.forall(x.visible(f, _)), "and the overwrite's removals are not applied")
    val now = x.read()
    assert(fresh.forall(x.visible(now, _)) && !x.oldFiles.exists(x.visible(now, _)),
      "a read of the known table listing its log at once holds the whole overwrite")
  }

  test("a snapshot decodes the records of the appends it holds at once, before any file is judged") {
    val x = new Table
    val appends = (1 to 5).map(_ => x.append(2L)).map(f => DataFileName.txnOf(new Path(f.head).getName).get)
    val corrupt = TxnId.generate()
    x.t.writeRaw(s"_txcommit/commits/$corrupt.json", "{\"txn\":")
    def cached(txn: String) = TableLogReader.Records.get(x.t.layout.commitRecord(txn).toString).isDefined
    assert(!appends.exists(cached))
    LogFirstSnapshot.forRoots(Seq(x.t.table), x.t.conf)
    assert(appends.forall(cached), "decoded while the snapshot was taken, not file by file")
    assert(!cached(corrupt), "a corrupt record is left to the read, which reports it")
  }

  test("commits after the snapshot are in no part of the read, on the driver and every copy") {
    val x = new Table
    val driver = x.read()
    val before = copyOf(driver)
    val appended = x.append(System.currentTimeMillis() - 10000) // dated before the read: no matter
    val replaced = x.overwrite(1L, System.currentTimeMillis() - 10000, x.oldFiles)
    for (f <- Seq(driver, before, copyOf(driver))) {
      assert(x.oldFiles.forall(x.visible(f, _)), "the old generation stays whole")
      assert(!(appended ++ replaced).exists(x.visible(f, _)), "later commits stay out")
    }
    val next = x.read()
    assert((appended ++ replaced).forall(x.visible(next, _)) && !x.oldFiles.exists(x.visible(next, _)))
  }

  test("a JVM that did not take the snapshot (an executor) loads the same records by name") {
    val x = new Table
    val first = x.overwrite(1L, HourAhead, x.oldFiles)
    val appended = x.append(5L)
    val h = LogFirstSnapshot.forRoots(Seq(x.t.table), x.t.conf).get
    val second = x.overwrite(2L, 6L, first) // after the snapshot: not in it
    val elsewhere = new org.apache.hadoop.conf.Configuration(x.t.conf)
    elsewhere.set(TxCommitConf.SnapshotOption, h.copy(readId = "another-jvm").encode)
    val f = new CommittedFilesFilter
    f.setConf(elsewhere)
    assert((first ++ appended).forall(x.visible(f, _)))
    assert(!(x.oldFiles ++ second).exists(x.visible(f, _)))
  }

  test("a read of a partition directory takes its table's snapshot") {
    val x = new Table
    val fresh = x.overwrite(1L, HourAhead, x.oldFiles)
    val h = LogFirstSnapshot.forRoots(Seq(new Path(x.t.table, "k=1")), x.t.conf)
    assert(h.map(_.tables.map(_.root)).contains(Vector(x.t.table.toString)))
    val f = x.read(new Path(x.t.table, "k=1"))
    assert(x.visible(f, fresh.head) && !x.visible(f, x.oldFiles.head))
  }

  test("a directory without a log gets no snapshot; a file outside the snapshot's tables is judged as before") {
    val plain = new TempTable
    plain.touch("a.parquet")
    assert(LogFirstSnapshot.forRoots(Seq(plain.table), plain.conf).isEmpty)
    val x = new Table
    val f = x.read()
    assert(f.accept(new Path(plain.table, "a.parquet")))
  }

  test("the transactions a checkpoint covers are not carried; the snapshot still shows them") {
    val x = new Table
    val covered = x.append(3L)
    // A checkpoint covering both appends so far (no replacing commit: through 0).
    val txnOfCovered = DataFileName.txnOf(new Path(covered.head).getName).get
    val checkpoint = io.txcommit.log.Checkpoint(1L, 4L, None, "test", 0L,
      Map(x.old -> x.oldFiles.map(AddedFile(_, 3L)).toVector, txnOfCovered -> covered.map(AddedFile(_, 3L)).toVector),
      Vector.empty)
    x.t.publish(x.t.layout.checkpoint(1L), io.txcommit.log.CheckpointCodec.encode(checkpoint), checkpoint.createdAt)
    val later = x.append(5L)
    val h = LogFirstSnapshot.forRoots(Seq(x.t.table), x.t.conf).get
    assert(h.tables.map(t => (t.checkpoint, t.appends)) ==
      Vector((1L, Vector(DataFileName.txnOf(new Path(later.head).getName).get))))
    val f = x.read()
    assert((x.oldFiles ++ covered ++ later).forall(x.visible(f, _)))
  }

  test("a file whose transaction a nested log (an older version's tree) committed is judged by that log") {
    val x = new Table
    val inner = TxnId.generate()
    val innerFile = file(1, inner)
    x.t.touch(innerFile)
    val lost = file(1, TxnId.generate())
    x.t.touch(lost)
    val nested = new io.txcommit.log.LogLayout(new Path(x.t.table, "k=1"))
    x.t.publishRecord(nested.commitRecord(inner), record(inner, 2L, Seq(innerFile.stripPrefix("k=1/"))))
    val f = x.read()
    assert(x.visible(f, innerFile) && !x.visible(f, lost) && x.oldFiles.forall(x.visible(f, _)))
  }

  test("a directory above the root whose log cannot be listed ends the walk, without failing the read") {
    val x = new Table
    val conf = new org.apache.hadoop.conf.Configuration(x.t.conf)
    conf.set("fs.file.impl", classOf[ListScopedFileSystem].getName)
    conf.set("fs.file.impl.disable.cache", "true")
    val k1 = new Path(x.t.table, "k=1")
    conf.set(ListScopedFileSystem.Allowed, k1.toUri.getPath)
    assert(LogFirstSnapshot.forRoots(Seq(k1), conf).isEmpty, "the table above is not listed: no snapshot")
    conf.unset(ListScopedFileSystem.Allowed)
    assert(LogFirstSnapshot.forRoots(Seq(k1), conf).exists(_.tables.size == 1))
  }

  test("a handle survives its encoding; a damaged one is an error naming the option") {
    val h = SnapshotHandle("r",
      Vector(TableSnapshot("s3a://b/a|b;c", 3L, 7L, Vector(TxnId.generate())),
        TableSnapshot("file:/t", 0L, 0L, Vector.empty)))
    assert(SnapshotHandle.decode(h.encode) == Right(Some(h)))
    assert(SnapshotHandle.decode("") == Right(None))
    assert(SnapshotHandle.decode("v1;r;x|1|2|not-a-txn").isLeft)
    val x = new Table
    val conf = new org.apache.hadoop.conf.Configuration(x.t.conf)
    conf.set(TxCommitConf.SnapshotOption, "v1;r;x|1")
    val f = new CommittedFilesFilter
    f.setConf(conf)
    val e = intercept[InvalidConfException](x.visible(f, x.oldFiles.head))
    assert(e.key == TxCommitConf.SnapshotOption)
  }
}

/** The local file system as credentials scoped to one prefix list it: a listing elsewhere is refused (S3A's 403). */
final class ListScopedFileSystem extends org.apache.hadoop.fs.LocalFileSystem {
  override def listStatus(f: Path): Array[org.apache.hadoop.fs.FileStatus] = {
    val p = makeQualified(f).toUri.getPath
    Option(getConf.get(ListScopedFileSystem.Allowed)).filterNot(a => p == a || p.startsWith(a.stripSuffix("/") + "/"))
      .foreach(_ => throw new java.nio.file.AccessDeniedException(p, null, "403 Forbidden (prefix-scoped credentials)"))
    super.listStatus(f)
  }
}

object ListScopedFileSystem {
  val Allowed = "test.txcommit.allowedListPrefix"
}
