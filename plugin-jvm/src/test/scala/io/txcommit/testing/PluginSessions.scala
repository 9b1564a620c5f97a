package io.txcommit.testing

import org.apache.spark.sql.SparkSession

import io.txcommit.conf.TxCommitConf

/** A local Spark session with txcommit switched on as `spark-defaults.conf` does, for suites to add to. */
object PluginSessions {

  /**
   * `local[2]`, no web UI, txcommit's commit protocol and SQL extension, and its driver plugin
   * unless `plugin` is false.
   */
  def builder(app: String, plugin: Boolean = true): SparkSession.Builder = {
    val b = SparkSession.builder().master("local[2]").appName(app)
      .config("spark.ui.enabled", "false")
      .config("spark.sql.sources.commitProtocolClass", TxCommitConf.ProtocolClass)
      .config("spark.sql.extensions", "io.txcommit.spark.TxCommitExtensions")
    if (plugin) b.config("spark.plugins", "io.txcommit.spark.TxCommitPlugin") else b
  }
}
