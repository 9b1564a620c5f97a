package io.txcommit.azure

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.store.{Adapters, CommitStore, ConditionalPutSuite, StoreContractSuite}
import io.txcommit.store.ConditionalPutSuite.FaultEndpoint

/** Starts one Azurite per suite. */
trait WithAzurite extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected lazy val azurite = new LocalAzurite
  override protected def afterAll(): Unit =
    try azurite.close()
    finally super.afterAll()
}

/** The `azure` adapter bound to the store contract (the 16-way race included), on Azurite. */
class AzureStoreContractSuite extends StoreContractSuite with WithAzurite {
  override protected def freshTable(): (Path, CommitStore) = {
    val t = azurite.freshTable()
    (t, Adapters.open(t, azurite.conf()))
  }
}

class AzureAdapterSuite extends AnyFunSuite with WithAzurite {

  /** A test through ABFS: ignored (reported skipped) where ABFS cannot reach Azurite. */
  private def abfsTest(name: String)(body: => Any): Unit =
    if (LocalAzurite.abfsReachesAzurite) test(name)(body) else ignore(name)(body)

  private def open(t: Path, conf: org.apache.hadoop.conf.Configuration) = Adapters.open(t, conf)

  test("abfs and abfss paths get the azure adapter; wasb:// says WASB is gone and what to use") {
    val t = azurite.freshTable()
    assert(Adapters.forPath(t, azurite.conf()).name == "azure")
    val secure = new Path(t.toString.replace("abfs://", "abfss://"))
    assert(Adapters.forPath(secure, azurite.conf()).name == "azure")
    val wasb = new Path(s"wasb://${azurite.container}@${azurite.account}.blob.core.windows.net/t")
    val e = intercept[UnsupportedStoreException](AzureContainer(wasb, azurite.conf()))
    assert(e.getMessage.contains("removed the WASB connector") && e.getMessage.contains("abfss://"))
  }

  test("below the commit stages: a Put Blob whose answer was lost is sent again and its create id read back") {
    val proxy = new AzureProxy(azurite.endpoint)
    try {
      val conf = LocalAzurite.conf(proxy.hostPort)
      val t = azurite.freshTable()
      val target = new Path(t, "_txcommit/replace/00000000000000000001.json")
      proxy.loseAnswers("PUT .*/_txcommit/replace/")
      val store = Adapters.open(t, conf)
      store.createExclusive(target, "mine".getBytes(UTF_8))
      assert(proxy.lost.size == 1, "the fault was injected")
      val wire = proxy.served.asScala.toSeq.filter(_.endsWith("/_txcommit/replace/00000000000000000001.json"))
      assert(wire.map(_.takeWhile(_ != ' ')) == Seq("PUT", "PUT", "HEAD"), s"the PUT sent again, then read back: $wire")
      intercept[CommitConflictException](store.createExclusive(target, "theirs".getBytes(UTF_8)))
      assert(new String(store.read(target).get, UTF_8) == "mine")
    } finally proxy.close()
  }

  test("errors name the blob and the endpoint, never the account key") {
    val conf = azurite.conf()
    val wrong = java.util.Base64.getEncoder.encodeToString(Array.fill[Byte](64)(7))
    conf.set(s"fs.azure.account.key.${azurite.account}.dfs.core.windows.net", wrong)
    val t = azurite.freshTable()
    val e =
      intercept[java.io.IOException](Adapters.open(t, conf).createExclusive(new Path(t, "x.json"), Array[Byte](1)))
    assert(e.getMessage.contains(s"${t.toString}/x.json") && e.getMessage.contains(azurite.hostPort))
    assert(e.getMessage.contains("403") && e.getMessage.contains("fs.azure.account.key."))
    assert(!e.getMessage.contains(wrong) && !e.getMessage.contains(LocalAzurite.Key))
    val missing = new Path(s"abfs://no-such-container@${azurite.account}.dfs.core.windows.net/t")
    val e2 = intercept[java.io.IOException](Adapters.open(missing, azurite.conf()).list(missing))
    assert(e2.getMessage.contains("container no-such-container does not exist"))
  }

  abfsTest("data files written through ABFS are listed, sized and deleted; ABFS directory markers are not files") {
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

/** The conditional-put checks on the `azure` adapter, through a proxy in front of Azurite. */
class AzureConditionalPutSuite extends ConditionalPutSuite with WithAzurite {
  override protected def freshTable(): Path = azurite.freshTable()
  override protected def conf(): Configuration = azurite.conf()
  override protected def resetProbe(): Unit = ConditionalPutProbe.reset()
  override protected def precondition = "If-None-Match"
  override protected def optOut = AzureStore.VerifyConditionalPut
  override protected def publishRequest(t: Path, relative: String) = s"PUT .*${t.toUri.getPath}/$relative$$"
  override protected def faultEndpoint(lying: Boolean): FaultEndpoint = {
    val proxy = new AzureProxy(azurite.endpoint, ignoreIfNoneMatch = lying)
    new FaultEndpoint {
      def name: String = proxy.hostPort
      def conf(): Configuration = LocalAzurite.conf(proxy.hostPort)
      def loseAnswers(pattern: String): Unit = proxy.loseAnswers(pattern)
      def lost: Seq[String] = proxy.lost.asScala.toSeq
      def served: Seq[String] = proxy.served.asScala.toSeq
      def secrets: Seq[String] = Seq(LocalAzurite.Key)
      def close(): Unit = proxy.close()
    }
  }
}

class AzureWasbSuite extends AnyFunSuite {
  test("a wasb:// table is refused at job setup with what to write instead") {
    val e = intercept[UnsupportedStoreException](
      Adapters.forPath(new Path("wasbs://lake@acct.blob.core.windows.net/t"),
        new org.apache.hadoop.conf.Configuration()))
    assert(
      e.getMessage.contains("removed the WASB connector") && e.getMessage.contains("abfss://<container>@<account>"))
  }
}
