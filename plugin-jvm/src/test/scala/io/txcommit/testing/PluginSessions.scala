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

  /**
   * [[builder]] whose reads see commits at once (no clock allowance, no checkpoints); with
   * `countListings`, the local file system counts the listings of watched directories
   * ([[ListingCountingFileSystem]]).
   */
  def immediate(app: String, countListings: Boolean = false): SparkSession.Builder = {
    val b = builder(app).config(TxCommitConf.MaxClockSkewMs, "0").config(TxCommitConf.CheckpointInterval, "0")
    if (!countListings) b
    else b.config("spark.hadoop.fs.file.impl", classOf[ListingCountingFileSystem].getName)
      .config("spark.hadoop.fs.file.impl.disable.cache", "true")
      // A commit's clean-up of failed attempts lists each directory it wrote, in the background
      // after the job returned: a count of a read's listings would take those for the read's.
      .config(TxCommitConf.CleanupAttempts, "false")
  }

  /**
   * A Hive-enabled session with the plugin, its metastore (Derby), warehouse and Derby log
   * under `home`; reads see commits at once (no clock allowance, no checkpoints). Only a line
   * with Spark's Hive support on its test classpath can start it.
   */
  def hive(app: String, home: java.nio.file.Path): SparkSession = {
    // Derby writes its log into the working directory unless told where.
    System.setProperty("derby.stream.error.file", home.resolve("derby.log").toString)
    immediate(app)
      .config("spark.sql.warehouse.dir", home.resolve("warehouse").toString)
      .config("spark.hadoop.javax.jdo.option.ConnectionURL",
        s"jdbc:derby:;databaseName=${home.resolve("metastore_db")};create=true")
      .enableHiveSupport()
      .getOrCreate()
  }
}
