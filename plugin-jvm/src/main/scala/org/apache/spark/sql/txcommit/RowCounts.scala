package org.apache.spark.sql.txcommit

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicReference

import scala.jdk.CollectionConverters._
import scala.util.Try
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
import io.txcommit.commit.{CommitLine, WriteSuccessSummary}
import io.txcommit.log.{LogLayout, RecordCodec, RowCount}
import io.txcommit.store.{Adapters, CommitStore}

/**
 * Records the rows each committed transaction wrote (`_txcommit/rows/<txn>.json`) and adds them
 * to `_SUCCESS`. Spark counts a write's rows (its `numOutputRows` metric) only after the job
 * commit returns, so the driver notes which SQL execution committed which transaction, and when
 * that execution ends successfully, takes the count from the write command's metric: never
 * from reading data back. Writes Spark runs outside a write command (a streaming sink's batch)
 * have no such metric and stay uncounted, as does a transaction whose driver died in between.
 * The commit's one INFO line ([[CommitLine]]) waits for the count, so that it carries it.
 */
object RowCounts {
  private val log = LoggerFactory.getLogger(getClass)
  private final class Committed(val table: Path, val line: CommitLine, val conf: Configuration) {
    val at: Long = System.currentTimeMillis()
    def txn: String = line.record.txn
  }
  private val byExecution = new ConcurrentHashMap[Long, List[Committed]]()

  /** Committed here, count not recorded yet: what a history read on this driver waits for. */
  private val unrecorded = ConcurrentHashMap.newKeySet[Committed]()

  /** The context the listener is on (a JVM may stop one context and start another). */
  private val installedOn = new AtomicReference[SparkContext]()

  /** The longest a history read waits for counts, and how young a commit must be to be waited for. */
  private val AwaitMs = 10000L

  /**
   * Called on the driver by a job commit that committed `line`'s transaction into `table`: its
   * line is logged once the count is in, or at once when no SQL execution will count it.
   */
  def committed(table: Path, line: CommitLine, conf: Configuration): Unit = {
    val execution = for {
      sc <- SparkContext.getActive
      id <- Option(sc.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)).flatMap(_.toLongOption)
    } yield (sc, id)
    execution match {
      case Some((sc, id)) =>
        if (installedOn.getAndSet(sc) ne sc) sc.addSparkListener(new Listener)
        val c = new Committed(qualified(table, conf), line, conf)
        unrecorded.add(c)
        byExecution.merge(id, List(c), (a, b) => a ++ b)
      case None => CommitLine.log(line, None)
    }
  }

  /**
   * Waits, at most 10 s, until this driver has recorded the counts of the transactions it
   * committed into `table` in the last 10 s: Spark hands a write's count to listeners only after
   * the write has returned to its client, so without this a history read sent right after a
   * write on the same server could show it uncounted. A count the listener never gets to (its
   * queue dropped the event) stays null once the wait ends.
   */
  def awaitRecorded(table: Path, conf: Configuration): Unit = {
    val key = qualified(table, conf)
    val deadline = System.currentTimeMillis() + AwaitMs
    def waiting: Boolean = {
      val now = System.currentTimeMillis()
      unrecorded.removeIf(c => c.at < now - 10 * 60 * 1000L) // events the listener never got
      unrecorded.asScala.exists(c => c.table == key && c.at > now - AwaitMs)
    }
    if (waiting) {
      log.info(s"txcommit: waiting for the row counts of the writes to ${Paths.display(key)} that just committed")
      while (waiting && System.currentTimeMillis() < deadline) Thread.sleep(10)
    }
  }

  private def qualified(table: Path, conf: Configuration): Path =
    try table.getFileSystem(conf).makeQualified(table)
    catch { case NonFatal(_) => table }

  private final class Listener extends SparkListener {
    override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
      case e: SparkListenerSQLExecutionEnd => Option(byExecution.remove(e.executionId)).foreach(ended(e, _))
      case _ => ()
    }
  }

  private def ended(e: SparkListenerSQLExecutionEnd, commits: List[Committed]): Unit = {
    val counted = commits match {
      // One execution writing two transactions (a command running two writes) has one count for both.
      case List(c) if e.executionFailure.isEmpty && e.qe != null =>
        rowsOf(e.qe.executedPlan).map { rows => record(c, rows); c -> rows }
      case _ => None
    }
    commits.foreach { c =>
      unrecorded.remove(c)
      CommitLine.log(c.line, counted.collect { case (done, rows) if done eq c => rows })
    }
  }

  private[txcommit] def rowsOf(plan: SparkPlan): Option[Long] =
    plan.collectFirst { case w: DataWritingCommandExec => w.cmd.metrics.get("numOutputRows") }.flatten.map(_.value)

  /**
   * Adds `rows` to `_SUCCESS` if it is still the summary of `txn` (the last commit's summary)
   * and has no count yet. Returns whether it did. A read, then a write: it holds the table's
   * summary lock ([[WriteSuccessSummary.exclusively]]) throughout, so a newer commit of this
   * JVM cannot write its summary in between and then lose it to this older one.
   */
  private[txcommit] def addToSummary(store: CommitStore, layout: LogLayout, txn: String, rows: Long): Boolean =
    WriteSuccessSummary.exclusively(layout.success)(store.read(layout.success).exists { bytes =>
      val n = new com.fasterxml.jackson.databind.ObjectMapper().readTree(bytes)
      val ours = n.isObject && n.path("txn").asText() == txn && n.path("rows").isNull
      if (ours) {
        n.asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode].put("rows", rows)
        store.writeReplacing(layout.success, RecordCodec.write(n))
      }
      ours
    })

  private def record(c: Committed, rows: Long): Unit =
    try record(c.table, c.txn, rows, Adapters.open(c.table, c.conf), c.conf)
    catch {
      case NonFatal(ex) => log.warn(s"txcommit: could not record the row count of txn ${c.txn} on " +
          s"${Paths.display(c.table)} (${ex.getMessage}); the transaction is committed, its history shows no row count")
    }

  /**
   * Writes the count of `txn` into `table`, unless the table is gone. It runs after the write
   * returned, so the table may have been deleted meanwhile (DROP TABLE deletes a managed table's
   * directory at once): a count written into a deleted directory would create it again, and a
   * table of that name could not be created. The commit's record is there while the table is:
   * none before, nothing is written; none after (the deletion ran while this wrote), what this
   * wrote is taken back, and the directories it made again are removed when empty.
   */
  private[txcommit] def record(table: Path, txn: String, rows: Long, store: CommitStore, conf: Configuration): Unit = {
    val layout = LogLayout(table)
    def gone = !store.exists(layout.commitRecord(txn))
    if (gone)
      log.info(s"txcommit: txn $txn on ${Paths.display(table)}: its record is gone (the table was deleted), so " +
        "its row count is not recorded")
    else {
      // First, so that once the count file exists, `_SUCCESS` has it too.
      addToSummary(store, layout, txn, rows)
      store.createExclusive(layout.rowCount(txn), RowCount.encode(RowCount(txn, rows)))
      if (!gone) log.debug(s"txcommit: txn $txn on ${Paths.display(table)} wrote $rows row(s)")
      else {
        store.delete(layout.rowCount(txn))
        WriteSuccessSummary.exclusively(layout.success) {
          if (store.read(layout.success).exists(b => summaryTxn(b).contains(txn))) store.delete(layout.success)
        }
        val fs = table.getFileSystem(conf)
        // Deepest first, each non-recursively (a directory still holding anything stays, and so
        // do those above it): what the deletion removed and this write made again.
        val stays = (dir: Path) => !Try(!fs.exists(dir) || fs.delete(dir, false)).getOrElse(false)
        Seq(layout.rowCount(txn).getParent, layout.logDir, table).find(stays)
        log.info(s"txcommit: txn $txn on ${Paths.display(table)}: the table was deleted while its row count was " +
          "recorded; the count is taken back")
      }
    }
  }

  private def summaryTxn(bytes: Array[Byte]): Option[String] =
    Try(new com.fasterxml.jackson.databind.ObjectMapper().readTree(bytes)).toOption
      .filter(_.isObject).map(_.path("txn").asText())
}
