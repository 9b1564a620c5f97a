package io.txcommit.store

import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.txcommit.UnsupportedStoreException

/**
 * The readiness probe of a conditional-put adapter. It proves, once per place (an endpoint and
 * its bucket or container) per JVM, that the store refuses a second exclusive create of one key
 * sent through exactly the request commit records take. A store, proxy or emulator that
 * accepts the precondition and ignores it would let an exclusive create overwrite, and a
 * duplicate commit replace a record. The probe creates and deletes one small object under the
 * table's log (`LogLayout.newProbe`, chosen by the adapter), never outside the table.
 *
 * @param precondition the adapter's exclusive create as its users know it (`If-None-Match: *`,
 *                     `ifGenerationMatch=0`), named in logs and errors
 * @param optOut       the conf that skips the probe for a store certified otherwise
 */
final class ExclusiveCreateProbe(precondition: String, optOut: String) {
  private val log = LoggerFactory.getLogger(classOf[ExclusiveCreateProbe])
  private val verified = ConcurrentHashMap.newKeySet[String]()

  /**
   * Proves `place` once (a no-op after it passed), or only warns when the user opted out.
   *
   * @param create one exclusive create of a key through the records' request: true if it
   *               created the object, false if the store refused it because it exists
   * @param delete deletes the probe object afterwards, whatever happened
   * @param url    how errors and logs show a path
   */
  def verify(place: String, adapter: String, probe: Path, enabled: Boolean)(
      create: (Path, Array[Byte]) => Boolean, delete: Path => Unit, url: Path => String): Unit = {
    if (!enabled) {
      log.warn(s"txcommit: $optOut=false: trusting $place to honour $precondition without checking")
      return
    }
    if (verified.contains(place)) return
    try {
      val first = create(probe, "{\"probe\":1}".getBytes(UTF_8))
      val second = create(probe, "{\"probe\":2}".getBytes(UTF_8))
      if (!first || second) throw new UnsupportedStoreException(
        s"the endpoint $place does not provide the conditional-put capability the '$adapter' " +
          s"adapter relies on: it ignored $precondition (two exclusive creates of ${url(probe)} " +
          "both succeeded), so a commit record could be overwritten. Use an endpoint that " +
          s"honours $precondition, certify it with the conformance kit, or (at your own risk) " +
          s"set $optOut=false.")
      verified.add(place)
      log.info(s"txcommit: $place refuses a second $precondition create: conditional put verified")
    } finally {
      try delete(probe)
      catch { case NonFatal(e) => log.warn(s"txcommit: could not delete probe ${url(probe)}: ${e.getMessage}") }
    }
  }

  /** For tests: forget what was verified. */
  def reset(): Unit = verified.clear()
}
