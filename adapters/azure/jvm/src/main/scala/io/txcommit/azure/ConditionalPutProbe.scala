package io.txcommit.azure

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.UnsupportedStoreException

/**
 * Proves, once per endpoint and container per JVM, that the store refuses a second
 * `If-None-Match: *` Put Blob of one name, through exactly the request the records use
 * ([[AzureStore.putIfAbsent]]). A store (or a proxy, or an emulator) that ignores the header
 * would let a duplicate commit replace a record. The probe creates and deletes one small blob
 * under the table's `_txcommit/probe/` (never outside the table): 4 requests.
 */
object ConditionalPutProbe {
  private val log = LoggerFactory.getLogger(getClass)
  private val verified = ConcurrentHashMap.newKeySet[String]()

  def verify(store: AzureStore, table: Path): Unit = {
    val loc = store.loc
    val id = s"${loc.endpoint}|${loc.container}"
    if (verified.contains(id)) return
    val name = loc.blobName(new Path(table, s"_txcommit/probe/${UUID.randomUUID()}.json"))
    try {
      val first = store.putIfAbsent(name, BlobBody.Bytes("{\"probe\":1}".getBytes(UTF_8)))
      val second = store.putIfAbsent(name, BlobBody.Bytes("{\"probe\":2}".getBytes(UTF_8)))
      if (!first || second) throw new UnsupportedStoreException(
        s"the Azure endpoint ${loc.endpoint} (container ${loc.container}) does not provide the " +
          s"conditional-put capability the '${store.declaration.name}' adapter relies on: it " +
          s"ignored If-None-Match: * (two exclusive creates of ${loc.url(name)} both " +
          "succeeded), so a commit record could be overwritten. Use an endpoint that honours " +
          "conditional Put Blob, certify it with the conformance kit, or (at your own risk) set " +
          s"${AzureStore.VerifyConditionalPut}=false.")
      verified.add(id)
      log.info(s"txcommit: ${loc.endpoint} (container ${loc.container}) refuses a second " +
        "If-None-Match: * Put Blob: conditional put verified")
    } finally {
      try store.delete(loc.path(name))
      catch { case NonFatal(e) => log.warn(s"txcommit: could not delete probe ${loc.url(name)}: ${e.getMessage}") }
    }
  }

  /** For tests: forget what was verified. */
  private[azure] def reset(): Unit = verified.clear()
}
