package io.txcommit.commit

import org.slf4j.LoggerFactory

import io.txcommit.Paths
import io.txcommit.log.CommitRecord

/**
 * The one INFO line a commit logs (docs/operations.md): its transaction and table, what it
 * did, its files, bytes and rows, how long the job ran and how long its commit took. Rows are
 * counted by Spark only after the commit returns, so a batch job's line is logged once its
 * count is in (`RowCounts`); a commit Spark counts no rows for logs it at once, saying so.
 */
final case class CommitLine(table: String, record: CommitRecord, commitMs: Long) {
  def text(rows: Option[Long]): String = {
    val r = record
    val what = r.operation + r.replacement.map(x => s" (sequence ${x.sequence}, removed ${x.removedFiles} file(s))")
      .getOrElse("")
    val jobMs = math.max(0L, r.committedAt - r.startedAt)
    s"txcommit: COMMITTED txn ${r.txn} on $table: $what, ${r.files} file(s), ${r.bytes} bytes, " +
      rows.fold("rows not counted")(n => s"$n row(s)") + f", job ${jobMs / 1000.0}%.1f s, commit $commitMs ms"
  }
}

object CommitLine {
  private val log = LoggerFactory.getLogger(classOf[CommitLine])

  def of(ctx: TxnContext, record: CommitRecord, commitMs: Long): CommitLine =
    CommitLine(Paths.display(ctx.table), record, commitMs)

  def log(line: CommitLine, rows: Option[Long]): Unit = log.info(line.text(rows))
}

/** Where a committed job's [[CommitLine]] goes: logged at once, or once its rows are counted. */
trait CommitReport {
  def apply(line: CommitLine): Unit
}

object CommitReport {

  /** Logs the line at once, without rows (a streaming batch, a commit outside a write command). */
  object AtOnce extends CommitReport {
    override def apply(line: CommitLine): Unit = CommitLine.log(line, None)
  }
}
