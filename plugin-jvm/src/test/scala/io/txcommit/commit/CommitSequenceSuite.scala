package io.txcommit.commit

import scala.collection.mutable

import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint
import io.txcommit.log.{AddedFile, RecordCodec, TableFile, TableState}
import io.txcommit.streaming.MicroBatch
import io.txcommit.testing.MemTable

/**
 * The whole commit sequence, job setup through job commit, as the protocol classes run it, on
 * the in-memory store: halted at every fault point of a job commit (as Hadoop's manifest
 * committer tests its job through its committer), then recovered the way a restarted driver or
 * the next job recovers. Whatever the point, a reader sees all of the job's files or none, the
 * table's earlier data stays, and the next job commits. (The points halt the JVM in a server;
 * here [[HaltPoint.simulated]] ends the sequence at the point instead, with no clean-up.) The
 * task's point (`task.beforeCommit`) leaves files no manifest names, which the end-to-end fault
 * tests cover with real executors; replacing commits need a real file system to list what they
 * remove, and `ReplaceSuite` runs them.
 */
class CommitSequenceSuite extends AnyFunSuite {

  /** A table on a staging store (data published at commit, as on `s3-multipart`) with one
   *  committed append, and the files a job of `tasks` task attempts stages in it. */
  private final class Table {
    val t = new MemTable(staging = true)
    val earlier: String = {
      val ctx = t.context()
      val staged = t.store.stage(t.table, s"k=0/part-00000-tid-${ctx.txn}-0.parquet", Array[Byte](1))
      JobCommitter.commit(ctx, Seq(manifest("attempt_0", staged)), cleanup = DerivedWork.Inline)
      ctx.txn
    }

    def stagedJob(ctx: TxnContext, tasks: Int): Seq[TaskCommitMessage] =
      (0 until tasks).map { i =>
        val rel = s"k=${i % 2}/part-0000$i-tid-${ctx.txn}-$i.parquet"
        manifest(s"attempt_$i", t.store.stage(t.table, rel, Array[Byte](1, 2)))
      }

    def state: TableState = new TableState(t.table, t.store, t.conf)

    /** Whether a reader sees each of `files` (paths relative to the table). */
    def visible(files: Seq[String]): Seq[Boolean] = {
      val s = state
      files.map(f => s.isVisible(TableFile(f, 2L, 0L)))
    }

    def successTxn: Option[String] = t.store.read(t.layout.success).flatMap(RecordCodec.successTxn)
  }

  private def manifest(attempt: String, files: io.txcommit.store.StagedFile*) =
    new TaskCommitMessage(TaskManifest(attempt, files))

  private def filesOf(messages: Seq[TaskCommitMessage]): Seq[String] =
    messages.flatMap(_.obj.asInstanceOf[TaskManifest].files.map(_.path))

  /** Job setup and commit of a batch job, halted at `point`. */
  private def batchJob(table: Table, point: HaltPoint, intent: WriteIntent = WriteIntent())
      : (TxnContext, Seq[String], Either[HaltPoint, Option[io.txcommit.log.CommitRecord]]) = {
    table.t.conf.set(TxCommitConf.HaltAt, point.name)
    val ctx = table.t.context()
    val messages = table.stagedJob(ctx, tasks = 4)
    val outcome = HaltPoint.simulated {
      val started = JobSetup.run(ctx, intent, streaming = false)
      try JobCommitter.commit(ctx, messages, intent, started.base, cleanup = DerivedWork.Inline)
      finally started.heartbeat.foreach(_.stop())
    }
    table.t.conf.unset(TxCommitConf.HaltAt)
    (ctx, filesOf(messages), outcome)
  }

  private val beforeTheRecord =
    Seq(HaltPoint.JobAfterNestingCheck, HaltPoint.JobDuringPublishData, HaltPoint.JobBeforeRecord)
  private val afterTheRecord = Seq(HaltPoint.JobAfterRecord, HaltPoint.JobBeforeSuccess, HaltPoint.JobDuringCleanup)

  for (point <- beforeTheRecord ++ afterTheRecord) {
    val committed = afterTheRecord.contains(point)
    test(s"a batch job halted at ${point.name} is ${if (committed) "committed whole" else "not committed"}; " +
      "the next job rolls forward and commits") {
      val table = new Table
      val (ctx, files, outcome) = batchJob(table, point)
      assert(outcome == Left(point), "the sequence reaches the point and ends there")
      assert(table.state.isCommitted(ctx.txn) == committed)
      assert(table.visible(files).distinct == Seq(committed), s"all or nothing of $files")
      assert(table.state.isCommitted(table.earlier), "the earlier commit stays")

      // The next job (another driver): its setup rolls the table forward, its commit commits.
      val next = table.t.context()
      val messages = table.stagedJob(next, tasks = 2)
      val started = JobSetup.run(next, WriteIntent(), streaming = false)
      started.heartbeat.foreach(_.stop())
      if (committed) assert(table.successTxn.contains(ctx.txn), "_SUCCESS of the halted commit is rolled forward")
      assert(JobCommitter.commit(next, messages, cleanup = DerivedWork.Inline).isDefined)
      assert(table.visible(filesOf(messages)).forall(identity))
      assert(table.visible(files).distinct == Seq(committed), "the next commit changes nothing of the halted job")
      assert(table.successTxn.contains(next.txn))
    }
  }

  /** A micro-batch's commit as the streaming sink runs it, its sink log a map. */
  private def microBatch(table: Table, batch: Long, sinkLog: mutable.Map[Long, Seq[AddedFile]],
      point: Option[HaltPoint]): (TxnContext, Seq[String], Either[HaltPoint, Option[io.txcommit.log.CommitRecord]]) = {
    point.foreach(p => table.t.conf.set(TxCommitConf.HaltAt, p.name))
    val ctx = table.t.context()
    val messages = table.stagedJob(ctx, tasks = 2)
    val kind = new MicroBatch(table.t.table, batch, files => sinkLog(batch) = files)
    val outcome = HaltPoint.simulated {
      JobSetup.run(ctx, WriteIntent(), streaming = true)
      JobCommitter.commit(ctx, messages, kind = kind, cleanup = DerivedWork.Inline)
    }
    table.t.conf.unset(TxCommitConf.HaltAt)
    (ctx, filesOf(messages), outcome)
  }

  test("a micro-batch halted before its record is replayed under a new txn, which commits it") {
    val table = new Table
    val sinkLog = mutable.Map.empty[Long, Seq[AddedFile]]
    val (first, firstFiles, halted) = microBatch(table, 7L, sinkLog, Some(HaltPoint.StreamingBeforeRecord))
    assert(halted == Left(HaltPoint.StreamingBeforeRecord) && sinkLog.isEmpty)
    assert(!table.state.isCommitted(first.txn) && table.visible(firstFiles).distinct == Seq(false))
    val (replay, replayFiles, outcome) = microBatch(table, 7L, sinkLog, None)
    assert(outcome.exists(_.exists(_.txn == replay.txn)), "the replay commits the batch")
    assert(sinkLog(7L).map(_.path).toSet == replayFiles.toSet, "Spark's sink log names the replay's files")
    assert(table.visible(replayFiles).forall(identity) && table.visible(firstFiles).distinct == Seq(false))
  }

  test("a micro-batch halted after its record, before Spark's sink log, is adopted by its replay") {
    val table = new Table
    val sinkLog = mutable.Map.empty[Long, Seq[AddedFile]]
    val (first, firstFiles, halted) = microBatch(table, 3L, sinkLog, Some(HaltPoint.StreamingBeforeSinkLog))
    assert(halted == Left(HaltPoint.StreamingBeforeSinkLog) && sinkLog.isEmpty)
    assert(table.state.isCommitted(first.txn) && table.visible(firstFiles).forall(identity))
    val (replay, replayFiles, outcome) = microBatch(table, 3L, sinkLog, None)
    assert(outcome == Right(None), "the replay commits nothing: the batch is committed")
    assert(!table.state.isCommitted(replay.txn))
    assert(sinkLog(3L).map(_.path).toSet == firstFiles.toSet, "the sink log gets the EARLIER txn's files")
    assert(table.visible(replayFiles).distinct == Seq(false), "the replay's own files stay hidden")
  }
}
