package io.txcommit.store

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.commit.{PublishCommitRecord, StageTimings, TxnContext}
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec}

/**
 * What a conditional-put adapter (a commit record is one create carrying the store's
 * precondition: S3's and Azure's `If-None-Match: *`, GCS's `ifGenerationMatch=0`) must do beyond
 * [[StoreContractSuite]], as tests each such adapter binds to in a few lines, on its real store:
 *
 *  - its readiness probe passes on an honest endpoint through the records' request, caches the
 *    verdict and leaves nothing behind;
 *  - an endpoint that accepts the precondition and ignores it is refused before any data, naming
 *    the endpoint, the precondition and the opt-out, never a credential;
 *  - the commit point is one request, and a second driver publishing the same transaction's
 *    record gets a conflict, never an overwrite;
 *  - a record whose answer was lost is recognised as the writer's own on the resend, and another
 *    driver's record for it still conflicts (docs/protocol.md, I17).
 */
abstract class ConditionalPutSuite extends AnyFunSuite {
  import ConditionalPutSuite.FaultEndpoint

  /** A new, empty table directory on the store under test. */
  protected def freshTable(): Path

  /** Settings reaching the store directly. */
  protected def conf(): Configuration

  /** Forgets what the adapter's probe verified in this JVM, so the next check sends requests. */
  protected def resetProbe(): Unit

  /**
   * The same store behind a fault endpoint. `lying`: the endpoint drops the precondition from
   * every request, so exclusive creates overwrite there.
   */
  protected def faultEndpoint(lying: Boolean): FaultEndpoint

  /** A pattern the fault endpoint matches against the request that publishes `relative` in `table`. */
  protected def publishRequest(table: Path, relative: String): String

  /** How the adapter's errors name its precondition (e.g. `If-None-Match`). */
  protected def precondition: String

  /** The conf that skips the probe. */
  protected def optOut: String

  /**
   * The requests the store serves for the probe: two creates, the refused one's create id read
   * back, the probe deleted (more where a delete is more than one request at the wire).
   */
  protected def probeRequests: Int = 4

  private def text(s: String) = s.getBytes(UTF_8)

  private def publish(table: Path, conf: Configuration, txn: String, token: String): CommitStore = {
    val store = Adapters.open(table, conf)
    val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
    PublishCommitRecord.run(TxnContext(table, txn, token, "job", 1L, conf, store), record, new StageTimings)
    store
  }

  private def tokenOf(table: Path, txn: String): String =
    RecordCodec.decode(Adapters.open(table, conf()).read(new Path(table, s"_txcommit/commits/$txn.json")).get, "r",
      txn).token

  test(
    "conditional put: the probe passes on an honest endpoint through the records' request, once, and leaves nothing") {
    val endpoint = faultEndpoint(lying = false)
    try {
      resetProbe()
      val t = freshTable()
      val store = Adapters.open(t, endpoint.conf())
      store.checkReady(t)
      // Counted where the store serves them: two creates, the refused one's create id read
      // back (a lost answer's resend would meet its own), the probe deleted.
      assert(endpoint.served.size == probeRequests, endpoint.served)
      store.checkReady(t) // verified: no more requests
      assert(endpoint.served.size == probeRequests, endpoint.served)
      assert(store.list(new Path(t, "_txcommit/probe")).isEmpty)
    } finally { endpoint.close(); resetProbe() }
  }

  test(
    "conditional put: an endpoint that ignores the precondition is refused, naming it and the opt-out, never a credential") {
    val liar = faultEndpoint(lying = true)
    try {
      resetProbe()
      val t = freshTable()
      val store = Adapters.open(t, liar.conf())
      val e = intercept[UnsupportedStoreException](store.checkReady(t))
      assert(e.getMessage.contains(liar.name) && e.getMessage.contains(precondition), e.getMessage)
      assert(e.getMessage.contains(s"$optOut=false"), e.getMessage)
      liar.secrets.foreach(s => assert(!e.getMessage.contains(s), "a credential in the error"))
      assert(store.list(new Path(t, "_txcommit/probe")).isEmpty, "the probe cleans up")
      // It really lies: an exclusive create overwrites there.
      val target = new Path(t, "_txcommit/commits/x.json")
      store.createExclusive(target, text("first"))
      store.createExclusive(target, text("second"))
      assert(new String(store.read(target).get, UTF_8) == "second")
      val optedOut = liar.conf(); optedOut.set(optOut, "false")
      Adapters.open(t, optedOut).checkReady(t) // the user's explicit choice
    } finally { liar.close(); resetProbe() }
  }

  test(
    "conditional put: the commit point is one request; a zombie driver committing the same transaction gets a conflict") {
    val t = freshTable()
    val txn = "0123456789abcdeh"
    val endpoint = faultEndpoint(lying = false)
    try {
      Adapters.open(t, endpoint.conf()).checkReady(t) // the probe, once per endpoint
      val before = endpoint.served.size
      publish(t, endpoint.conf(), txn, "first-driver")
      assert(endpoint.served.drop(before).size == 1, s"the commit point is one create: ${endpoint.served}")
    } finally endpoint.close()
    val e = intercept[CommitConflictException](publish(t, conf(), txn, "zombie-driver"))
    assert(e.getMessage.contains(s"txn $txn") && e.getMessage.contains("already committed"))
    assert(tokenOf(t, txn) == "first-driver")
  }

  test("conditional put: a record whose answer was lost is the writer's own; another driver's still conflicts") {
    val endpoint = faultEndpoint(lying = false)
    try {
      val t = freshTable()
      val txn = "0123456789abcdei"
      endpoint.loseAnswers(publishRequest(t, s"_txcommit/commits/$txn.json"))
      publish(t, endpoint.conf(), txn, "first-driver")
      assert(endpoint.lost.size == 1, "the fault was injected")
      intercept[CommitConflictException](publish(t, endpoint.conf(), txn, "zombie-driver"))
      assert(tokenOf(t, txn) == "first-driver")
    } finally endpoint.close()
  }
}

object ConditionalPutSuite {

  /** An endpoint in front of the store under test that plays its faults. */
  trait FaultEndpoint extends AutoCloseable {

    /** How the adapter's errors name this endpoint. */
    def name: String

    /** Settings reaching the store through this endpoint. */
    def conf(): Configuration

    /** Passes the next request matching `pattern` on, lets the store apply it, drops the answer. */
    def loseAnswers(pattern: String): Unit

    /** The requests whose answers were dropped so far. */
    def lost: Seq[String]

    /** Every request the store behind it served so far, as the endpoint saw it. */
    def served: Seq[String]

    /** Credentials its errors must never show. */
    def secrets: Seq[String]
  }
}
