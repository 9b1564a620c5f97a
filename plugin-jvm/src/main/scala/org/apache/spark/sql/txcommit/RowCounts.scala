package org.apache.spark.sql.txcommit

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.execution.{SQLExecution, SparkPlan}
import org.apache.spark.sql.execution.command.DataWritingCommandExec
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd
import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.log.{LogLayout, RecordCodec, RowCount}
import io.txcommit.store.Adapters

/**
 * Records the rows each committed transaction wrote (`_txcommit/rows/<txn>.json`) and adds them
 * to `_SUCCESS`. Spark counts a write's rows (its `numOutputRows` metric) only after the job
 * commit returns, so the driver notes which SQL execution committed which transaction, and when
 * that execution ends successfully, takes the count from the write command's metric: never
 * from reading data back. Writes Spark runs outside a write command (a streaming sink's batch)
 * have no such metric and stay uncounted, as does a transaction whose driver died in between.
 */
object RowCounts {
  private val log = LoggerFactory.getLogger(getClass)
  private final case class Committed(table: Path, txn: String, conf: Configuration)
  private val byExecution = new ConcurrentHashMap[Long, List[Committed]]()
  private val installed = new AtomicBoolean(false)

  /** Called on the driver by a job commit that committed `txn` into `table`. */
  def committed(table: Path, txn: String, conf: Configuration): Unit =
    for {
      sc <- SparkContext.getActive
      id <- Option(sc.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)).flatMap(_.toLongOption)
    } {
      if (installed.compareAndSet(false, true)) sc.addSparkListener(new Listener)
      byExecution.merge(id, List(Committed(table, txn, conf)), (a, b) => a ++ b)
    }

  private final class Listener extends SparkListener {
    override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
      case e: SparkListenerSQLExecutionEnd => Option(byExecution.remove(e.executionId)).foreach(ended(e, _))
      case _ => ()
    }
  }

  private def ended(e: SparkListenerSQLExecutionEnd, commits: List[Committed]): Unit = commits match {
    // One execution writing two transactions (a command running two writes) has one count for both.
    case List(c) if e.executionFailure.isEmpty && e.qe != null =>
      rowsOf(e.qe.executedPlan).foreach(rows => record(c, rows))
    case _ => ()
  }

  private[txcommit] def rowsOf(plan: SparkPlan): Option[Long] =
    plan.collectFirst { case w: DataWritingCommandExec => w.cmd.metrics.get("numOutputRows") }.flatten.map(_.value)

  private def record(c: Committed, rows: Long): Unit =
    try {
      val store = Adapters.open(c.table, c.conf)
      val layout = LogLayout(c.table)
      // `_SUCCESS` is the last commit's summary: add the count only while it is still this one's
      // (first, so that once the count file exists, `_SUCCESS` has it too).
      store.read(layout.success).foreach { bytes =>
        val n = new com.fasterxml.jackson.databind.ObjectMapper().readTree(bytes)
        if (n.isObject && n.path("txn").asText() == c.txn && n.path("rows").isNull) {
          n.asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].put("rows", rows)
          store.writeReplacing(layout.success, RecordCodec.write(n))
        }
      }
      store.createExclusive(layout.rowCount(c.txn), RowCount.encode(RowCount(c.txn, rows)))
      log.info(s"txcommit: txn ${c.txn} on ${Paths.display(c.table)} wrote $rows row(s)")
    } catch {
      case NonFatal(ex) => log.warn(s"txcommit: could not record the row count of txn ${c.txn} on " +
        s"${Paths.display(c.table)} (${ex.getMessage}); the transaction is committed, its history shows no row count")
    }
}
