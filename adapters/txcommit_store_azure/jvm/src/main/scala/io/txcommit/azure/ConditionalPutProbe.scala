package io.txcommit.azure

import org.apache.hadoop.fs.Path

import io.txcommit.log.LogLayout
import io.txcommit.store.ExclusiveCreateProbe

/** The azure adapter's readiness probe: a second `If-None-Match: *` Put Blob of one name
  * ([[AzureStore.putIfAbsent]], the records' own request) must be refused (4 requests). */
object ConditionalPutProbe {
  private val probe = new ExclusiveCreateProbe("If-None-Match: *", AzureStore.VerifyConditionalPut)

  def verify(store: AzureStore, table: Path): Unit = {
    val loc = store.loc
    probe.verify(s"${loc.endpoint} (container ${loc.container})", store.declaration.name, LogLayout(table).newProbe(),
      loc.jobConf.getBoolean(AzureStore.VerifyConditionalPut, true))(
      (p, bytes) => store.putIfAbsent(loc.blobName(p), BlobBody.Bytes(bytes)), p => store.delete(p),
      p => loc.url(loc.blobName(p)))
  }

  /** For tests: forget what was verified. */
  private[azure] def reset(): Unit = probe.reset()
}
