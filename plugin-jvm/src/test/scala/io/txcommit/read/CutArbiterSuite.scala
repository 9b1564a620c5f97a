package io.txcommit.read

import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.SparkConf
import org.apache.spark.api.plugin.PluginContext
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.spark.TxCommitPlugin

/**
 * Executors of one read agree on its snapshot through the driver: each executor's
 * [[CutArbiter.Remote]] asks the driver plugin (its RPC channel, here a direct call), the first
 * proposal of a read is fixed for every JVM of the read, and an executor asks once per decision.
 */
class CutArbiterSuite extends AnyFunSuite {

  /** An executor's plugin context whose `ask` reaches the driver plugin, counting the questions. */
  private final class Executor(driver: TxCommitPlugin.Driver, id: String) extends PluginContext {
    val asked = new AtomicInteger()
    override def metricRegistry() = new com.codahale.metrics.MetricRegistry()
    override def conf() = new SparkConf(false)
    override def executorID(): String = id
    override def hostname(): String = "localhost"
    override def resources() = java.util.Collections.emptyMap()
    override def send(message: Any): Unit = ()
    override def ask(message: Any): AnyRef = { asked.incrementAndGet(); driver.receive(message.asInstanceOf[AnyRef]) }
  }

  private def cut() = ReadCut(java.util.UUID.randomUUID().toString, System.currentTimeMillis(), Some("app"), 1000L)

  test("executors of one read get the first proposal of each decision; another read decides anew") {
    val driver = new TxCommitPlugin.Driver
    val (one, two) = (new Executor(driver, "1"), new Executor(driver, "2"))
    val (a, b) = (new CutArbiter.Remote(one), new CutArbiter.Remote(two))
    val read = cut()
    assert(a.agreeHighest(read, "s3a://b/t", 7L) == 7L)
    assert(b.agreeHighest(read, "s3a://b/t", 9L) == 7L, "a later listing found more: the read keeps 7")
    assert(b.agreeCommitted(read, "s3a://b/t", "mwrb6d3zh3ckkd3q", proposed = false) === false)
    assert(a.agreeCommitted(read, "s3a://b/t", "mwrb6d3zh3ckkd3q", proposed = true) === false)
    // The driver's own listings of the read agree with its executors.
    assert(CutArbiter.Local.agreeHighest(read, "s3a://b/t", 8L) == 7L)
    // Each executor asks once per decision, then answers from what it was told.
    assert(a.agreeHighest(read, "s3a://b/t", 10L) == 7L && one.asked.get == 2)
    val next = cut()
    assert(b.agreeHighest(next, "s3a://b/t", 9L) == 9L, "another read fixes its own snapshot")
  }

  test("the driver counts a read as asked by executors once, whatever they ask") {
    val read = cut()
    assert(CutArbiter.Local.firstRemote(AgreeHighest(read.id, "t", 1L)))
    assert(!CutArbiter.Local.firstRemote(AgreeCommitted(read.id, "t", "mwrb6d3zh3ckkd3q", proposed = true)))
    assert(CutArbiter.Local.firstRemote(AgreeHighest(cut().id, "t", 1L)))
  }
}
