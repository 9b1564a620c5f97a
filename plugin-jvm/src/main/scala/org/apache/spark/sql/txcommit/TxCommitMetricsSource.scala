package org.apache.spark.sql.txcommit

import scala.util.control.NonFatal

import com.codahale.metrics.MetricRegistry
import org.apache.spark.SparkEnv
import org.apache.spark.metrics.source.Source
import org.slf4j.LoggerFactory

import io.txcommit.metrics.TxCommitMetrics

/**
 * txcommit's metrics ([[TxCommitMetrics]]) as a Spark metrics source named `txcommit`. Spark's
 * `Source` is Spark's own (`private[spark]`), hence this package.
 */
final class TxCommitMetricsSource extends Source {
  override val sourceName: String = "txcommit"
  override val metricRegistry: MetricRegistry = TxCommitMetrics.registry
}

object TxCommitMetricsSource {
  private val log = LoggerFactory.getLogger(getClass)

  /** Registers the source with this JVM's metrics system (the plugin does, at start). */
  def register(): Unit =
    try Option(SparkEnv.get).foreach { env =>
        val source = new TxCommitMetricsSource
        env.metricsSystem.removeSource(source) // a JVM's next SparkContext registers anew
        env.metricsSystem.registerSource(source)
      }
    catch { case NonFatal(e) => log.warn(s"txcommit: metrics not registered with Spark: ${e.getMessage}") }
}
