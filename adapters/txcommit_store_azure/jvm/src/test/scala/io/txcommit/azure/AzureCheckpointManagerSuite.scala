package io.txcommit.azure

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.streaming.CheckpointManagerContractSuite

/** Streaming checkpoint files on Azurite: one Put Blob each, exclusive unless overwriting. */
class AzureCheckpointManagerSuite extends CheckpointManagerContractSuite with WithAzurite {
  override protected def expectedAdapter = "azure"
  override protected def freshCheckpoint(): (Path, Configuration) = (azurite.freshTable(), azurite.conf())
  // The manager reads and lists through ABFS.
  override protected def readsCheckable: Boolean = LocalAzurite.abfsReachesAzurite

  readingTest("16 writers race for one batch file: exactly one Put Blob wins") {
    race(writers = 16, size = 300)
  }

  readingTest("a file larger than the in-memory buffer spills to local disk and appears whole on close") {
    val (root, _, fm) = manager()
    val target = new Path(root, "state/0/0/5.snapshot")
    val size = AzureAtomicOutput.InMemory * 2 + 12345
    val tmpBefore = tempFiles()
    val out = fm.createAtomic(target, false)
    val chunk = Array.tabulate[Byte](64 * 1024)(i => (i % 251).toByte)
    var written = 0
    while (written < size) { val n = math.min(chunk.length, size - written); out.write(chunk, 0, n); written += n }
    assert(!fm.exists(target), "nothing is sent before close")
    assert(tempFiles().size == tmpBefore.size + 1, "the bytes are on local disk, not in memory")
    out.close()
    assert(tempFiles() == tmpBefore, "the local file is removed")
    val in = fm.open(target)
    val back =
      try org.apache.commons.io.IOUtils.toByteArray(in)
      finally in.close()
    assert(back.length == size && back.indices.forall(i => back(i) == ((i % (64 * 1024)) % 251).toByte))
  }

  test("store requests per exclusive checkpoint file: one Put Blob, counted where the store serves it") {
    val (root, _, _) = manager()
    val proxy = new AzureProxy(azurite.endpoint)
    try {
      val store = io.txcommit.store.Adapters.open(root, LocalAzurite.conf(proxy.hostPort))
      store.checkReady(root) // the probe, once per endpoint
      val before = proxy.served.size
      val out = store.openAtomic(new Path(root, "commits/0"), overwrite = false)
      out.write("v1".getBytes(java.nio.charset.StandardCharsets.UTF_8)); out.close()
      val served = proxy.served.asScala.toSeq.drop(before)
      assert(served.map(_.takeWhile(_ != ' ')) == Seq("PUT") && served.head.endsWith("/commits/0"), served)
    } finally proxy.close()
  }

  private def tempFiles(): Set[String] =
    Option(new java.io.File(System.getProperty("java.io.tmpdir")).list()).toSeq.flatten
      .filter(_.startsWith("txcommit-azure-")).toSet
}
