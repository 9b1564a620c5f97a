package io.txcommit.streaming

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.Try

import org.apache.commons.io.IOUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, Path}
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.store.{AtomicFileExistsException, StoreContractSuite}
import io.txcommit.streaming.SparkStreamingApi.CheckpointFileManager

/**
 * CommitStore point 8 as Spark uses it: the checkpoint file manager on a real store. Every
 * adapter binds in a few lines (a fresh checkpoint directory and the conf reaching it).
 */
abstract class CheckpointManagerContractSuite extends AnyFunSuite {

  /** A new, empty checkpoint directory on the store under test, and the Hadoop conf for it. */
  protected def freshCheckpoint(): (Path, Configuration)

  /** The adapter the manager must pick for it. */
  protected def expectedAdapter: String

  /** Multipart uploads still open under `root` (always empty where the store has none). */
  protected def openUploads(root: Path, conf: Configuration): Seq[String] = Nil

  protected def manager(): (Path, Configuration, CheckpointFileManager) = {
    val (root, conf) = freshCheckpoint()
    conf.set(TxCommitCheckpointFileManager.ConfKey, classOf[TxCommitCheckpointFileManager].getName)
    (root, conf, CheckpointFileManager.create(root, conf))
  }

  protected def read(fm: CheckpointFileManager, p: Path): String = {
    val in = fm.open(p)
    try new String(IOUtils.toByteArray(in), UTF_8)
    finally in.close()
  }

  /** False where reads and listings through the store's Hadoop file system cannot be checked
    * from here (an emulator that lacks the API that file system speaks): the tests that read
    * are then registered as ignored, which every report counts as skipped, never as passed.
    * Decided while the suite registers its tests, so it must not depend on a subclass's vals. */
  protected def readsCheckable: Boolean = true

  /** A test that reads or lists what it wrote through the manager. */
  protected def readingTest(name: String)(body: => Any): Unit =
    if (readsCheckable) test(name)(body) else ignore(name)(body)

  /** Names a listing shows, without hidden temporary files (Spark ignores those as well). */
  protected def visible(fm: CheckpointFileManager, dir: Path): Seq[String] =
    if (!fm.exists(dir)) Nil else fm.list(dir).map(_.getPath.getName).filterNot(_.startsWith(".")).toSeq.sorted

  test("Spark's CheckpointFileManager.create picks the txcommit manager and the scheme's adapter") {
    val (_, _, fm) = manager()
    assert(fm.isInstanceOf[TxCommitCheckpointFileManager])
    assert(fm.asInstanceOf[TxCommitCheckpointFileManager].adapterName == expectedAdapter)
  }

  readingTest("a file is invisible while written and appears whole on close") {
    val (root, _, fm) = manager()
    val target = new Path(root, "offsets/0")
    val out = fm.createAtomic(target, false)
    out.write("v1\n".getBytes(UTF_8))
    out.flush()
    out.write("{\"batch\":0}".getBytes(UTF_8))
    assert(!fm.exists(target) && visible(fm, target.getParent).isEmpty, "nothing visible before close")
    out.close()
    assert(read(fm, target) == "v1\n{\"batch\":0}")
    out.cancel() // after close: does nothing
    assert(fm.exists(target))
  }

  readingTest("cancel leaves nothing visible and nothing billed") {
    val (root, conf, fm) = manager()
    val target = new Path(root, "state/0/0/1.delta")
    val out = fm.createAtomic(target, true)
    out.write(Array.fill[Byte](1024)(1))
    out.cancel()
    out.close() // after cancel: does nothing
    assert(!fm.exists(target) && visible(fm, target.getParent).isEmpty)
    assert(openUploads(root, conf).isEmpty)
  }

  readingTest("without overwrite an existing file is kept and the writer gets FileAlreadyExistsException") {
    val (root, conf, fm) = manager()
    val target = new Path(root, "commits/3")
    val first = fm.createAtomic(target, false); first.write("first".getBytes(UTF_8)); first.close()
    val second = fm.createAtomic(target, false); second.write("second".getBytes(UTF_8))
    val e = intercept[FileAlreadyExistsException](second.close())
    assert(e.isInstanceOf[AtomicFileExistsException] && e.getMessage.contains("commits/3"))
    second.cancel() // what Spark's HDFSMetadataLog does next
    assert(read(fm, target) == "first")
    assert(visible(fm, target.getParent) == Seq("3"))
    assert(openUploads(root, conf).isEmpty)
  }

  readingTest("with overwrite the new content replaces the old one") {
    val (root, _, fm) = manager()
    val target = new Path(root, "state/0/0/2.snapshot")
    Seq("old", "new").foreach { v =>
      val out = fm.createAtomic(target, true); out.write(v.getBytes(UTF_8)); out.close()
    }
    assert(read(fm, target) == "new")
    assert(visible(fm, target.getParent) == Seq("2.snapshot"))
  }

  readingTest("a writer interrupted before or while it closes publishes the whole file or nothing") {
    // A stopped query's thread is interrupted, and Spark may still write a log file with the
    // flag set (after an earlier store call swallowed the interrupt).
    val (root, conf, fm) = manager()
    val big = Array.tabulate[Byte](1536 * 1024 + 7)(i => (i % 241).toByte)
    for ((delayMs, i) <- Seq(None, Some(0L), Some(10L), Some(50L)).zipWithIndex; overwrite <- Seq(false, true)) {
      val target = new Path(root, s"commits/$i${if (overwrite) ".snapshot" else ""}")
      StoreContractSuite.interruptedWhile(delayMs) {
        val out = fm.createAtomic(target, overwrite)
        try { out.write(big); out.close() }
        catch { case e: Throwable => out.cancel(); throw e }
      }
      val got = if (!fm.exists(target)) None
      else {
        val in = fm.open(target)
        try Some(IOUtils.toByteArray(in))
        finally in.close()
      }
      assert(got.forall(java.util.Arrays.equals(_, big)),
        s"interrupted ${delayMs.fold("before")(d => s"$d ms into")} the write: ${target.getName} holds " +
          s"${got.map(_.length).getOrElse(0)} of ${big.length} bytes")
    }
    assert(openUploads(root, conf).isEmpty, "an interrupted writer leaves no upload open")
  }

  /** Racing writers of one batch file, each writing `size` bytes of its own. */
  protected def race(writers: Int, size: Int): Unit = {
    val (root, conf, fm) = manager()
    val target = new Path(root, "offsets/7")
    val pool = Executors.newFixedThreadPool(writers)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    val go = new CountDownLatch(1)
    val results = (0 until writers).map { i =>
      Future {
        val out = fm.createAtomic(target, false)
        go.await()
        Try {
          try { out.write(Array.fill[Byte](size)(('a' + i).toByte)); out.close() }
          catch { case e: Throwable => out.cancel(); throw e }
          i
        }
      }
    }
    go.countDown()
    val outcomes = Await.result(Future.sequence(results), 120.seconds)
    pool.shutdown(); pool.awaitTermination(5, TimeUnit.SECONDS)
    val winners = outcomes.flatMap(_.toOption)
    assert(winners.size == 1, s"winners: $winners, failures: ${outcomes.filter(_.isFailure)}")
    outcomes.filter(_.isFailure).map(_.failed.get).foreach { e =>
      assert(e.isInstanceOf[FileAlreadyExistsException], e)
      assert(e.getMessage.contains("offsets/7") && e.getMessage.contains("another writer"))
    }
    val content = read(fm, target)
    assert(content.length == size && content.forall(_ == ('a' + winners.head).toChar), "the winner's bytes, whole")
    assert(visible(fm, target.getParent) == Seq("7"), "no partial or duplicate file")
    assert(openUploads(root, conf).isEmpty, "the losers' uploads are aborted")
  }

  readingTest("8 writers race for one batch file: exactly one wins, the others get a clear error") {
    race(writers = 8, size = 300)
  }
}

/** The `local` adapter (link(2) refuses an existing target). */
class LocalCheckpointManagerSuite extends CheckpointManagerContractSuite {
  override protected def expectedAdapter = "local"
  override protected def freshCheckpoint(): (Path, Configuration) = {
    val dir = java.nio.file.Files.createTempDirectory("txcommit-ckpt")
    (new Path(dir.toUri.toString.stripSuffix("/")), new Configuration())
  }

  readingTest("temporary files are written without Hadoop .crc side files and removed after publishing") {
    val (root, _, fm) = manager()
    val target = new Path(root, "commits/0")
    val out = fm.createAtomic(target, false); out.write("x".getBytes(UTF_8)); out.close()
    assert(fm.list(target.getParent).map(_.getPath.getName).toSeq == Seq("0"))
  }
}
