package io.txcommit.azure

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.commit.{PublishCommitRecord, StageTimings, TxnContext}
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec}
import io.txcommit.store.{Adapters, CommitStore, StoreContractSuite}

/** Starts one Azurite per suite. */
trait WithAzurite extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected lazy val azurite = new LocalAzurite
  override protected def afterAll(): Unit = try azurite.close() finally super.afterAll()
}

/** The `azure` adapter bound to the store contract (the 16-way race included), on Azurite. */
class AzureStoreContractSuite extends StoreContractSuite with WithAzurite {
  override protected def freshTable(): (Path, CommitStore) = {
    val t = azurite.freshTable()
    (t, Adapters.open(t, azurite.conf()))
  }
}

class AzureAdapterSuite extends AnyFunSuite with WithAzurite {
  private def open(t: Path, conf: org.apache.hadoop.conf.Configuration = azurite.conf()) = Adapters.open(t, conf)

  test("abfs and abfss paths get the azure adapter; wasb:// says WASB is gone and what to use") {
    val t = azurite.freshTable()
    assert(Adapters.forPath(t, azurite.conf()).name == "azure")
    val secure = new Path(t.toString.replace("abfs://", "abfss://"))
    assert(Adapters.forPath(secure, azurite.conf()).name == "azure")
    val wasb = new Path(s"wasb://${azurite.container}@${azurite.account}.blob.core.windows.net/t")
    val e = intercept[UnsupportedStoreException](AzureContainer(wasb, azurite.conf()))
    assert(e.getMessage.contains("removed the WASB connector") && e.getMessage.contains("abfss://"))
  }

  test("the conditional-put probe passes on an endpoint that honours If-None-Match and leaves nothing") {
    ConditionalPutProbe.reset()
    val t = azurite.freshTable()
    val store = open(t)
    store.checkReady(t)
    // The refused second create reads back the create id of the blob it met (a lost answer's
    // resend would meet its own).
    assert(store.requests.snapshot == Map("PUT" -> 2L, "HEAD" -> 1L, "DELETE" -> 1L))
    store.checkReady(t) // cached: no more requests
    assert(store.requests.total == 4)
    assert(store.list(new Path(t, "_txcommit/probe")).isEmpty)
  }

  test("a zombie driver committing the same transaction again gets a conflict, not an overwrite") {
    val t = azurite.freshTable()
    val txn = "0123456789abcdeh"
    def publish(token: String) = {
      val store = open(t)
      val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
      PublishCommitRecord.run(TxnContext(t, txn, token, "job", 1L, azurite.conf(), store), record, new StageTimings)
      store
    }
    val store = publish("first-driver")
    assert(store.requests.snapshot == Map("PUT" -> 1L), "the commit point is one Put Blob")
    val e = intercept[CommitConflictException](publish("zombie-driver"))
    assert(e.getMessage.contains(s"txn $txn") && e.getMessage.contains("already committed"))
    val kept = RecordCodec.decode(store.read(new Path(t, s"_txcommit/commits/$txn.json")).get, "r", txn)
    assert(kept.token == "first-driver")
  }

  test("a record whose Put Blob answer was lost is the writer's own; another driver's still conflicts") {
    val proxy = new AzureProxy(azurite.endpoint)
    try {
      val conf = LocalAzurite.conf(proxy.hostPort)
      val t = azurite.freshTable()
      val txn = "0123456789abcdei"
      def publish(token: String): Unit = {
        val store = Adapters.open(t, conf)
        val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
        PublishCommitRecord.run(TxnContext(t, txn, token, "job", 1L, conf, store), record, new StageTimings)
      }
      proxy.loseAnswers(s"PUT .*/_txcommit/commits/$txn.json$$")
      publish("first-driver")
      assert(proxy.lost.size == 1, "the fault was injected")
      intercept[CommitConflictException](publish("zombie-driver"))
      val kept = RecordCodec.decode(open(t).read(new Path(t, s"_txcommit/commits/$txn.json")).get, "r", txn)
      assert(kept.token == "first-driver")
      // And below the commit stages: the store's own create sees its create id.
      val target = new Path(t, "_txcommit/replace/00000000000000000001.json")
      proxy.loseAnswers("PUT .*/_txcommit/replace/")
      val store = Adapters.open(t, conf)
      store.createExclusive(target, "mine".getBytes(UTF_8))
      assert(proxy.lost.size == 2)
      assert(store.requests.snapshot == Map("PUT" -> 1L, "HEAD" -> 1L))
      intercept[CommitConflictException](store.createExclusive(target, "theirs".getBytes(UTF_8)))
      assert(new String(store.read(target).get, UTF_8) == "mine")
    } finally proxy.close()
  }

  test("errors name the blob and the endpoint, never the account key") {
    val conf = azurite.conf()
    val wrong = java.util.Base64.getEncoder.encodeToString(Array.fill[Byte](64)(7))
    conf.set(s"fs.azure.account.key.${azurite.account}.dfs.core.windows.net", wrong)
    val t = azurite.freshTable()
    val e = intercept[java.io.IOException](Adapters.open(t, conf).createExclusive(new Path(t, "x.json"), Array[Byte](1)))
    assert(e.getMessage.contains(s"${t.toString}/x.json") && e.getMessage.contains(azurite.hostPort))
    assert(e.getMessage.contains("403") && e.getMessage.contains("fs.azure.account.key."))
    assert(!e.getMessage.contains(wrong) && !e.getMessage.contains(LocalAzurite.Key))
    val missing = new Path(s"abfs://no-such-container@${azurite.account}.dfs.core.windows.net/t")
    val e2 = intercept[java.io.IOException](Adapters.open(missing, azurite.conf()).list(missing))
    assert(e2.getMessage.contains("container no-such-container does not exist"))
  }

  test("data files written through ABFS are listed, sized and deleted; ABFS directory markers are not files") {
    val t = azurite.freshTable()
    val conf = azurite.conf()
    val fs = t.getFileSystem(conf)
    val file = new Path(t, "d=1/part-00000-tid-0123456789abcdef-1.parquet")
    val out = fs.create(file, true); out.write(Array.fill[Byte](1234)(1)); out.close()
    fs.mkdirs(new Path(t, "d=1/sub")) // an explicit directory: a marker blob on the Blob endpoint
    val store = open(t, conf)
    assert(store.list(new Path(t, "d=1")).map(s => s.getPath -> s.getLen) == Seq(fs.makeQualified(file) -> 1234L))
    assert(store.stagedFile(t, "d=1/x", file).map(_.size).contains(1234L))
    assert(store.delete(file) && !store.delete(file) && !fs.exists(file))
  }
}

/** An endpoint that accepts If-None-Match and ignores it must be refused, naming it. */
class AzureLyingEndpointSuite extends AnyFunSuite with WithAzurite {
  test("a store that ignores If-None-Match is detected before any data, without leaking the key") {
    val liar = new AzureProxy(azurite.endpoint, ignoreIfNoneMatch = true)
    try {
      ConditionalPutProbe.reset()
      val conf = LocalAzurite.conf(liar.hostPort)
      val t = azurite.freshTable()
      val store = Adapters.open(t, conf)
      val e = intercept[UnsupportedStoreException](store.checkReady(t))
      assert(e.getMessage.contains(liar.hostPort) && e.getMessage.contains("If-None-Match"))
      assert(e.getMessage.contains("spark.txcommit.azure.verifyConditionalPut=false"))
      assert(!e.getMessage.contains(LocalAzurite.Key))
      assert(store.list(new Path(t, "_txcommit/probe")).isEmpty, "the probe cleans up")
      val optOut = LocalAzurite.conf(liar.hostPort); optOut.set("spark.txcommit.azure.verifyConditionalPut", "false")
      Adapters.open(t, optOut).checkReady(t) // the user's explicit choice
    } finally { liar.close(); ConditionalPutProbe.reset() }
  }
}

class AzureWasbSuite extends AnyFunSuite {
  test("a wasb:// table is refused at job setup with what to write instead") {
    val e = intercept[UnsupportedStoreException](
      Adapters.forPath(new Path("wasbs://lake@acct.blob.core.windows.net/t"), new org.apache.hadoop.conf.Configuration()))
    assert(e.getMessage.contains("removed the WASB connector") && e.getMessage.contains("abfss://<container>@<account>"))
  }
}
