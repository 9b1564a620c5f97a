package io.txcommit.gcs

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.UnsupportedStoreException

/**
 * Proves, once per endpoint and bucket per JVM, that the store refuses a second
 * `ifGenerationMatch=0` create of one object, through exactly the upload path commit records
 * take ([[GcsStore.createIfAbsent]]). An emulator or proxy that ignores the precondition there
 * would let an exclusive create overwrite, and a duplicate commit replace a record. The probe
 * writes and deletes one small object under the table's `_txcommit/probe/` (never outside the
 * table): 2 uploads, the lookup of the refused one's create id, 1 delete.
 */
object GenerationMatchProbe {
  private val log = LoggerFactory.getLogger(getClass)
  private val verified = ConcurrentHashMap.newKeySet[String]()

  def verify(store: GcsStore, table: Path): Unit = {
    val loc = store.loc
    val id = s"${loc.endpoint}|${loc.bucket}"
    if (verified.contains(id)) return
    val name = loc.name(new Path(table, s"_txcommit/probe/${UUID.randomUUID()}.json"))
    try {
      val first = store.createIfAbsent(name, "{\"probe\":1}".getBytes(UTF_8))
      val second = store.createIfAbsent(name, "{\"probe\":2}".getBytes(UTF_8))
      if (!first || second) throw new UnsupportedStoreException(
        s"the GCS endpoint ${loc.endpoint} (bucket ${loc.bucket}) does not provide the " +
          s"conditional-put capability the '${store.declaration.name}' adapter relies on: it " +
          s"ignored ifGenerationMatch=0 on a multipart upload (two exclusive creates of " +
          s"${loc.url(name)} both succeeded), so a commit record could be overwritten. Use an " +
          "endpoint that checks generation preconditions, certify it with the conformance kit, " +
          s"or (at your own risk) set ${GcsStore.VerifyGenerationMatch}=false.")
      verified.add(id)
      log.info(s"txcommit: ${loc.endpoint} (bucket ${loc.bucket}) refuses a second " +
        "ifGenerationMatch=0 create: conditional put verified")
    } finally {
      try store.delete(loc.path(name))
      catch { case NonFatal(e) => log.warn(s"txcommit: could not delete probe ${loc.url(name)}: ${e.getMessage}") }
    }
  }

  /** For tests: forget what was verified. */
  private[gcs] def reset(): Unit = verified.clear()
}
