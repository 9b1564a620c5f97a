package io.txcommit.log

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.CorruptCheckpointException
import io.txcommit.commit.WriteCheckpoint
import io.txcommit.conf.TxCommitConf
import io.txcommit.read.{CommittedFilesFilter, TableLogReader}
import io.txcommit.testing.TempTable

/**
 * Checkpoints (protocol invariant I20): a reader that uses one judges every file exactly as the
 * records alone would (restores included, I31), reads no record the checkpoint covers, never uses one published after its
 * read began, and skips one it cannot decode.
 */
class CheckpointSuite extends AnyFunSuite {
  private def filterFor(t: TempTable): CommittedFilesFilter = {
    val conf = new Configuration(t.conf)
    conf.set(TxCommitConf.MaxClockSkewMs, "0") // one clock: these tests are the writer too
    val f = new CommittedFilesFilter
    f.setConf(conf)
    f
  }

  private def cold(): Unit = { TableLogReader.Records.clear(); ReplaceLog.cache.clear(); CheckpointLog.cache.clear() }

  private def file(dir: String, txn: String, attempt: Int): String =
    (if (dir.isEmpty) "" else dir + "/") + DataFileName("", attempt % 7, txn, attempt.toLong, "-c000.parquet")

  private def now: Long = { Thread.sleep(2); System.currentTimeMillis() }

  /** A table built by random commits; `checkpoint()` writes one through [[CheckpointWriter]]. */
  private final class RandomTable(seed: Long) {
    val t = new TempTable
    val rnd = new Random(seed)
    private var sequence = 0L
    private var n = 0
    private val dirs = Seq("", "k=1", "k=2", "k=3")
    def live: Seq[String] = version.map(_.path)
    private def version: Seq[RemovedFile] = {
      val s = new TableState(t.table, t.store, t.conf)
      s.dataFiles().filter(s.isVisible).map(RemovedFile.of)
    }
    // The table's versions so far (its visible files after each step), for restores.
    private val versions = scala.collection.mutable.ArrayBuffer.empty[Seq[RemovedFile]]
    var restores = 0

    private def newFiles(txn: String): Seq[String] = (0 until 1 + rnd.nextInt(3)).map { _ =>
      n += 1
      val f = file(dirs(rnd.nextInt(dirs.size)), txn, n)
      t.touch(f); f
    }

    def step(): Unit = { change(); versions += version }

    private def change(): Unit = rnd.nextInt(7) match {
      case 0 | 1 => // an append, with a failed attempt's file now and then
        val txn = TxnId.generate()
        val files = newFiles(txn)
        if (rnd.nextBoolean()) { n += 1; t.touch(file("k=1", txn, n)) }
        t.commit(t.record(txn, files: _*).copy(committedAt = now))
      case 2 => // never committed
        newFiles(TxnId.generate())
      case 3 => // a file written without txcommit
        n += 1; t.touch(s"${dirs(rnd.nextInt(dirs.size))}/plain-$n.parquet".stripPrefix("/"))
      case 4 => // an overwrite of one directory, removing what is visible there
        val dir = dirs.tail(rnd.nextInt(3))
        val txn = TxnId.generate()
        val removed = live.filter(p => CommitRecord.dirOf(p) == dir)
        val files = newFiles(txn).filter(p => CommitRecord.dirOf(p) != "" || true)
        sequence += 1
        val r = t.record(txn, files: _*).copy(committedAt = now, operation = CommitRecord.OverwritePartitions,
          replacement = Some(Replacement(sequence, Seq(dir), removed.map(RemovedFile(_, 3L)))))
        t.store.createExclusive(t.layout.replaceRecord(sequence), RecordCodec.encode(r))
        if (rnd.nextBoolean()) t.store.createExclusive(t.layout.commitRecord(txn), RecordCodec.encode(r))
      case 5 => // a fence on a transaction that wrote files
        val txn = TxnId.generate()
        newFiles(txn)
        t.commit(t.record(txn).copy(committedAt = now, operation = CommitRecord.Fence))
      case _ if versions.nonEmpty => // a restore to an earlier version (I31): exactly its files again
        val target = versions(rnd.nextInt(versions.size))
        Thread.sleep(2)
        sequence = io.txcommit.maintenance.Restore.run(t.table, t.store, t.conf, target).sequence.get
        restores += 1
        assert(live.sorted == target.map(_.path).sorted, "a restore shows exactly its target")
      case _ =>
    }

    def checkpoint(): CheckpointWriter.Outcome = { Thread.sleep(2); CheckpointWriter.write(t.table, t.store, None) }

    /** Every data file, as a new read's filter judges it (from a cold JVM). */
    def read(): Seq[String] = {
      cold()
      val f = filterFor(t)
      Thread.sleep(2)
      new TableState(t.table, t.store, t.conf).dataFiles().map(_.path).filter(p => f.accept(new Path(t.table, p)))
    }
  }

  test("a reader with a checkpoint sees exactly what the records alone show, whatever the history") {
    var restores = 0
    for (seed <- 1L to 12L) {
      val x = new RandomTable(seed)
      for (round <- 1 to 6) {
        (0 until 1 + x.rnd.nextInt(8)).foreach(_ => x.step())
        val expected = x.live.sorted
        if (x.rnd.nextInt(3) > 0) x.checkpoint()
        assert(x.read().sorted == expected, s"seed $seed, round $round")
      }
      assert(CheckpointLog.list(x.t.layout, x.t.store.list).highest > 0, s"seed $seed wrote no checkpoint")
      restores += x.restores
    }
    assert(restores > 10, "the histories restore earlier versions")
  }

  test("a cold reader reads no record a checkpoint covers") {
    val x = new RandomTable(99L)
    (0 until 30).foreach(_ => x.step())
    val expected = x.live.sorted
    assert(x.checkpoint().written.isDefined)
    // Damage every record in commits/: a read that fetched one would fail on it.
    for (st <- x.t.store.list(x.t.layout.commitsDir)) {
      x.t.writeRaw(s"_txcommit/commits/${st.getPath.getName}", "{ damaged")
    }
    assert(x.read().sorted == expected)
  }

  test("a checkpoint published after the read began is not used by it") {
    val t = new TempTable
    val early = TxnId.generate()
    t.touch(file("", early, 1))
    t.commit(t.record(early, file("", early, 1)).copy(committedAt = now))
    CheckpointWriter.write(t.table, t.store, None)
    cold()
    val f = filterFor(t) // the read begins
    Thread.sleep(2)
    val late = TxnId.generate()
    t.touch(file("", late, 2))
    t.commit(t.record(late, file("", late, 2)).copy(committedAt = now))
    assert(CheckpointWriter.write(t.table, t.store, None).written.exists(_.covers(late)))
    assert(f.accept(new Path(t.table, file("", early, 1))))
    assert(!f.accept(new Path(t.table, file("", late, 2))), "committed after the read began")
  }

  test("a corrupt newest checkpoint is skipped: the older one and the records give the same answer") {
    val x = new RandomTable(7L)
    (0 until 20).foreach(_ => x.step())
    x.checkpoint()
    (0 until 10).foreach(_ => x.step())
    val c = x.checkpoint().written.get
    val expected = x.live.sorted
    x.t.writeRaw(s"_txcommit/checkpoints/${LogLayout.replaceRecordName(c.number)}",
      new String(CheckpointCodec.encode(c), UTF_8).take(40))
    assert(x.read().sorted == expected)
    val e = intercept[CorruptCheckpointException](CheckpointCodec.decode(
        CheckpointCodec.encode(c).take(40), "cp.json", c.number))
    assert(e.getMessage.contains("checkpoint cp.json is corrupt: it is not complete JSON"))
  }

  test("the writer writes nothing when the newest checkpoint is up to date, and numbers the next one") {
    val x = new RandomTable(3L)
    // Only this test writes checkpoints: a restore among the steps writes one when its random
    // txn id makes it due (about one in ten), and then the first one here would be number 2.
    x.t.conf.setLong(TxCommitConf.CheckpointInterval, 0L)
    (0 until 5).foreach(_ => x.step())
    assert(x.checkpoint().written.map(_.number).contains(1L))
    assert(x.checkpoint().written.isEmpty)
    x.step(); x.step(); x.step(); x.step()
    val txn = TxnId.generate() // random steps may commit nothing: one append that surely does
    x.t.touch(file("", txn, 1000))
    x.t.commit(x.t.record(txn, file("", txn, 1000)).copy(committedAt = now))
    val second = x.checkpoint()
    assert(second.written.map(_.number).contains(2L), "a commit after the newest checkpoint makes the next one")
  }

  test("a checkpoint round-trips through its codec") {
    val x = new RandomTable(5L)
    (0 until 25).foreach(_ => x.step())
    val c = x.checkpoint().written.get
    assert(CheckpointCodec.decode(CheckpointCodec.encode(c), "cp", c.number) == c)
  }

  test("about one commit in n writes a checkpoint; 1 is every commit, 0 none") {
    val txns = (0 until 5000).map(_ => TxnId.generate())
    assert(txns.forall(WriteCheckpoint.due(_, 1L)))
    assert(!txns.exists(WriteCheckpoint.due(_, 0L)))
    val share = txns.count(WriteCheckpoint.due(_, 10L)).toDouble / txns.size
    assert(share > 0.07 && share < 0.13, s"share $share")
  }
}
