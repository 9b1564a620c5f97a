package io.txcommit.commit

import java.nio.file.Files
import java.util.concurrent.{CyclicBarrier, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{MaintenanceException, StorePermissionException, UnsupportedWriteException}
import io.txcommit.log.TxnId
import io.txcommit.maintenance.{Vacuum, VacuumOptions}
import io.txcommit.testing.{PrefixScopedFileSystem, TempTable}

/** At most one `_txcommit/` on any path, on the local file system. */
class CheckTableNestingSuite extends AnyFunSuite {
  private def committedTable(): TempTable = {
    val t = new TempTable
    val txn = TxnId.generate()
    t.touch(s"k=1/part-00000-tid-$txn-1.csv")
    t.commit(t.record(txn, s"k=1/part-00000-tid-$txn-1.csv"))
    t
  }

  private def check(t: TempTable, dir: Path): Unit =
    CheckTableNesting.run(t.context().copy(table = dir), (), new StageTimings)

  private def vacuumAll(table: Path, t: TempTable): Seq[io.txcommit.maintenance.VacuumEntry] =
    Vacuum.run(table, t.conf, VacuumOptions(retainHours = 0, dryRun = false, force = true), now = Long.MaxValue / 2)

  test("a write into a partition directory of a table is refused, saying how to write the partition") {
    val t = committedTable()
    val e = intercept[UnsupportedWriteException](check(t, new Path(t.table, "k=1")))
    assert(e.getMessage.contains(s"inside the txcommit table ${t.table}"))
    assert(e.getMessage.contains("""df.withColumn("k", F.lit("1")).write.partitionBy("k")"""))
    assert(!Files.exists(t.dir.resolve("k=1/_txcommit")), "nothing was written")
  }

  test("a write into a directory of a table that is not a partition is refused, naming the table") {
    val t = committedTable()
    val e = intercept[UnsupportedWriteException](check(t, new Path(t.table, "extra/more")))
    assert(e.getMessage.contains(s"write to ${t.table} itself"))
  }

  test("a write to a directory holding a table below it is refused, naming that table") {
    val t = committedTable()
    val parentDir = Files.createTempDirectory("txcommit-parent")
    val inner = parentDir.resolve("events")
    Files.createDirectories(inner.resolve("_txcommit/commits"))
    Files.write(inner.resolve("_txcommit/commits/r.json"), Array[Byte](1))
    val parent = new Path(parentDir.toUri.toString.stripSuffix("/"))
    val e = intercept[UnsupportedWriteException](check(t, parent))
    assert(e.getMessage.contains(s"holds the txcommit table $parent/events below it"))
  }

  test("the table itself, a new directory beside it, and a plain directory with data pass") {
    val t = committedTable()
    check(t, t.table)
    check(t, new Path(t.table.getParent, s"new-${TxnId.generate()}"))
    val plain = new TempTable
    plain.touch("k=1/000000_0")
    check(plain, plain.table)
  }

  test("VACUUM refuses a tree that holds a second log, and deletes nothing") {
    val t = committedTable()
    val inner = TxnId.generate()
    t.touch(s"k=1/part-00000-tid-$inner-1.csv")
    t.writeRaw(s"k=1/_txcommit/commits/$inner.json", "{}")
    val e = intercept[MaintenanceException](Vacuum.run(t.table, t.conf,
        VacuumOptions(retainHours = 0, dryRun = false, force = true), now = Long.MaxValue / 2))
    assert(e.getMessage.contains("'k=1'") && e.getMessage.contains("nothing was deleted"))
    assert(Files.exists(t.dir.resolve(s"k=1/part-00000-tid-$inner-1.csv")))
  }

  test("a path that passed is checked again when the tree changed: a table appeared above it") {
    val t = new TempTable
    val inner = new Path(t.table, "k=1")
    check(t, inner)
    t.writeRaw(s"_txcommit/commits/${TxnId.generate()}.json", "{}")
    val e = intercept[UnsupportedWriteException](check(t, inner))
    assert(e.getMessage.contains(s"inside the txcommit table ${t.table}"))
  }

  test("a table that passed is checked again after it was deleted and a table written below it") {
    val t = committedTable()
    check(t, t.table)
    org.apache.commons.io.FileUtils.deleteDirectory(t.dir.resolve("_txcommit").toFile)
    t.writeRaw(s"k=1/_txcommit/commits/${TxnId.generate()}.json", "{}")
    val e = intercept[UnsupportedWriteException](check(t, t.table))
    assert(e.getMessage.contains(s"holds the txcommit table ${t.table}/k=1 below it"))
  }

  test("credentials refused a look at an ancestor: an error naming the path and the permission, not 'no table'") {
    val t = new TempTable
    val conf = new Configuration(t.conf)
    conf.set("fs.file.impl", classOf[PrefixScopedFileSystem].getName)
    conf.setBoolean("fs.file.impl.disable.cache", true)
    conf.set(PrefixScopedFileSystem.Allowed, t.table.toUri.getPath)
    val e = intercept[StorePermissionException](
      CheckTableNesting.run(t.context().copy(table = new Path(t.table, "k=1"), conf = conf), (), new StageTimings))
    assert(e.getMessage.contains(s"access to ${t.table.getParent}/_txcommit was denied"))
    assert(e.getMessage.contains("s3:ListBucket"))
  }

  /** One first write's setup: its check, its log, its second look; where it was refused, if it was. */
  private def firstWrite(t: TempTable, dir: Path, before: () => Unit = () => ()): Option[String] = {
    val ctx = t.context().copy(table = dir)
    Try(CheckTableNesting.run(ctx, (), new StageTimings)).toOption match {
      case None => Some("check")
      case Some(seen) =>
        if (seen.createsTable) RecordReadMode.run(ctx, (), new StageTimings)
        StartTransaction.run(ctx, false, new StageTimings)
        before()
        try { RecheckTableNesting.run(ctx, seen, new StageTimings); None }
        catch {
          case _: UnsupportedWriteException =>
            AbortTransaction.run(ctx, Nil, new StageTimings)
            RemoveCreatedLog.run(ctx, (), new StageTimings)
            Some("second look")
        }
    }
  }

  test(
    "two first writes to T and T/k=1 that both passed the check: at least one is refused once its log exists, and leaves no log") {
    val t = new TempTable
    val outer = t.context().copy(table = t.table)
    val inner = t.context().copy(table = new Path(t.table, "k=1"))
    // Both setups pass: neither log exists yet.
    val seenOuter = CheckTableNesting.run(outer, (), new StageTimings)
    val seenInner = CheckTableNesting.run(inner, (), new StageTimings)
    assert(seenOuter.createsTable && seenInner.createsTable)
    // Each new table is log-only: checkpoint 1 is created in its log before its marker (I32).
    assert(RecordReadMode.run(outer, (), new StageTimings) && RecordReadMode.run(inner, (), new StageTimings))
    StartTransaction.run(outer, false, new StageTimings)
    StartTransaction.run(inner, false, new StageTimings)
    val refusedInner = intercept[UnsupportedWriteException](RecheckTableNesting.run(inner, seenInner, new StageTimings))
    assert(refusedInner.getMessage.contains(s"inside the txcommit table ${t.table}"))
    assert(refusedInner.getMessage.contains("appeared while this job ran"))
    val refusedOuter = intercept[UnsupportedWriteException](RecheckTableNesting.run(outer, seenOuter, new StageTimings))
    assert(refusedOuter.getMessage.contains(s"holds the txcommit table ${t.table}/k=1 below it"))
    // The refused inner write removes the log it created; the outer one then commits alone.
    AbortTransaction.run(inner, Nil, new StageTimings)
    assert(RemoveCreatedLog.run(inner, (), new StageTimings))
    assert(!Files.exists(t.dir.resolve("k=1/_txcommit")), "the refused write left no log, its checkpoint neither")
    RecheckTableNesting.run(outer, seenOuter, new StageTimings)
  }

  test("two first writes to T and T/k=1 racing on threads: never both pass, and at most one log remains") {
    val pool = Executors.newFixedThreadPool(2)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    try {
      // At least 30 rounds, and more (up to 500) until one overlapped: on a loaded machine one
      // thread may finish its first write before the other has begun.
      val overlapped = (o: String) => o.nonEmpty && !o.contains("check")
      val outcomes = Iterator.from(1).map { round =>
        val t = new TempTable
        val barrier = new CyclicBarrier(2)
        // Round by round the marker of one writer lands before, between or after the other's checks.
        val pause = () => if (round % 3 == 0) Thread.sleep(1)
        val writes = Seq(t.table, new Path(t.table, "k=1")).map(dir =>
          Future { barrier.await(10, TimeUnit.SECONDS); firstWrite(t, dir, pause) })
        val refused = writes.map(f => Await.result(f, Duration(60, "s")))
        val logs = Seq("_txcommit", "k=1/_txcommit").count(d => Files.exists(t.dir.resolve(d)))
        assert(refused.exists(_.isDefined), s"round $round: both first writes passed")
        assert(logs <= 1, s"round $round: $logs logs left")
        refused.flatten.sorted.mkString("+")
      }.zipWithIndex.scanLeft((Vector.empty[String], false)) { case ((seen, _), (o, i)) =>
        (seen :+ o, i + 1 >= 500 || (i + 1 >= 30 && (seen :+ o).exists(overlapped)))
      }.dropWhile(!_._2).next()._1
      val seen = outcomes.groupBy(identity).view.mapValues(_.size).toMap
      info(s"where the writers of a round were refused, and in how many rounds: $seen")
      // The race this guards against: both writers passed the first check.
      assert(outcomes.exists(overlapped), s"no round of ${outcomes.size} overlapped: $seen")
    } finally pool.shutdownNow()
  }

  test("a first write that met no other log passes the second look") {
    val t = new TempTable
    assert(firstWrite(t, t.table).isEmpty)
    assert(firstWrite(t, new Path(t.table.getParent, s"beside-${TxnId.generate()}")).isEmpty)
  }

  test("VACUUM of a table below another table's log refuses, naming both logs, and keeps the outer table's files") {
    val t = committedTable()
    val inner = TxnId.generate()
    t.touch(s"k=1/part-00000-tid-$inner-1.csv")
    val innerTable = new Path(t.table, "k=1")
    val innerStore = io.txcommit.store.Adapters.open(innerTable, t.conf)
    innerStore.createExclusive(io.txcommit.log.LogLayout(innerTable).commitRecord(inner),
      io.txcommit.log.RecordCodec.encode(
        t.record(inner, s"part-00000-tid-$inner-1.csv")))
    val outerFiles = Files.list(t.dir.resolve("k=1")).toArray.map(_.toString).filterNot(_.contains(inner)).filterNot(
      _.endsWith("_txcommit"))
    assert(outerFiles.nonEmpty)
    val e = intercept[MaintenanceException](vacuumAll(innerTable, t))
    assert(e.getMessage.contains(s"${t.table}/_txcommit lies above this table's own ($innerTable/_txcommit)"))
    assert(e.getMessage.contains("nothing was deleted"))
    outerFiles.foreach(f => assert(Files.exists(java.nio.file.Paths.get(f)), s"$f kept"))
  }

  test("an overwrite whose scope holds another log is refused, naming both logs; one beside it passes") {
    val t = committedTable()
    t.writeRaw(s"k=1/_txcommit/commits/${TxnId.generate()}.json", "{}")
    val ctx = t.context()
    for (scopes <- Seq(Seq(""), Seq("k=1"))) {
      val e = intercept[UnsupportedWriteException](CheckReplaceScope.run(ctx, scopes, new StageTimings))
      assert(e.getMessage.contains(s"covers ${t.table}/k=1, which holds a transaction log of its own " +
          s"(${t.table}/k=1/_txcommit) inside the table's (${t.table}/_txcommit)"))
    }
    CheckReplaceScope.run(ctx, Seq("k=2"), new StageTimings)
    val inner = intercept[UnsupportedWriteException](check(t, new Path(t.table, "k=1")))
    assert(inner.getMessage.contains(s"holds a transaction log of its own (${t.table}/k=1/_txcommit)"))
    assert(Try(vacuumAll(t.table, t)).isFailure)
  }
}
