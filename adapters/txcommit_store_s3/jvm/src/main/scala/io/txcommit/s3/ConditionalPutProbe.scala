package io.txcommit.s3

import org.apache.hadoop.fs.Path

import io.txcommit.conf.TxCommitConf
import io.txcommit.log.LogLayout
import io.txcommit.store.ExclusiveCreateProbe

/** Both S3 adapters' readiness probe: a second `If-None-Match: *` PUT of one key must be refused
  * (3 requests: two PUTs and a DELETE; the refused PUT's HEAD reads the id it met). */
object ConditionalPutProbe {
  private val probe = new ExclusiveCreateProbe("If-None-Match: *", TxCommitConf.VerifyConditionalPut)

  def verify(store: S3Store, table: Path): Unit = {
    val loc = store.loc
    probe.verify(s"${loc.endpoint} (bucket ${loc.bucket})", store.declaration.name, LogLayout(table).newProbe(),
      TxCommitConf.bool(loc.jobConf, TxCommitConf.VerifyConditionalPut, default = true))(
      (p, bytes) => store.putIfAbsent(loc.key(p), bytes), p => store.delete(p), p => loc.url(loc.key(p)))
  }

  /** For tests: forget what was verified. */
  private[s3] def reset(): Unit = probe.reset()
}
