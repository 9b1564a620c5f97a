package io.txcommit.gcs

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.store.{Adapters, CommitStore, ConditionalPutSuite, StoreContractSuite}
import io.txcommit.store.ConditionalPutSuite.FaultEndpoint
import io.txcommit.streaming.CheckpointManagerContractSuite

/** Starts one fake-gcs-server per suite. */
trait WithLocalGcs extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected lazy val gcs = new LocalGcsProcess
  override protected def afterAll(): Unit =
    try gcs.close()
    finally super.afterAll()
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

  test("store requests per small exclusive checkpoint file: one upload, counted where the store serves it") {
    val (root, _, _) = manager()
    val proxy = new GcsFaultProxy(gcs.endpoint)
    try {
      val store = Adapters.open(root, GcsConditionalPutSuite.through(gcs, proxy))
      store.checkReady(root) // the probe, once per endpoint
      val before = proxy.served.size
      val out = store.openAtomic(new Path(root, "commits/0"), overwrite = false)
      out.write("v1".getBytes(UTF_8)); out.close()
      assert(proxy.served.asScala.toSeq.drop(before).map(_.takeWhile(_ != ' ')) == Seq("POST"), proxy.served)
    } finally proxy.close()
  }
}

/** The conditional-put checks on the `gcs` adapter, through a proxy in front of the emulator. */
class GcsConditionalPutSuite extends ConditionalPutSuite with WithLocalGcs {
  override protected def freshTable(): Path = gcs.freshTable()
  override protected def conf(): Configuration = gcs.conf()
  override protected def resetProbe(): Unit = GenerationMatchProbe.reset()
  override protected def precondition = "ifGenerationMatch=0"
  override protected def optOut = GcsStore.VerifyGenerationMatch
  // Google's client reads an object's generation before it deletes it: the delete is two
  // requests at the wire (the adapter's own counter says one).
  override protected def probeRequests = 5
  override protected def publishRequest(t: Path, relative: String) = GcsConditionalPutSuite.exclusiveUpload(gcs)
  override protected def faultEndpoint(lying: Boolean): FaultEndpoint = {
    val proxy = new GcsFaultProxy(gcs.endpoint, ignoreGenerationMatch = lying)
    new FaultEndpoint {
      def name: String = proxy.endpoint
      def conf(): Configuration = GcsConditionalPutSuite.through(gcs, proxy)
      def loseAnswers(pattern: String): Unit = proxy.loseAnswers(pattern)
      def lost: Seq[String] = proxy.lost.asScala.toSeq
      def served: Seq[String] = proxy.served.asScala.toSeq
      def secrets: Seq[String] = Nil // the emulator takes no credentials
      def close(): Unit = proxy.close()
    }
  }
}

object GcsConditionalPutSuite {

  /** Settings reaching the emulator through `proxy`, in a file system of their own. */
  def through(gcs: LocalGcsProcess, proxy: GcsFaultProxy): Configuration = {
    val conf = gcs.conf()
    conf.set(GcsBucket.RootUrlKey, proxy.endpoint + "/")
    conf.setBoolean("fs.gs.impl.disable.cache", true) // not the cached file system of the direct endpoint
    conf
  }

  /** Every exclusive create is one multipart upload carrying the precondition (the name travels in its body). */
  def exclusiveUpload(gcs: LocalGcsProcess): String =
    s"POST /upload/storage/v1/b/${gcs.bucket}/o\\?.*ifGenerationMatch=0"
}

class GcsAdapterSuite extends AnyFunSuite with WithLocalGcs {
  private def text(s: String) = s.getBytes(UTF_8)

  test("a first write refused because a table appeared below it removes the log it created") {
    import io.txcommit.commit._
    import io.txcommit.log.TxnId
    val t = gcs.freshTable()
    val conf = gcs.conf()
    val store = Adapters.open(t, conf)
    val txn = TxnId.generate()
    val ctx = TxnContext(t, txn, "token", "job", 1L, conf, store)
    val seen = CheckTableNesting.run(ctx, (), new StageTimings)
    // Another first write creates a table in the partition directory k=1 meanwhile.
    store.createExclusive(new Path(t, "k=1/_txcommit/commits/x.json"), text("{}"))
    StartTransaction.run(ctx, false, new StageTimings)
    intercept[io.txcommit.UnsupportedWriteException](RecheckTableNesting.run(ctx, seen, new StageTimings))
    AbortTransaction.run(ctx, Nil, new StageTimings)
    assert(RemoveCreatedLog.run(ctx, (), new StageTimings))
    val fs = t.getFileSystem(conf)
    assert(!fs.exists(new Path(t, "_txcommit")), "the refused write left no log")
    assert(fs.exists(new Path(t, "k=1/_txcommit/commits/x.json")))
  }

  test("an upload whose source fails part way is abandoned, never completed with the bytes read so far") {
    val t = gcs.freshTable()
    val store = Adapters.open(t, gcs.conf()).asInstanceOf[GcsStore]
    // A spooled checkpoint file that cannot be read to its end (a disk error, say).
    def failing(): java.io.InputStream = new java.io.InputStream {
      private var left = 1024 * 1024
      override def read(): Int = { val b = new Array[Byte](1); if (read(b, 0, 1) < 0) -1 else b(0) & 0xff }
      override def read(b: Array[Byte], off: Int, len: Int): Int = {
        if (left == 0) throw new java.io.IOException("the spool file could not be read")
        val n = math.min(len, left); java.util.Arrays.fill(b, off, off + n, 7.toByte); left -= n; n
      }
    }
    val exclusive = new Path(t, "checkpoint/commits/4")
    val replaced = new Path(t, "checkpoint/state/0/0/4.delta")
    intercept[java.io.IOException](store.createIfAbsent(store.loc.name(exclusive), () => failing()))
    intercept[java.io.IOException](store.replace(store.loc.name(replaced), () => failing()))
    assert(!store.exists(exclusive) && !store.exists(replaced), "no object holds the part that was read")
  }

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

  test("below the commit stages: an exclusive upload whose answer was lost is sent again and its create id read back") {
    val proxy = new GcsFaultProxy(gcs.endpoint)
    try {
      val conf = GcsConditionalPutSuite.through(gcs, proxy)
      val t = gcs.freshTable()
      val record = new Path(t, "_txcommit/replace/00000000000000000001.json")
      proxy.loseAnswers(GcsConditionalPutSuite.exclusiveUpload(gcs))
      val store = Adapters.open(t, conf)
      store.createExclusive(record, text("mine"))
      assert(proxy.lost.size == 1, "the fault was injected")
      val wire = proxy.served.asScala.toSeq.map(_.takeWhile(_ != '?')).takeRight(3)
      val kinds = Seq("POST /upload/storage/v1/b/", "POST /upload/storage/v1/b/", "GET /storage/v1/b/")
      assert(
        wire.zip(kinds).forall { case (r, k) => r.startsWith(k) } && wire.last.endsWith(
          "%2F_txcommit%2Freplace%2F00000000000000000001.json"),
        s"the upload sent again, then its create id read back: $wire")
      assert(new String(store.read(record).get, UTF_8) == "mine")
      intercept[CommitConflictException](Adapters.open(t, conf).createExclusive(record, text("another driver")))
    } finally proxy.close()
  }

  test(
    "what the emulator does with ifGenerationMatch=0: checked on the multipart upload, ignored on the connector's default resumable one") {
    // Why the adapter forces direct uploads (GcsBucket.PublishSettings). If this changes, update docs/adapters.md.
    def createTwice(directUpload: Boolean): Seq[Try[Unit]] = {
      val conf = GcsBucket.publishConf(gcs.conf())
      conf.setBoolean("fs.gs.outputstream.direct.upload.enable", directUpload)
      val t = gcs.freshTable()
      val fs = new com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem()
      fs.initialize(t.toUri, conf)
      try {
        val name = t.toUri.getPath.stripPrefix("/") + "/x.json"
        val id = new com.google.cloud.hadoop.repackaged.gcs.com.google.cloud.hadoop.gcsio.StorageResourceId(gcs.bucket,
          name, 0L)
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

  test(
    "Hadoop 3.5's default gs file system (hadoop-gcp, not on Spark's classpath) is refused with the connector to use") {
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
