package io.txcommit.s3

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.UnsupportedStoreException
import io.txcommit.conf.TxCommitConf

/**
 * Proves, once per endpoint and bucket per JVM, that the store refuses a second
 * `If-None-Match: *` create of one key. Some S3-compatible stores accept the header and ignore
 * it; on them an exclusive create silently overwrites, and a duplicate commit could replace a
 * record. The probe writes and deletes one small object under the table's `_txcommit/probe/`
 * (never outside the table), costing 3 requests.
 */
object ConditionalPutProbe {
  private val log = LoggerFactory.getLogger(getClass)
  private val verified = ConcurrentHashMap.newKeySet[String]()

  def verify(store: S3Store, table: Path): Unit = {
    val loc = store.loc
    val id = s"${loc.endpoint}|${loc.bucket}"
    if (verified.contains(id)) return
    val k = loc.key(new Path(table, s"_txcommit/probe/${UUID.randomUUID()}.json"))
    try {
      val first = store.putIfAbsent(k, "{\"probe\":1}".getBytes(UTF_8))
      val second = store.putIfAbsent(k, "{\"probe\":2}".getBytes(UTF_8))
      if (!first || second) throw new UnsupportedStoreException(
        s"the S3 endpoint ${loc.endpoint} (bucket ${loc.bucket}) does not provide the " +
          s"conditional-put capability the '${store.declaration.name}' adapter relies on: it " +
          s"ignored If-None-Match: * (two exclusive creates of ${loc.url(k)} both succeeded), so " +
          "a commit record could be overwritten. Use an endpoint that supports conditional " +
          "writes, certify it with the conformance kit, or (at your own risk) set " +
          s"${TxCommitConf.VerifyConditionalPut}=false.")
      verified.add(id)
      log.info(s"txcommit: ${loc.endpoint} (bucket ${loc.bucket}) refuses a second " +
        "If-None-Match: * create: conditional put verified")
    } finally {
      try store.delete(loc.path(k))
      catch { case NonFatal(e) => log.warn(s"txcommit: could not delete probe ${loc.url(k)}: ${e.getMessage}") }
    }
  }

  /** For tests: forget what was verified. */
  private[s3] def reset(): Unit = verified.clear()
}
