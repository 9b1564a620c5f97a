package io.txcommit.maintenance

import java.nio.file.Files
import java.nio.file.attribute.FileTime

import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CommitConflictException
import io.txcommit.commit.{
  PublishCommitRecord,
  PublishReplaceRecord,
  ReplaceBase,
  ReplaceRequest,
  StageTimings,
  StartTransaction,
  TxnHeartbeat,
  WriteIntent
}
import io.txcommit.log.{RecordCodec, TableState, TxnId}
import io.txcommit.testing.TempTable

/**
 * VACUUM beside running jobs (invariant I19), on the local file system: a job is alive while its
 * pending marker or its files are fresh by the store's clock, whatever its id says; a job taken
 * for dead is fenced before its files go, and its late commit loses.
 */
class VacuumLivenessSuite extends AnyFunSuite {
  private val Hour = 3600L * 1000
  private val now = System.currentTimeMillis()

  /** A job that started `ageHours` ago by its driver's clock and wrote one file, still running. */
  private def runningJob(t: TempTable, ageHours: Double, replacing: Boolean = false) = {
    val txn = TxnId.generate(now - (ageHours * Hour).toLong)
    val ctx = t.context(txn)
    StartTransaction.run(ctx, replacing, new StageTimings)
    val file = s"k=1/part-00000-tid-$txn-1.csv"
    t.touch(file)
    (ctx, file)
  }

  private def ageEverything(t: TempTable, hours: Double): Unit = {
    val at = FileTime.fromMillis(now - (hours * Hour).toLong)
    Files.walk(t.dir).forEach(p => if (Files.isRegularFile(p)) Files.setLastModifiedTime(p, at))
  }

  private def vacuum(t: TempTable, retainHours: Double) =
    Vacuum.run(t.table, t.conf, VacuumOptions(retainHours = retainHours), now = now)

  test("a job older than the horizon by its id, but whose marker and files are fresh, keeps its files") {
    // A 3-hour job (or a driver clock 3 hours behind) under VACUUM RETAIN 1 HOURS.
    val t = new TempTable
    val (_, file) = runningJob(t, ageHours = 3)
    assert(vacuum(t, 1).isEmpty)
    assert(Files.exists(t.dir.resolve(file)))
  }

  test("a running job's heartbeat keeps its marker fresh by the store's clock") {
    val t = new TempTable
    val (ctx, _) = runningJob(t, ageHours = 3)
    ageEverything(t, 2)
    val marker = t.dir.resolve(s"_txcommit/pending/${ctx.txn}.json")
    val before = Files.getLastModifiedTime(marker).toMillis
    val beat = TxnHeartbeat.start(ctx, replacing = false, intervalMs = 100)
    try {
      val deadline = System.nanoTime() + 10L * 1000 * 1000 * 1000
      while (Files.getLastModifiedTime(marker).toMillis <= before && System.nanoTime() < deadline) Thread.sleep(50)
    } finally beat.stop()
    assert(Files.getLastModifiedTime(marker).toMillis >= now - 60000, "refreshed")
    assert(RecordCodec.markerFlag(Files.readAllBytes(marker), "replacing").contains(false))
  }

  test("a silent job is fenced before its files are deleted, and its late append loses") {
    val t = new TempTable
    val (ctx, file) = runningJob(t, ageHours = 3)
    ageEverything(t, 2)
    val deleted = vacuum(t, 1)
    assert(deleted.map(_.path).contains(file) && !Files.exists(t.dir.resolve(file)))
    val state = new TableState(t.table, t.store, t.conf)
    assert(state.added(ctx.txn).contains(Set.empty[String]), "the fence commits nothing")
    val e = intercept[CommitConflictException](
      PublishCommitRecord.run(ctx, t.record(ctx.txn, file), new StageTimings))
    assert(e.getMessage.contains("fenced by VACUUM"))
    assert(History.rows(t.table, t.conf).find(_.txn == ctx.txn).map(_.state).contains("fenced"))
  }

  test("a silent replacing job is fenced in replace/ too, and its late overwrite loses") {
    val t = new TempTable
    val (ctx, file) = runningJob(t, ageHours = 3, replacing = true)
    ageEverything(t, 2)
    vacuum(t, 1)
    assert(!Files.exists(t.dir.resolve(file)))
    val e = intercept[CommitConflictException](PublishReplaceRecord.run(ctx,
        ReplaceRequest(t.record(ctx.txn, file), WriteIntent(staticScopes = Seq("")), ReplaceBase(0L, Set.empty)),
        new StageTimings))
    assert(e.getMessage.contains("fenced by VACUUM"))
    assert(new TableState(t.table, t.store, t.conf).replaceLog.byTxn.get(ctx.txn).exists(_.isFence))
  }

  test("a job that commits before VACUUM fences it keeps its files") {
    val t = new TempTable
    val (ctx, file) = runningJob(t, ageHours = 3)
    PublishCommitRecord.run(ctx, t.record(ctx.txn, file), new StageTimings)
    ageEverything(t, 2)
    assert(vacuum(t, 1).forall(_.path != file))
    assert(Files.exists(t.dir.resolve(file)))
  }
}
