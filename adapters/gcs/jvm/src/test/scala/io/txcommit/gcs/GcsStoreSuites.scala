package io.txcommit.gcs

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.commit.{PublishCommitRecord, StageTimings, TxnContext}
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec}
import io.txcommit.store.{Adapters, CommitStore, StoreContractSuite}
import io.txcommit.streaming.CheckpointManagerContractSuite

/** Starts one fake-gcs-server per suite. */
trait WithLocalGcs extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected lazy val gcs = new LocalGcsProcess
  override protected def afterAll(): Unit = try gcs.close() finally super.afterAll()
}

/** The `gcs` adapter bound to the store contract, on a real GCS JSON API endpoint. */
class GcsStoreContractSuite extends StoreContractSuite with WithLocalGcs {
  override protected def freshTable(): (Path, CommitStore) = {
    val t = gcs.freshTable()
    (t, Adapters.open(t, gcs.conf()))
  }
}

/** Streaming checkpoint files on the same endpoint. */
class GcsCheckpointManagerSuite extends CheckpointManagerContractSuite with WithLocalGcs {
  override protected def expectedAdapter = "gcs"
  override protected def freshCheckpoint(): (Path, Configuration) = (gcs.freshTable(), gcs.conf())

  test("a file larger than the connector's pipe and upload chunk appears whole, in one upload") {
    val (root, conf, fm) = manager()
    val target = new Path(root, "state/0/0/5.snapshot")
    val size = 9 * 1024 * 1024 + 12345
    val out = fm.createAtomic(target, false)
    val chunk = Array.tabulate[Byte](64 * 1024)(i => (i % 251).toByte)
    var written = 0
    while (written < size) { val n = math.min(chunk.length, size - written); out.write(chunk, 0, n); written += n }
    assert(!fm.exists(target), "nothing is visible before close")
    out.close()
    val back = Adapters.open(root, conf).read(target).get
    assert(back.length == size && back.indices.forall(i => back(i) == ((i % (64 * 1024)) % 251).toByte))
  }

  test("4 writers race for one large batch file: one wins whole") {
    race(writers = 4, size = 3 * 1024 * 1024)
  }

  test("store requests per small exclusive checkpoint file: one upload") {
    val (root, conf, _) = manager()
    val store = Adapters.open(root, conf)
    val out = store.openAtomic(new Path(root, "commits/0"), overwrite = false)
    out.write("v1".getBytes(UTF_8)); out.close()
    assert(store.requests.snapshot == Map("PUT" -> 1L))
  }
}

class GcsAdapterSuite extends AnyFunSuite with WithLocalGcs {
  private def text(s: String) = s.getBytes(UTF_8)

  test("gs paths get the gcs adapter by default") {
    assert(Adapters.forPath(gcs.freshTable(), gcs.conf()).name == "gcs")
  }

  test("16 drivers race to create one commit record, in 3 rounds: exactly one wins each time") {
    for (round <- 1 to 3) {
      val t = gcs.freshTable()
      val target = new Path(t, "_txcommit/commits/race.json")
      // One store (and job conf) per racer, as 16 drivers would have.
      val stores = (0 until 16).map(_ => Adapters.open(t, gcs.conf()))
      val pool = Executors.newFixedThreadPool(16)
      implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
      val go = new CountDownLatch(1)
      val results = stores.zipWithIndex.map { case (s, i) =>
        Future { go.await(); Try(s.createExclusive(target, text(s"driver-$i"))).map(_ => i) }
      }
      go.countDown()
      val outcomes = Await.result(Future.sequence(results), 120.seconds)
      pool.shutdown(); pool.awaitTermination(5, TimeUnit.SECONDS)
      val winners = outcomes.flatMap(_.toOption)
      assert(winners.size == 1, s"round $round: winners $winners, failures ${outcomes.filter(_.isFailure)}")
      outcomes.filter(_.isFailure).map(_.failed.get).foreach { e =>
        assert(e.isInstanceOf[CommitConflictException] && e.getMessage.contains("race.json"), e)
      }
      assert(new String(stores.head.read(target).get, UTF_8) == s"driver-${winners.head}")
    }
  }

  test("the probe passes on an endpoint that checks ifGenerationMatch, through the record's path, and leaves nothing") {
    GenerationMatchProbe.reset()
    val t = gcs.freshTable()
    val store = Adapters.open(t, gcs.conf())
    store.checkReady(t)
    // Two uploads, the refused one's create id looked up, the probe deleted.
    assert(store.requests.snapshot == Map("PUT" -> 2L, "HEAD" -> 1L, "DELETE" -> 1L))
    store.checkReady(t) // cached: no more requests
    assert(store.requests.total == 4)
    assert(store.list(new Path(t, "_txcommit/probe")).isEmpty)
  }

  test("an endpoint that ignores ifGenerationMatch is refused by the probe, naming it and the opt-out") {
    val liar = new GcsFaultProxy(gcs.endpoint, ignoreGenerationMatch = true)
    try {
      GenerationMatchProbe.reset()
      val conf = gcs.conf()
      conf.set(GcsBucket.RootUrlKey, liar.endpoint + "/")
      conf.setBoolean("fs.gs.impl.disable.cache", true) // not the cached file system of the honest endpoint
      val t = gcs.freshTable()
      val store = Adapters.open(t, conf)
      val e = intercept[UnsupportedStoreException](store.checkReady(t))
      assert(e.getMessage.contains(liar.endpoint) && e.getMessage.contains("ifGenerationMatch=0"))
      assert(e.getMessage.contains(s"${GcsStore.VerifyGenerationMatch}=false"))
      // It really lies: an exclusive create overwrites there.
      val target = new Path(t, "_txcommit/commits/x.json")
      store.createExclusive(target, text("first"))
      store.createExclusive(target, text("second"))
      assert(new String(store.read(target).get, UTF_8) == "second")
      val optOut = new Configuration(conf); optOut.set(GcsStore.VerifyGenerationMatch, "false")
      Adapters.open(t, optOut).checkReady(t) // the user's explicit choice
    } finally { liar.close(); GenerationMatchProbe.reset() }
  }

  test("a zombie driver committing the same transaction again gets a conflict, not an overwrite") {
    val t = gcs.freshTable()
    val txn = "0123456789abcdeh"
    def publish(token: String) = {
      val store = Adapters.open(t, gcs.conf())
      val record = CommitRecord(txn, token, "job", 1L, 2L, Seq(AddedFile(s"part-00000-tid-$txn-1.csv", 1)), None, "test")
      PublishCommitRecord.run(TxnContext(t, txn, token, "job", 1L, gcs.conf(), store), record, new StageTimings)
      store
    }
    val store = publish("first-driver")
    val e = intercept[CommitConflictException](publish("zombie-driver"))
    assert(e.getMessage.contains(s"txn $txn") && e.getMessage.contains("already committed"))
    val kept = RecordCodec.decode(store.read(new Path(t, s"_txcommit/commits/$txn.json")).get, "r", txn)
    assert(kept.token == "first-driver")
  }

  test("a record whose upload answer was lost is sent again and recognised as the writer's own") {
    val proxy = new GcsFaultProxy(gcs.endpoint)
    try {
      val conf = gcs.conf()
      conf.set(GcsBucket.RootUrlKey, proxy.endpoint + "/")
      conf.setBoolean("fs.gs.impl.disable.cache", true)
      val t = gcs.freshTable()
      val txn = "0123456789abcdei"
      val record = new Path(t, s"_txcommit/commits/$txn.json")
      proxy.loseAnswers(s"POST /upload/storage/v1/b/${gcs.bucket}/o\\?.*ifGenerationMatch=0")
      val store = Adapters.open(t, conf)
      store.createExclusive(record, text("mine"))
      assert(proxy.lost.size == 1, "the fault was injected")
      assert(store.requests.snapshot == Map("PUT" -> 2L, "HEAD" -> 1L), "sent again, then its create id read back")
      assert(new String(store.read(record).get, UTF_8) == "mine")
      intercept[CommitConflictException](Adapters.open(t, conf).createExclusive(record, text("another driver")))
    } finally proxy.close()
  }

  test("what the emulator does with ifGenerationMatch=0: checked on the multipart upload, ignored on the connector's default resumable one") {
    // Why the adapter forces direct uploads (GcsBucket.PublishSettings). If this changes, update docs/adapters.md.
    def createTwice(directUpload: Boolean): Seq[Try[Unit]] = {
      val conf = GcsBucket.publishConf(gcs.conf())
      conf.setBoolean("fs.gs.outputstream.direct.upload.enable", directUpload)
      val t = gcs.freshTable()
      val fs = new com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem()
      fs.initialize(t.toUri, conf)
      try {
        val name = t.toUri.getPath.stripPrefix("/") + "/x.json"
        val id = new com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.gcsio.StorageResourceId(gcs.bucket, name, 0L)
        (1 to 2).map { i =>
          Try {
            val ch = fs.getGcsFs.getGcs.create(id,
              com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.gcsio.CreateObjectOptions.DEFAULT_NO_OVERWRITE)
            ch.write(java.nio.ByteBuffer.wrap(text(s"v$i")))
            ch.close()
          }
        }
      } finally fs.close()
    }
    val multipart = createTwice(directUpload = true)
    assert(multipart.head.isSuccess && multipart(1).isFailure, "uploadType=multipart: the second create is refused")
    val refusal = Iterator.iterate(multipart(1).failed.get)(_.getCause).takeWhile(_ != null).collectFirst {
      case h: com.google.cloud.hadoop.repackaged.gcs.com.google.api.client.http.HttpResponseException => h.getStatusCode
    }
    assert(refusal.contains(412), multipart(1))
    val resumable = createTwice(directUpload = false)
    assert(resumable.forall(_.isSuccess), "resumable: fake-gcs-server ignores the precondition and overwrites")
  }

  test("a table on a file system other than Google's connector is refused with the conf to set") {
    val conf = gcs.conf()
    conf.set("fs.gs.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
    conf.setBoolean("fs.gs.impl.disable.cache", true)
    val e = intercept[UnsupportedStoreException](Adapters.open(gcs.freshTable(), conf))
    assert(e.getMessage.contains(s"fs.gs.impl=${GcsBucket.ConnectorClass}"))
  }

  test("Hadoop 3.5's default gs file system (hadoop-gcp, not on Spark's classpath) is refused with the connector to use") {
    val conf = gcs.conf()
    conf.set("fs.gs.impl", "org.apache.hadoop.fs.gs.GoogleHadoopFileSystem") // Hadoop 3.5's core-default.xml
    conf.setBoolean("fs.gs.impl.disable.cache", true)
    val e = intercept[UnsupportedStoreException](Adapters.open(gcs.freshTable(), conf))
    assert(e.getMessage.contains("txcommit jars --store gcs") && e.getMessage.contains(GcsBucket.ConnectorClass))
  }

  test("Hadoop 3.5's fs.gs.block.size=64m is named with its fix, not a bare NumberFormatException") {
    val conf = gcs.conf()
    conf.set(GcsBucket.BlockSizeKey, "64m")
    conf.setBoolean("fs.gs.impl.disable.cache", true)
    val e = intercept[UnsupportedStoreException](Adapters.open(gcs.freshTable(), conf))
    assert(e.getMessage.contains(s"spark.hadoop.${GcsBucket.BlockSizeKey}=${GcsBucket.BlockSize}"))
  }
}
