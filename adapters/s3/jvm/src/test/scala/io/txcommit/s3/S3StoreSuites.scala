package io.txcommit.s3

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.commit.{PublishCommitRecord, StageTimings, TxnContext}
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec}
import io.txcommit.store.{Adapters, CommitStore, StoreContractSuite}

/** Starts one local S3 endpoint per suite. */
trait WithLocalS3 extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected def ignoreIfNoneMatch: Boolean = false
  protected lazy val s3 = new LocalS3Process(ignoreIfNoneMatch)
  override protected def afterAll(): Unit = try s3.close() finally super.afterAll()
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

  test("the conditional-put probe passes on an endpoint that honours If-None-Match and leaves nothing") {
    ConditionalPutProbe.reset()
    val t = s3.freshTable()
    val store = Adapters.open(t, s3.conf())
    store.checkReady(t)
    // The refused second create reads the id of the object it met (a lost answer's resend
    // would meet its own).
    assert(store.requests.snapshot == Map("PUT" -> 2L, "HEAD" -> 1L, "DELETE" -> 1L))
    store.checkReady(t) // cached: no more requests
    assert(store.requests.total == 4)
    assert(store.list(new Path(t, "_txcommit/probe")).isEmpty)
  }

  test("a zombie driver committing the same transaction again gets a conflict, not an overwrite") {
    val t = s3.freshTable()
    val txn = "0123456789abcdeh"
    def publish(token: String) = {
      val store = Adapters.open(t, s3.conf())
      val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
      PublishCommitRecord.run(TxnContext(t, txn, token, "job", 1L, s3.conf(), store), record, new StageTimings)
      store
    }
    val store = publish("first-driver")
    val e = intercept[CommitConflictException](publish("zombie-driver"))
    assert(e.getMessage.contains(s"txn $txn") && e.getMessage.contains("already committed"))
    val kept = RecordCodec.decode(store.read(new Path(t, s"_txcommit/commits/$txn.json")).get, "r", txn)
    assert(kept.token == "first-driver")
  }

  test("a commit record whose PUT answer was lost commits on both adapters; another driver's still conflicts") {
    for (adapter <- Seq("s3", "s3-multipart")) {
      val t = s3.freshTable()
      val conf = s3.conf(); conf.set("spark.txcommit.adapter.s3a", adapter)
      val txn = "0123456789abcdei"
      def publish(token: String): Unit = {
        val store = Adapters.open(t, conf)
        val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
        PublishCommitRecord.run(TxnContext(t, txn, token, "job", 1L, conf, store), record, new StageTimings)
      }
      s3.loseAnswers(s"PUT .*/_txcommit/commits/$txn.json")
      publish("first-driver")
      assert(s3.lostAnswers.exists(_.endsWith(s"${t.toUri.getPath}/_txcommit/commits/$txn.json")), adapter)
      intercept[CommitConflictException](publish("zombie-driver"))
      val kept = RecordCodec.decode(Adapters.open(t, conf).read(new Path(t, s"_txcommit/commits/$txn.json")).get, "r", txn)
      assert(kept.token == "first-driver", adapter)
    }
  }

  test("a multipart upload staged through a magic path is invisible until published") {
    val t = s3.freshTable()
    val conf = s3.conf(); conf.set("spark.txcommit.adapter.s3a", "s3-multipart")
    val store = Adapters.open(t, conf)
    val txn = "0123456789abcdef"
    val rel = s"d=1/part-00000-tid-$txn-7.parquet"
    val written = store.dataWritePath(t, new Path(t, rel), txn, "attempt_1")
    val fs = t.getFileSystem(conf)
    val data = Array.fill[Byte](6 * 1024 * 1024)(7)
    val out = fs.create(written, true); out.write(data); out.close()
    val staged = store.stagedFile(t, rel, written).get
    assert(staged.size == data.length && staged.pending.isDefined)
    assert(store.list(new Path(t, "d=1")).isEmpty, "in-flight data must not be listed")
    store.publishData(t, Seq(staged))
    store.publishData(t, Seq(staged)) // idempotent: a retried commit completes nothing twice
    assert(store.list(new Path(t, "d=1")).map(_.getLen) == Seq(data.length.toLong))
    store.cleanupStaging(t, txn, Set(rel))
    assert(fs.listStatus(t).map(_.getPath.getName).toSeq == Seq("d=1"), "staging markers are removed")
  }

  test("abort and cleanup abort uploads of losing and unknown attempts, keeping committed ones") {
    val t = s3.freshTable()
    val conf = s3.conf(); conf.set("spark.txcommit.adapter.s3a", "s3-multipart")
    val store = Adapters.open(t, conf)
    val txn = "0123456789abcdeg"
    val fs = t.getFileSystem(conf)
    def stage(rel: String, attempt: String) = {
      val w = store.dataWritePath(t, new Path(t, rel), txn, attempt)
      val o = fs.create(w, true); o.write("x".getBytes(UTF_8)); o.close()
      store.stagedFile(t, rel, w).get
    }
    val winner = stage(s"part-00000-tid-$txn-1.csv", "attempt_1")
    stage(s"part-00000-tid-$txn-2.csv", "attempt_2") // a speculative loser nobody reports
    store.publishData(t, Seq(winner))
    assert(store.cleanupStaging(t, txn, Set(winner.path)) == 1)
    assert(store.cleanupStaging(t, txn, Set(winner.path)) == 0)
    assert(store.list(t).map(_.getPath.getName) == Seq(winner.path))
  }
}

/** An endpoint that accepts If-None-Match and ignores it must be refused, naming it. */
class S3LyingEndpointSuite extends AnyFunSuite with WithLocalS3 {
  override protected def ignoreIfNoneMatch: Boolean = true

  test("a store that ignores If-None-Match is detected and refused, without leaking credentials") {
    ConditionalPutProbe.reset()
    val t = s3.freshTable()
    val store = Adapters.open(t, s3.conf())
    val e = intercept[UnsupportedStoreException](store.checkReady(t))
    assert(e.getMessage.contains(s3.endpoint) && e.getMessage.contains("If-None-Match"))
    assert(e.getMessage.contains("spark.txcommit.s3.verifyConditionalPut=false"))
    assert(!e.getMessage.contains(s3.secret))
    val optOut = s3.conf(); optOut.set("spark.txcommit.s3.verifyConditionalPut", "false")
    Adapters.open(t, optOut).checkReady(t) // the user's explicit choice
  }
}
