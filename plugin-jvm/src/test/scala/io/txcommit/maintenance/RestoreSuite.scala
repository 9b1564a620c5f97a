package io.txcommit.maintenance

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{
  CheckpointLog,
  CheckpointWriter,
  CommitRecord,
  DataFileName,
  RecordCodec,
  RemovedFile,
  Replacement,
  ReplaceLog,
  TableSchema,
  TableState,
  TableVersions,
  TxnId
}
import io.txcommit.read.{CommittedFilesFilter, TableLogReader}
import io.txcommit.testing.TempTable

/**
 * A restore (docs/protocol.md, I31) on a local table, as Spark's read filter and VACUUM see it:
 * across checkpoints (one before the restore, one through it) and past VACUUM's horizon.
 */
class RestoreSuite extends AnyFunSuite {
  private val Hour = 3600L * 1000

  private def cold(): Unit = { TableLogReader.Records.clear(); ReplaceLog.cache.clear(); CheckpointLog.cache.clear() }

  /** The files a new read's filter shows, of `files`. */
  private def read(t: TempTable, files: Seq[String]): Seq[String] = {
    cold()
    val conf = new Configuration(t.conf)
    conf.set(TxCommitConf.MaxClockSkewMs, "0") // one clock: these tests are the writer too
    val f = new CommittedFilesFilter
    f.setConf(conf)
    Thread.sleep(2)
    files.filter(p => f.accept(new Path(t.table, p))).sorted
  }

  /** An append of `a`, then an overwrite of the table (sequence 1, committed at `overwrittenAt`) replacing it by `b`. */
  private def overwritten(t: TempTable, overwrittenAt: Long): (String, String) = {
    val (ta, tb) = (TxnId.generate(), TxnId.generate())
    val a = DataFileName("", 0, ta, 1L, "-c000.parquet")
    val b = DataFileName("", 0, tb, 1L, "-c000.parquet")
    t.touch(a); t.touch(b)
    t.commit(t.record(ta, a).copy(committedAt = overwrittenAt - 1))
    val o = t.record(tb, b).copy(committedAt = overwrittenAt, operation = CommitRecord.Overwrite,
      replacement = Some(Replacement(1L, Seq(""), Seq(RemovedFile(a, 3L)))))
    t.store.createExclusive(t.layout.replaceRecord(1L), RecordCodec.encode(o))
    (a, b)
  }

  test("a restore after a checkpoint shows the restored file; a checkpoint through it keeps the restore") {
    val t = new TempTable
    t.conf.set(TxCommitConf.CheckpointInterval, "0") // the checkpoints are this test's own
    val (a, b) = overwritten(t, System.currentTimeMillis())
    Thread.sleep(2)
    val first = CheckpointWriter.write(t.table, t.store, None).written.get
    assert(first.committed.values.flatten.map(_.path).toSeq == Seq(b), "the checkpoint dropped the removed file")
    Thread.sleep(2)
    val r = Restore.run(t.table, t.store, t.conf, Seq(RemovedFile(a, 3L)))
    assert(r.restored.map(_.path) == Seq(a))
    assert(read(t, Seq(a, b)) == Seq(a), "restored although the checkpoint's list of its txn lacks it")
    val second = CheckpointWriter.write(t.table, t.store, None).written.get
    assert(second.through == 2L && second.removed.isEmpty)
    assert(second.committed.values.flatten.map(_.path).toSeq == Seq(a), "the restored file is its txn's again")
    // The read uses the second checkpoint alone: the records it folds in are not read.
    t.writeRaw("_txcommit/replace/" + t.layout.replaceRecord(2L).getName, "{ damaged")
    t.writeRaw("_txcommit/commits/" + t.layout.commitRecord(r.txn).getName, "{ damaged")
    assert(read(t, Seq(a, b)) == Seq(a))
  }

  for (checkpointed <- Seq(false, true))
    test("a restore takes the schema I27 put in force at its version: the record that committed last " +
      s"(committedAt), whatever order the store dated them in${if (checkpointed) ", from a checkpoint" else ""}") {
      val t = new TempTable
      t.conf.set(TxCommitConf.CheckpointInterval, "0")
      val now = System.currentTimeMillis()
      val (a, b, c) = (TxnId.generate(), TxnId.generate(), TxnId.generate())
      val (fa, fb, fc) = (DataFileName("", 0, a, 1L, "-c000.parquet"), DataFileName("", 0, b, 1L, "-c000.parquet"),
        DataFileName("", 0, c, 1L, "-c000.parquet"))
      Seq(fa, fb, fc).foreach(t.touch(_))
      // a's driver runs an hour ahead: its record says so, the store dated it first (version 1).
      t.publish(t.layout.commitRecord(a),
        RecordCodec.encode(t.record(a, fa).copy(committedAt = now + Hour, schema = Some("id BIGINT"))), now - 3000)
      t.publish(t.layout.commitRecord(b),
        RecordCodec.encode(t.record(b, fb).copy(committedAt = now - 2000, schema = Some("id BIGINT, x STRING"))),
        now - 2000)
      val inForce = TableSchema.current(new TableState(t.table, t.store, t.conf)).map(_.ddl)
      assert(inForce.contains("id BIGINT"), "I27: a's mark committed last")
      // A checkpoint of both, which the snapshot of version 2 uses: its mark stands for their records.
      if (checkpointed)
        assert(CheckpointWriter.write(t.table, t.store, None).written.exists(_.schema.flatten.map(_.ddl) == inForce))
      val o = t.record(c, fc).copy(committedAt = now - 1000, operation = CommitRecord.Overwrite,
        schema = Some("y INT"),
        replacement = Some(Replacement(1L, Seq(""), Seq(RemovedFile(fa, 3L), RemovedFile(fb, 3L)))))
      t.publish(t.layout.replaceRecord(1L), RecordCodec.encode(o), now - 1000)
      cold()
      val (version, restore) = Restore.toVersion(t.table, t.conf, TableVersions.AsOfTxn(b), "TXCOMMIT RESTORE")
      assert(version.number == 2L && restore.restored.map(_.path).toSet == Set(fa, fb))
      assert(restore.schema == inForce, "the schema the guard judged writes against right after version 2")
    }

  test("VACUUM keeps a file a restore re-added, though an overwrite past the horizon had removed it") {
    val t = new TempTable
    val now = System.currentTimeMillis()
    val (a, b) = overwritten(t, now - 3 * Hour)
    Restore.run(t.table, t.store, t.conf, Seq(RemovedFile(a, 3L)))
    val deleted = Vacuum.run(t.table, t.conf, VacuumOptions(retainHours = 1), now = now + 1000).map(_.path)
    assert(!deleted.contains(a) && Files.exists(t.dir.resolve(a)), "visible again: never garbage")
    assert(!deleted.contains(b), "removed by the restore just now: within the horizon")
    assert(read(t, Seq(a, b)) == Seq(a))
    // Past the horizon of the restore too, what it removed goes and what it re-added stays.
    val later = Vacuum.run(t.table, t.conf, VacuumOptions(retainHours = 1), now = now + 2 * Hour).map(_.path)
    assert(later == Seq(b) && Files.exists(t.dir.resolve(a)))
  }
}
