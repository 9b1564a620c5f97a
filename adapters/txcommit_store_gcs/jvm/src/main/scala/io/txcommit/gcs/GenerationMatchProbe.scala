package io.txcommit.gcs

import org.apache.hadoop.fs.Path

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.LogLayout
import io.txcommit.store.ExclusiveCreateProbe

/** The gcs adapter's readiness probe: a second `ifGenerationMatch=0` multipart upload of one
  * object ([[GcsStore.createIfAbsent]], the records' own upload path) must be refused (2 uploads,
  * the lookup of the refused one's create id, 1 delete). */
object GenerationMatchProbe {
  private val probe =
    new ExclusiveCreateProbe("ifGenerationMatch=0 (multipart upload)", GcsStore.VerifyGenerationMatch)

  def verify(store: GcsStore, table: Path): Unit = {
    val loc = store.loc
    probe.verify(s"${loc.endpoint} (bucket ${loc.bucket})", store.declaration.name, LogLayout(table).newProbe(),
      TxCommitConf.bool(loc.jobConf, GcsStore.VerifyGenerationMatch, default = true))(
      (p, bytes) => store.createIfAbsent(loc.name(p), bytes), p => store.delete(p), p => loc.url(loc.name(p)))
  }

  /** For tests: forget what was verified. */
  private[gcs] def reset(): Unit = probe.reset()
}
