package io.txcommit.spark

import java.util.{Collections, Map => JMap}

import org.apache.spark.SparkContext
import org.apache.spark.api.plugin.{DriverPlugin, ExecutorPlugin, PluginContext, SparkPlugin}
import org.apache.spark.sql.txcommit.{TxCommitMetricsSource, TxCommitSQLConf}
import org.slf4j.LoggerFactory

import io.txcommit.Version
import io.txcommit.conf.TxCommitConf
import io.txcommit.read.{CutArbiter, CutQuestion}

/**
 * `spark.plugins=io.txcommit.spark.TxCommitPlugin`: switches the read filter on for the whole
 * server (every session's file listing hides uncommitted files; a session opts out with
 * `spark.txcommit.read.filter=false`), registers txcommit's confs and its metrics (the source
 * `txcommit` of Spark's metrics system, on the driver and the executors). An input path filter
 * that was already configured keeps working: txcommit's filter consults it first.
 */
class TxCommitPlugin extends SparkPlugin {
  override def driverPlugin(): DriverPlugin = new TxCommitPlugin.Driver
  override def executorPlugin(): ExecutorPlugin = new TxCommitPlugin.Executor
}

object TxCommitPlugin {
  private val log = LoggerFactory.getLogger(classOf[TxCommitPlugin])

  final class Driver extends DriverPlugin {
    override def init(sc: SparkContext, ctx: PluginContext): JMap[String, String] = {
      Version.requireSparkLine() // before anything of it runs: the server does not start
      TxCommitSQLConf.register()
      CutArbiter.isDriver = true
      installReadFilter(sc.hadoopConfiguration)
      log.info(s"txcommit ${Version.current} (Spark ${Version.sparkLine.getOrElse("?")} line): read filter installed " +
        s"(${TxCommitConf.HadoopPathFilter}=${TxCommitConf.FilterClass}); enable writes per session " +
        s"with spark.sql.sources.commitProtocolClass=${TxCommitConf.ProtocolClass}")
      Collections.emptyMap()
    }

    /** txcommit's metrics, as the source `txcommit` of Spark's metrics system. */
    override def registerMetrics(appId: String, ctx: PluginContext): Unit = TxCommitMetricsSource.register()

    /**
     * An executor listing part of a read asks for the read's snapshot decisions. The first
     * question of each read is logged: it shows that executors list with the driver's cut.
     */
    override def receive(message: AnyRef): AnyRef = message match {
      case q: CutQuestion =>
        if (CutArbiter.Local.firstRemote(q))
          log.info(s"txcommit: read ${q.readId}: executors agree on its snapshot through the driver")
        CutArbiter.Local.answer(q).asInstanceOf[AnyRef]
      case other => throw new IllegalArgumentException(s"txcommit: unexpected plugin message $other")
    }
  }

  /** Lets this executor's read filters reach the driver's [[CutArbiter]]. */
  final class Executor extends ExecutorPlugin {
    override def init(ctx: PluginContext, extraConf: JMap[String, String]): Unit = {
      CutArbiter.askDriverThrough(ctx)
      TxCommitMetricsSource.register()
    }
  }

  def installReadFilter(conf: org.apache.hadoop.conf.Configuration): Unit = {
    val existing = Option(conf.get(TxCommitConf.HadoopPathFilter)).map(_.trim).filter(_.nonEmpty)
    existing.filter(_ != TxCommitConf.FilterClass).foreach { other =>
      conf.set(TxCommitConf.DelegateFilter, other)
      log.info(s"txcommit: keeping the configured input path filter $other behind txcommit's")
    }
    conf.set(TxCommitConf.HadoopPathFilter, TxCommitConf.FilterClass)
  }
}
