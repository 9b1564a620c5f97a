package io.txcommit.s3

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest

import io.txcommit.streaming.CheckpointManagerContractSuite

/** Checkpoint files on a real S3 endpoint (moto over HTTP), through S3A's SDK client. */
abstract class S3CheckpointManagerSuite extends CheckpointManagerContractSuite with WithLocalS3 {
  protected def adapterConf: Map[String, String] = Map.empty

  override protected def freshCheckpoint(): (Path, Configuration) = {
    val conf = s3.conf()
    adapterConf.foreach { case (k, v) => conf.set(k, v) }
    (s3.freshTable(), conf)
  }

  override protected def openUploads(root: Path, conf: Configuration): Seq[String] = {
    val b = S3Bucket(root, conf)
    b.client.listMultipartUploads(ListMultipartUploadsRequest.builder().bucket(b.bucket)
        .prefix(b.key(root) + "/").build()).uploads().asScala.map(_.key()).toSeq
  }

  test("a file larger than one part streams as a multipart upload and appears whole on close") {
    val (root, conf, fm) = manager()
    val target = new Path(root, "state/0/0/5.snapshot")
    val size = S3AtomicOutput.PartSize * 2 + 12345
    val out = fm.createAtomic(target, false)
    val chunk = Array.tabulate[Byte](64 * 1024)(i => (i % 251).toByte)
    var written = 0
    while (written < size) { val n = math.min(chunk.length, size - written); out.write(chunk, 0, n); written += n }
    assert(!fm.exists(target), "parts uploaded so far are not visible")
    assert(openUploads(root, conf).size == 1, "the upload is in flight")
    out.close()
    val in = fm.open(target)
    val back =
      try org.apache.commons.io.IOUtils.toByteArray(in)
      finally in.close()
    assert(back.length == size && back.indices.forall(i => back(i) == ((i % (64 * 1024)) % 251).toByte))
    assert(openUploads(root, conf).isEmpty)
  }

  test("a write cancelled from an interrupted thread (Spark cancelling a task) still aborts its upload") {
    val (root, conf, fm) = manager()
    val out = fm.createAtomic(new Path(root, "state/0/1/9.delta"), true)
    out.write(Array.fill[Byte](S3AtomicOutput.PartSize + 10)(3)) // one part sent: an upload is open
    assert(openUploads(root, conf).size == 1)
    Thread.currentThread().interrupt()
    try out.cancel()
    finally assert(Thread.interrupted(), "the interrupt is kept for the caller")
    assert(openUploads(root, conf).isEmpty, "nothing stays billed")
  }

  test("4 writers race for one large batch file: one completion wins, the losers' uploads are aborted") {
    race(writers = 4, size = S3AtomicOutput.PartSize + 1000)
  }

  test("an endpoint that ignores If-None-Match is refused before the first exclusive checkpoint file") {
    val liar = new LocalS3Process(ignoreIfNoneMatch = true)
    try {
      ConditionalPutProbe.reset()
      val conf = liar.conf()
      adapterConf.foreach { case (k, v) => conf.set(k, v) }
      conf.set(io.txcommit.streaming.TxCommitCheckpointFileManager.ConfKey,
        classOf[io.txcommit.streaming.TxCommitCheckpointFileManager].getName)
      val root = liar.freshTable()
      val fm = io.txcommit.streaming.SparkStreamingApi.CheckpointFileManager.create(root, conf)
      val e = intercept[io.txcommit.UnsupportedStoreException](fm.createAtomic(new Path(root, "offsets/0"), false))
      assert(e.getMessage.contains(liar.endpoint) && e.getMessage.contains("If-None-Match"))
      assert(!fm.exists(new Path(root, "offsets/0")))
    } finally { liar.close(); ConditionalPutProbe.reset() }
  }

  test("a checkpoint file whose publish answer was lost is the writer's own, not a conflict") {
    // The endpoint applies the publish and drops the connection; the SDK resends it, and the
    // resend meets the file its first attempt created (412 for If-None-Match: *).
    for (size <- Seq(10, S3AtomicOutput.PartSize + 10)) {
      val (root, _, fm) = manager()
      val target = new Path(root, s"offsets/$size")
      s3.loseAnswers(s"(PUT|MULTIPART_COMPLETE) .*/offsets/$size$$")
      val bytes = Array.fill[Byte](size)(5)
      val out = fm.createAtomic(target, false)
      out.write(bytes)
      out.close()
      assert(s3.lostAnswers.exists(_.endsWith(s"/offsets/$size")), "the fault was injected")
      val in = fm.open(target)
      val back =
        try org.apache.commons.io.IOUtils.toByteArray(in)
        finally in.close()
      assert(java.util.Arrays.equals(back, bytes))
      val rival = fm.createAtomic(target, false)
      rival.write(Array[Byte](1))
      intercept[org.apache.hadoop.fs.FileAlreadyExistsException](rival.close())
    }
  }

  test("store requests per small exclusive checkpoint file, counted where the store serves them") {
    val (root, conf, _) = manager()
    val store = io.txcommit.store.Adapters.open(root, conf)
    store.checkReady(root) // the probe, once per endpoint
    val before = s3.served.size
    val out = store.openAtomic(new Path(root, "commits/0"), overwrite = false)
    out.write("v1".getBytes(UTF_8)); out.close()
    val served = s3.served.drop(before).filter(_.contains(S3Bucket(root, conf).key(root) + "/"))
    assert(served.groupBy(_.takeWhile(_ != ' ')).map { case (op, rs) => op -> rs.size.toLong } ==
        expectedRequestsPerFile, served)
  }

  protected def expectedRequestsPerFile: Map[String, Long]
}

class S3ConditionalPutCheckpointSuite extends S3CheckpointManagerSuite {
  override protected def expectedAdapter = "s3"
  override protected def expectedRequestsPerFile = Map("PUT" -> 1L)
}

class S3MultipartCheckpointSuite extends S3CheckpointManagerSuite {
  override protected def expectedAdapter = "s3-multipart"
  override protected def adapterConf = Map("spark.txcommit.adapter.s3a" -> "s3-multipart")
  override protected def expectedRequestsPerFile =
    Map("MULTIPART_INITIATE" -> 1L, "MULTIPART_PART" -> 1L, "MULTIPART_COMPLETE" -> 1L)
}
