package io.txcommit.commit

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.mapreduce.TaskAttemptID
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl
import org.apache.spark.internal.io.FileNameSpec
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{MaintenanceException, UnsupportedReadException, UnsupportedWriteException}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{AddedFile, CommitRecord, DataFileName, LogLayout, RecordCodec, TableState, TxnId}
import io.txcommit.maintenance.{Vacuum, VacuumEntry, VacuumOptions}
import io.txcommit.read.{CommittedFilesFilter, LogFirstSnapshot}
import io.txcommit.store.Adapters

/**
 * Links on a table's path (docs/protocol.md, I18 and I14): nothing is written or deleted
 * through a path whose resolved location lies in another table, VACUUM never deletes a file
 * outside the table's own resolved tree, and a read that reaches inside a table through a link
 * is refused instead of judged without the table's log. Bound to every store that has links:
 * the local file system and HDFS.
 */
abstract class TableLinksContract extends AnyFunSuite {

  /** A configuration that reaches the store. */
  protected def conf: Configuration

  /** A new, empty directory on the store. */
  protected def freshDir(): Path

  /** Makes `at` a link to `target`. */
  protected def link(at: Path, target: Path): Unit

  private def fs(p: Path): FileSystem = p.getFileSystem(conf)

  private def put(p: Path): Unit = {
    val out = fs(p).create(p, false)
    try out.write(Array[Byte](1, 2, 3))
    finally out.close()
  }

  private def exists(p: Path): Boolean = fs(p).exists(p)

  /** A data file of `txn` in `dir` (relative, "" for the root). */
  private def dataFile(dir: String, txn: String, attempt: Long = 1L): String = {
    val name = DataFileName("", 0, txn, attempt, "-c000.parquet")
    if (dir.isEmpty) name else s"$dir/$name"
  }

  /** One committed append to `table` of one file in each of `dirs`; the files' paths. */
  private def commit(table: Path, dirs: String*): Seq[String] = {
    val txn = TxnId.generate()
    val files = dirs.map(dataFile(_, txn))
    files.foreach(f => put(new Path(table, f)))
    val record = CommitRecord(txn, s"token-$txn", "job", 1L, 2L, files.map(AddedFile(_, 3L)), None, "test")
    Adapters.open(table, conf).createExclusive(LogLayout(table).commitRecord(txn), RecordCodec.encode(record))
    files
  }

  /** A table at a new directory with one committed append to `k=1` and `k=2`. */
  private def table(): (Path, Seq[String]) = {
    val t = new Path(freshDir(), "t")
    (t, commit(t, "k=1", "k=2"))
  }

  private def ctx(table: Path): TxnContext = {
    val txn = TxnId.generate()
    TxnContext(table, txn, s"token-$txn", "job", 1L, conf, Adapters.open(table, conf))
  }

  /** A first write's setup and its look again before its commit; where it was refused, if it was. */
  private def write(dir: Path): Either[(String, UnsupportedWriteException), NestingSeen] = {
    val c = ctx(dir)
    Try(CheckTableNesting.run(c, (), new StageTimings)).toEither.left.map(e => "setup" -> e) match {
      case Left(("setup", e: UnsupportedWriteException)) => Left("setup" -> e)
      case Left((_, e)) => throw e
      case Right(seen) =>
        StartTransaction.run(c, false, new StageTimings)
        try { RecheckTableNesting.run(c, seen, new StageTimings); Right(seen) }
        catch { case e: UnsupportedWriteException => Left("commit" -> e) }
    }
  }

  private def vacuum(table: Path, force: Boolean): Seq[VacuumEntry] =
    if (force) Vacuum.run(table, conf, VacuumOptions(retainHours = 0, force = true), now = Long.MaxValue / 2)
    else Vacuum.run(table, conf, VacuumOptions(retainHours = 1), now = Long.MaxValue / 2)

  test("an append through a link to a partition directory of a table is refused at setup; nothing is written") {
    val (t, files) = table()
    val l = new Path(freshDir(), "l")
    link(l, new Path(t, "k=1"))
    val refused = write(l)
    assert(refused.left.map(_._1) == Left("setup"), s"the write was not refused at setup: $refused")
    val e = refused.swap.toOption.get._2
    assert(e.getMessage.contains(s"$l is a link to ${new Path(t, "k=1")}"), e.getMessage)
    assert(e.getMessage.contains(s"inside the txcommit table $t"), e.getMessage)
    assert(!exists(new Path(t, "k=1/_txcommit")), "no second log inside the table")
    assert(files.forall(f => exists(new Path(t, f))))
  }

  test(
    "a write to a directory below a link into a table is refused; one below a link to a plain directory is a table there") {
    val (t, _) = table()
    val l = new Path(freshDir(), "l")
    link(l, new Path(t, "k=1"))
    assert(write(new Path(l, "more")).left.map(_._1) == Left("setup"))
    assert(!exists(new Path(t, "k=1/more")))
    // A "current" link to a plain directory (a common layout) names the directory it leads to.
    val base = freshDir()
    val v2 = new Path(base, "v2")
    fs(v2).mkdirs(v2)
    link(new Path(base, "current"), v2)
    assert(write(new Path(base, "current/events")) == Right(NestingSeen(createsTable = true)))
    assert(exists(new Path(v2, "events/_txcommit/pending")), "the log lies where the link leads")
  }

  test("a write through a link to a table's own directory is a write to that table") {
    val (t, _) = table()
    val l = new Path(freshDir(), "l")
    link(l, t)
    assert(write(l) == Right(NestingSeen(createsTable = false)))
  }

  test("a table whose _txcommit is a link to another table's log is refused, and so is its VACUUM") {
    val (t, files) = table()
    val other = new Path(freshDir(), "other")
    put(new Path(other, dataFile("k=1", TxnId.generate())))
    link(new Path(other, LogLayout.LogDirName), new Path(t, LogLayout.LogDirName))
    val e = write(other).swap.toOption.map(_._2).getOrElse(fail("the write was not refused"))
    assert(e.getMessage.contains(s"${new Path(other, "_txcommit")} is a link to ${new Path(t, "_txcommit")}"),
      e.getMessage)
    val v = intercept[MaintenanceException](vacuum(other, force = true))
    assert(v.getMessage.contains("nothing was deleted"), v.getMessage)
    assert(files.forall(f => exists(new Path(t, f))))
  }

  test("a listing through a link to a table's own directory names the table's files below the link") {
    // What a replacing commit through the link removes: every file a reader of the link lists.
    val (t, files) = table()
    val l = new Path(freshDir(), "l")
    link(l, t)
    assert(new TableState(l, Adapters.open(l, conf), conf).dataFiles().map(_.path) == files.sorted)
  }

  test("a task's file in a table directory that is a link is refused before it is written") {
    val (t, _) = table()
    val (u, uFiles) = table()
    val plain = new Path(freshDir(), "k=3")
    fs(plain).mkdirs(plain)
    link(new Path(t, "k=3"), plain)
    link(new Path(t, "k=4"), new Path(u, "k=1"))
    val tasks = new TaskWrites(t, TxnId.generate(), "table")
    val attempt = new TaskAttemptContextImpl(conf, TaskAttemptID.forName("attempt_202601010000_0001_m_000003_0"))
    tasks.setup()
    for ((dir, to) <- Seq("k=3" -> plain, "k=4" -> new Path(u, "k=1"))) {
      val e = intercept[UnsupportedWriteException](tasks.newFile(attempt, Some(dir), FileNameSpec("", ".parquet")))
      assert(e.getMessage.contains(s"${new Path(t, dir)} is a link to $to"), e.getMessage)
    }
    // The table's own directories take files as before.
    assert(tasks.newFile(attempt, Some("k=1"), FileNameSpec("", ".parquet")).startsWith(s"$t/k=1/"))
    assert(fs(plain).listStatus(plain).isEmpty)
    assert(uFiles.forall(f => exists(new Path(u, f))))
  }

  test("a write path with a _txcommit component is refused at setup, and nothing is created") {
    val d = freshDir()
    val l = new Path(freshDir(), "l")
    link(l, new Path(d, "_txcommit"))
    for (path <- Seq(new Path(d, "_txcommit"), new Path(d, "_txcommit/x"), l)) {
      val e = intercept[UnsupportedWriteException](CheckTableNesting.run(ctx(path), (), new StageTimings))
      assert(e.getMessage.contains("_txcommit"), e.getMessage)
      assert(e.getMessage.contains("Nothing was written"), e.getMessage)
    }
    assert(!exists(new Path(d, "_txcommit")), "nothing was created")
    // The directory stays free for tables: the next append below it is not refused.
    assert(write(new Path(d, "events")).isRight)
  }

  test("VACUUM through a link to a partition directory holding a log refuses, and the table keeps every file") {
    for (force <- Seq(true, false)) {
      val (t, files) = table()
      val l = new Path(freshDir(), "l")
      link(l, new Path(t, "k=1"))
      // A log created through the link by a version without this check, with a commit of its own.
      val inner = commit(l, "")
      val e = intercept[MaintenanceException](vacuum(l, force))
      assert(e.getMessage.contains(s"$l is a link to ${new Path(t, "k=1")}"), e.getMessage)
      assert(e.getMessage.contains("nothing was deleted"), e.getMessage)
      assert(files.forall(f => exists(new Path(t, f))), s"force=$force: the table lost a committed file")
      assert(inner.forall(f => exists(new Path(l, f))))
    }
  }

  test("VACUUM of a table holding a link into another table deletes nothing there") {
    for (force <- Seq(true, false)) {
      val (t, _) = table()
      val (u, uFiles) = table()
      link(new Path(t, "u"), new Path(u, "k=1"))
      link(new Path(t, "k=1/linked-" + dataFile("", TxnId.generate())), new Path(u, uFiles.head))
      val garbage = dataFile("k=2", TxnId.generate()) // never committed: VACUUM's own work
      put(new Path(t, garbage))
      val entries = vacuum(t, force)
      assert(entries.map(_.path).contains(garbage), s"force=$force: VACUUM still removes the table's garbage")
      assert(!entries.exists(e => e.path.startsWith("u/") || e.path.contains("linked-")), entries)
      assert(uFiles.forall(f => exists(new Path(u, f))), s"force=$force: the other table lost a committed file")
    }
  }

  test("VACUUM of a table whose log holds a link deletes nothing") {
    // The table's commits/ replaced by a link to another table's: its own files would look never committed.
    val (t, files) = table()
    val (u, _) = table()
    val commits = new Path(t, "_txcommit/commits")
    fs(commits).rename(commits, new Path(t, "_txcommit/commits-moved"))
    link(commits, new Path(u, "_txcommit/commits"))
    val e = intercept[MaintenanceException](vacuum(t, force = true))
    assert(e.getMessage.contains("holds a link") && e.getMessage.contains("nothing was deleted"), e.getMessage)
    assert(files.forall(f => exists(new Path(t, f))))
  }

  test("VACUUM through a link to a table's own directory is VACUUM of that table") {
    val (t, files) = table()
    val garbage = dataFile("k=2", TxnId.generate())
    put(new Path(t, garbage))
    val l = new Path(freshDir(), "l")
    link(l, t)
    assert(vacuum(l, force = true).map(_.path).contains(garbage))
    assert(!exists(new Path(t, garbage)) && files.forall(f => exists(new Path(t, f))))
  }

  /** A read's filter of `root`, log-first as the SQL extension takes it, or by the clock cut. */
  private def readOf(root: Path, logFirst: Boolean): CommittedFilesFilter = {
    val c = new Configuration(conf)
    c.set(TxCommitConf.MaxClockSkewMs, "0")
    if (logFirst) LogFirstSnapshot.forRoots(Seq(root), c).foreach(h => c.set(TxCommitConf.SnapshotOption, h.encode))
    val f = new CommittedFilesFilter
    f.setConf(c)
    f
  }

  /** A table with a file in `k=1` of a transaction that never committed, and a link `l` to `to(table)`. */
  private def linkedTable(to: Path => Path): (Path, Seq[String], String, Path) = {
    val (t, files) = table()
    val uncommitted = dataFile("k=1", TxnId.generate())
    put(new Path(t, uncommitted))
    val l = new Path(freshDir(), "l")
    link(l, to(t))
    (t, files, uncommitted, l)
  }

  test("a read through a link into a table's partition directory is refused, naming the table") {
    val (t, files, uncommitted, l) = linkedTable(new Path(_, "k=1"))
    val first = intercept[UnsupportedReadException](readOf(l, logFirst = true))
    assert(first.getMessage.contains(s"$l is a link to ${new Path(t, "k=1")}"), first.getMessage)
    assert(first.getMessage.contains(s"inside the txcommit table $t"), first.getMessage)
    // A read without a log-first snapshot (a glob, a streaming source) judges each file: refused too.
    val byCut = readOf(new Path(freshDir(), "none"), logFirst = false)
    val name = uncommitted.stripPrefix("k=1/")
    assert(intercept[UnsupportedReadException](byCut.accept(new Path(l, name))).getMessage.contains(t.toString))
    // Reading the partition directory itself shows its committed file only.
    val direct = readOf(new Path(t, "k=1"), logFirst = true)
    assert(direct.accept(new Path(t, files.head)) && !direct.accept(new Path(t, uncommitted)))
  }

  test("a read through a link to a table's own directory reads the table") {
    val (_, files, uncommitted, l) = linkedTable(identity)
    for (logFirst <- Seq(true, false)) {
      val f = readOf(l, logFirst)
      assert(files.forall(p => f.accept(new Path(l, p))), s"logFirst=$logFirst")
      assert(!f.accept(new Path(l, uncommitted)), s"logFirst=$logFirst")
    }
  }
}

/** The links contract on the local file system. */
class LocalTableLinksSuite extends TableLinksContract {
  override protected val conf = new Configuration()
  override protected def freshDir(): Path =
    new Path(java.nio.file.Files.createTempDirectory("txcommit-links").toUri.toString.stripSuffix("/"))
  override protected def link(at: Path, target: Path): Unit = {
    java.nio.file.Files.createDirectories(java.nio.file.Paths.get(at.getParent.toUri))
    java.nio.file.Files.createSymbolicLink(java.nio.file.Paths.get(at.toUri), java.nio.file.Paths.get(target.toUri))
  }
}
