package io.txcommit.s3

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.store.{Adapters, CommitStore, StagedFile, StoreContractSuite}

/** Starts one local S3 endpoint per suite. */
trait WithLocalS3 extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected def ignoreIfNoneMatch: Boolean = false
  protected lazy val s3 = new LocalS3Process(ignoreIfNoneMatch)
  override protected def afterAll(): Unit =
    try s3.close()
    finally super.afterAll()
}

/** The `s3` (conditional-put) adapter bound to the store contract, on a real S3 endpoint. */
class S3ConditionalPutContractSuite extends StoreContractSuite with WithLocalS3 {
  override protected def freshTable(): (Path, CommitStore) = {
    val conf = s3.conf()
    val t = s3.freshTable()
    (t, Adapters.open(t, conf))
  }
}

/** The `s3-multipart` adapter bound to the same contract (its records use the same primitive). */
class S3MultipartContractSuite extends StoreContractSuite with WithLocalS3 {
  override protected def freshTable(): (Path, CommitStore) = {
    val conf = s3.conf()
    conf.set("spark.txcommit.adapter.s3a", "s3-multipart")
    val t = s3.freshTable()
    (t, Adapters.open(t, conf))
  }
}

class S3AdapterSuite extends AnyFunSuite with WithLocalS3 {
  test("s3a paths get the conditional-put adapter by default and multipart on request") {
    val t = s3.freshTable()
    assert(Adapters.forPath(t, s3.conf()).name == "s3")
    val c = s3.conf(); c.set("spark.txcommit.adapter.s3a", "s3-multipart")
    assert(Adapters.forPath(t, c).name == "s3-multipart")
  }

  test("a request whose thread is interrupted fails as an interruption, which Spark takes for a stop") {
    val t = s3.freshTable()
    val store = Adapters.open(t, s3.conf())
    store.read(new Path(t, "_txcommit/commits/x.json")) // the client is up: the next request is the one cut short
    Thread.currentThread().interrupt() // a streaming query's stop(): its thread is interrupted
    val e =
      try intercept[java.io.IOException](store.read(new Path(t, "_txcommit/commits/0123456789abcdef.json")))
      finally Thread.interrupted()
    // Spark's StreamExecution.isInterruptionException: a stop, not a query "terminated with error".
    assert(e.isInstanceOf[java.io.InterruptedIOException], e)
    assert(e.getMessage.contains("_txcommit/commits/0123456789abcdef.json"), "it names the key")
  }

  /** A fresh table on the `s3-multipart` adapter, the conf it was opened with, and its store. */
  private def multipartStore(): (Path, org.apache.hadoop.conf.Configuration, CommitStore) = {
    val t = s3.freshTable()
    val conf = s3.conf(); conf.set("spark.txcommit.adapter.s3a", "s3-multipart")
    (t, conf, Adapters.open(t, conf))
  }

  test("a data file written through the multipart adapter's create path is an upload, invisible until published") {
    val (t, conf, store) = multipartStore()
    val txn = "0123456789abcdef"
    val rel = s"d=1/part-00000-tid-$txn-7.parquet"
    val written = store.dataWritePath(t, new Path(t, rel), txn, "attempt_1")
    val fs = t.getFileSystem(conf)
    assert(written.toUri.getScheme == "txcommit-upload+s3a")
    // Two parts: one full (S3AtomicOutput.PartSize), then the rest.
    val data = Array.tabulate[Byte](S3AtomicOutput.PartSize + 1024 * 1024)(i => (i % 251).toByte)
    val out = written.getFileSystem(conf).create(written, true); out.write(data); out.close()
    val staged = store.stagedFile(t, rel, written).get
    assert(staged.size == data.length && staged.pending.exists(_.contains("\"etags\"")))
    assert(written.getFileSystem(conf).getFileStatus(written).getLen == data.length, "Spark's tracker asks this")
    assert(store.list(new Path(t, "d=1")).isEmpty, "in-flight data must not be listed")
    store.publishData(t, Seq(staged))
    store.publishData(t, Seq(staged)) // idempotent: a retried commit completes nothing twice
    assert(store.list(new Path(t, "d=1")).map(_.getLen) == Seq(data.length.toLong))
    val in = fs.open(new Path(t, rel))
    try assert(org.apache.commons.io.IOUtils.toByteArray(in).sameElements(data), "the parts in order")
    finally in.close()
    store.cleanupStaging(t, txn, Set(rel))
    assert(fs.listStatus(t).map(_.getPath.getName).toSeq == Seq("d=1"), "staging markers are removed")
  }

  test("a data file aborted after its first part leaves no upload open and nothing to commit") {
    val (t, conf, store) = multipartStore()
    val txn = "0123456789abcdei"
    val rel = s"part-00000-tid-$txn-3.parquet"
    val written = store.dataWritePath(t, new Path(t, rel), txn, "attempt_3")
    val out = written.getFileSystem(conf).create(written, true)
    out.write(Array.fill[Byte](S3AtomicOutput.PartSize + 1)(1)) // the first part is sent
    assert(store.openUploads(t).map(_.path) == Seq(rel))
    out.abort() // a task killed while writing: Spark aborts its writer
    out.close()
    assert(store.openUploads(t).isEmpty && store.stagedFile(t, rel, written).isEmpty)
  }

  /** A fresh table on the `s3-multipart` adapter, and a function staging a one-byte file of
    * transaction `txn` as task attempt `attempt` (an upload started, not completed). */
  private def multipartTable(txn: String): (Path, CommitStore, (String, String) => StagedFile) = {
    val (t, conf, store) = multipartStore()
    def stage(rel: String, attempt: String) = {
      val w = store.dataWritePath(t, new Path(t, rel), txn, attempt)
      val o = w.getFileSystem(conf).create(w, true); o.write("x".getBytes(UTF_8)); o.close()
      store.stagedFile(t, rel, w).get
    }
    (t, store, stage)
  }

  test("abort and cleanup abort uploads of losing and unknown attempts, keeping committed ones") {
    val txn = "0123456789abcdeg"
    val (t, store, stage) = multipartTable(txn)
    val winner = stage(s"part-00000-tid-$txn-1.csv", "attempt_1")
    stage(s"part-00000-tid-$txn-2.csv", "attempt_2") // a speculative loser nobody reports
    store.publishData(t, Seq(winner))
    assert(store.cleanupStaging(t, txn, Set(winner.path)) == 1)
    assert(store.cleanupStaging(t, txn, Set(winner.path)) == 0)
    assert(store.list(t).map(_.getPath.getName) == Seq(winner.path))
  }

  test("discarding data already published (a replacing commit that lost after its uploads completed) deletes it") {
    val txn = "0123456789abcdeh"
    val (t, store, stage) = multipartTable(txn)
    val staged = Seq(1, 2).map(i => stage(s"k=$i/part-0000$i-tid-$txn-$i.csv", s"attempt_$i"))
    store.publishData(t, staged.take(1)) // completed, then the commit lost: abort meets a 404
    assert(store.discardData(t, staged) == 2, "both files are discarded: one deleted, one aborted")
    assert(Seq("k=1", "k=2").flatMap(d => store.list(new Path(t, d))).isEmpty, "no data object is left")
    assert(store.openUploads(t).isEmpty, "no upload is left open")
  }
}
