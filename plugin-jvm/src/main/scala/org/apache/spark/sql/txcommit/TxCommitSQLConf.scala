package org.apache.spark.sql.txcommit

import org.apache.spark.sql.internal.SQLConf

import io.txcommit.conf.TxCommitConf
import io.txcommit.fault.HaltPoint

/**
 * Registers txcommit's session confs with Spark's SQLConf so that `spark.conf.set` validates
 * them when a (possibly JVM-less) client sets them, and `SET -v` documents them. It lives in
 * Spark's package because Spark's conf builder is package-private (as Delta Lake does).
 */
object TxCommitSQLConf {
  val READ_FILTER = SQLConf.buildConf(TxCommitConf.ReadFilter)
    .doc("txcommit: hide files of uncommitted transactions and failed attempts from reads.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val IGNORE_CORRUPT_RECORDS = SQLConf.buildConf(TxCommitConf.IgnoreCorruptRecords)
    .doc("txcommit: when a commit record is corrupt, hide its transaction's files and warn " +
      "instead of failing the read.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(false)

  val CLEANUP_ATTEMPTS = SQLConf.buildConf(TxCommitConf.CleanupAttempts)
    .doc("txcommit: after a commit, delete files of the transaction's failed task attempts.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(true)

  val HALT_AT = SQLConf.buildConf(TxCommitConf.HaltAt)
    .doc("txcommit (tests only): halt the JVM at this named point of the protocol. Ignored " +
      s"unless the server started with ${TxCommitConf.AllowFaultInjection}=true.")
    .version("0.1.0")
    .stringConf
    .checkValues(HaltPoint.all.map(_.name).toSet + "")
    .createWithDefault("")

  val KEEP_ABORTED_FILES = SQLConf.buildConf(TxCommitConf.KeepAbortedFiles)
    .doc("txcommit (tests only): leave the files of aborted task attempts in place, as an " +
      "executor that died would.")
    .version("0.1.0")
    .booleanConf
    .createWithDefault(false)

  /** Forces registration (Scala objects initialise lazily). */
  def register(): Unit = {
    Seq(READ_FILTER, IGNORE_CORRUPT_RECORDS, CLEANUP_ATTEMPTS, HALT_AT, KEEP_ABORTED_FILES)
    ()
  }
}
