package io.txcommit.fault

import scala.util.control.ControlThrowable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkEnv
import org.slf4j.LoggerFactory

import io.txcommit.conf.TxCommitConf

/** A named point of the protocol where tests may halt the JVM (docs/protocol.md lists them). */
sealed abstract class HaltPoint(val name: String, val description: String)

object HaltPoint {
  case object JobAfterNestingCheck extends HaltPoint("job.afterNestingCheck",
      "job setup found no other table's log on the path; the job's own log does not exist yet")
  case object TaskBeforeCommit extends HaltPoint("task.beforeCommit",
      "a task has written its files and is about to ask to commit")
  case object JobDuringPublishData extends HaltPoint("job.duringPublishData",
      "half of the staged data files are published (multipart uploads completed), half not")
  case object JobBeforeRecord extends HaltPoint("job.beforeRecord",
      "every task committed; the commit record is not yet created")
  case object JobAfterRecord extends HaltPoint("job.afterRecord",
      "the commit record exists; no derived work (cleanup, _SUCCESS) is done")
  case object JobDuringCleanup extends HaltPoint("job.duringCleanup",
      "the background clean-up (after the job returned) has finished its first directory of several")
  case object JobBeforeSuccess extends HaltPoint("job.beforeSuccess",
      "the record is complete (copied to commits/ for a replacing commit); _SUCCESS is not yet written")
  case object StreamingBeforeSinkLog extends HaltPoint("streaming.beforeSinkLog",
      "a streaming batch's commit record exists; Spark's _spark_metadata log does not have it yet")
  case object StreamingBeforeRecord extends HaltPoint("streaming.beforeRecord",
      "a streaming batch is claimed by this driver's txn; its commit record is not yet created")
  case object TransactionBeforeDecision extends HaltPoint("transaction.beforeDecision",
      "every write of a multi-table transaction published its prepared record; its decision is not yet created")
  case object TransactionAfterDecision extends HaltPoint("transaction.afterDecision",
      "a multi-table transaction's decision (committed) exists; no table's derived work is done")
  case object MaintenanceTask extends HaltPoint("maintenance.task",
      "a task of a maintenance job (VACUUM's deletes, RESTORE's checks) is about to run its items")

  val all: Seq[HaltPoint] =
    Seq(JobAfterNestingCheck, TaskBeforeCommit, JobDuringPublishData, JobBeforeRecord, JobAfterRecord, JobDuringCleanup,
      JobBeforeSuccess, StreamingBeforeSinkLog, StreamingBeforeRecord, TransactionBeforeDecision,
      TransactionAfterDecision, MaintenanceTask)
  val byName: Map[String, HaltPoint] = all.map(p => p.name -> p).toMap

  private val log = LoggerFactory.getLogger(getClass)

  /** What ends a pipeline run by [[simulated]] at its fault point. Not NonFatal: no stage's
   *  guard catches it, so nothing after the point runs, as after a real halt. */
  final class Halted(val point: HaltPoint) extends ControlThrowable(s"halted at ${point.name}")

  private val simulating = new ThreadLocal[Boolean] { override def initialValue(): Boolean = false }

  /**
   * Runs `body` (the commit pipeline, in one JVM: a suite) where the fault point that
   * `spark.txcommit.test.haltAt` names ends it as a halt ends the JVM: no stage after the point
   * runs, no clean-up, no abort. Left(point) when it halted there. Only the calling thread is
   * affected: a suite runs the background clean-up inline to reach its point.
   */
  def simulated[T](body: => T): Either[HaltPoint, T] = {
    val before = simulating.get
    simulating.set(true)
    try Right(body)
    catch { case h: Halted => Left(h.point) }
    finally simulating.set(before)
  }

  /**
   * Halts the JVM (no shutdown hooks, like SIGKILL) when `conf` names `point` and the server
   * allows fault injection. A shared server must not be killable by any client that can set a
   * session conf, hence the static switch.
   */
  def maybeHalt(conf: Configuration, point: HaltPoint): Unit = {
    maybePause(conf, point)
    if (TxCommitConf.haltAt(conf).contains(point)) {
      if (simulating.get) throw new Halted(point)
      val allowed = Option(SparkEnv.get).exists(_.conf.getBoolean(TxCommitConf.AllowFaultInjection, false))
      if (allowed) {
        log.error(s"txcommit: halting the JVM at fault point '${point.name}' (${TxCommitConf.HaltAt})")
        Runtime.getRuntime.halt(137)
      } else {
        log.warn(s"txcommit: ${TxCommitConf.HaltAt}=${point.name} ignored: the server was not started " +
          s"with ${TxCommitConf.AllowFaultInjection}=true")
      }
    }
  }

  /**
   * Pauses the calling thread for `spark.txcommit.test.pauseMs` when `conf` names `point` in
   * `spark.txcommit.test.pauseAt` (and the server allows fault injection): a driver that stalls
   * (a long GC, a frozen VM) and then carries on, as a zombie does. With
   * `spark.txcommit.test.resumeWhen` the pause ends as soon as that local file exists, so a test
   * wakes the zombie right after what it must overlap, however slow a loaded machine is.
   */
  private def maybePause(conf: Configuration, point: HaltPoint): Unit =
    if (Option(conf.get(TxCommitConf.PauseAt)).map(_.trim).contains(point.name) &&
      Option(SparkEnv.get).exists(_.conf.getBoolean(TxCommitConf.AllowFaultInjection, false))) {
      val ms = conf.getLong(TxCommitConf.PauseMs, 30000L)
      val resume = Option(conf.get(TxCommitConf.ResumeWhen)).map(_.trim).filter(_.nonEmpty)
      log.warn(s"txcommit: pausing $ms ms at fault point '${point.name}' (${TxCommitConf.PauseAt})" +
        resume.fold("")(f => s" or until $f exists"))
      val deadline = System.nanoTime() + ms * 1000000L
      def woken = resume.exists(f => java.nio.file.Files.exists(java.nio.file.Paths.get(f)))
      while (!woken && System.nanoTime() < deadline) {
        Thread.sleep(math.max(1L, math.min(100L, (deadline - System.nanoTime()) / 1000000L)))
      }
    }
}
