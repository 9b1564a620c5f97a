package io.txcommit.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}

import io.txcommit.{Paths, TransactionException}
import io.txcommit.commit.{CheckTableNesting, DecideGroup, OpenGroup, OpenGroups}
import io.txcommit.conf.TxCommitConf
import io.txcommit.log.{Decision, LogLayout}

/**
 * A multi-table transaction of a session (docs/protocol.md, I33): `TXCOMMIT BEGIN` opens one and
 * names it in the session's conf `spark.txcommit.transaction`, so that every write job of the
 * session (DataFrame writes, SQL INSERT, overwrites, dynamic overwrites, to any number of
 * tables) publishes a prepared record instead of committing; `TXCOMMIT COMMIT` creates its one
 * decision, which commits them all at once; `TXCOMMIT ROLLBACK` decides it aborted. Commands,
 * run once when the statement executes, like the maintenance statements.
 */
private[spark] object TransactionCommands {
  val Columns: Seq[Attribute] = MaintenanceCommands.attrs(
    "transaction" -> StringType, "outcome" -> StringType, "writes" -> IntegerType, "decision" -> StringType)

  /** The transaction the session names, open in this driver. */
  def open(spark: SparkSession, statement: String): (String, OpenGroup) = {
    val id = current(spark).getOrElse(throw new TransactionException(s"$statement: no transaction is open in " +
        "this session; open one with TXCOMMIT BEGIN (or txcommit.transaction(spark) from Python)."))
    OpenGroups.get(id) match {
      case Some(g) => (id, g)
      case None =>
        spark.conf.unset(TxCommitConf.Group)
        throw new TransactionException(s"$statement: the session names transaction $id, which is not open in " +
          "this driver (it was committed or rolled back, or the server restarted since TXCOMMIT BEGIN: a " +
          "restart leaves it undecided, and its lease rolls it back). Nothing of it is visible; the session " +
          "is out of it now.")
    }
  }

  def current(spark: SparkSession): Option[String] =
    spark.conf.getOption(TxCommitConf.Group).map(_.trim).filter(_.nonEmpty)

  /** Ends the session's part in transaction `id` once it is decided (no longer open here). */
  def leaveIfDecided(spark: SparkSession, id: String): Unit =
    if (OpenGroups.get(id).isEmpty && current(spark).contains(id)) spark.conf.unset(TxCommitConf.Group)

  /**
   * Decides the session's open transaction with `decide` (COMMIT or ROLLBACK): one row, its
   * outcome (`outcome` and a note when nothing was written, so no decision was needed).
   */
  def decide(spark: SparkSession, statement: String, outcome: String)(
      decide: (OpenGroup, org.apache.hadoop.conf.Configuration) => Option[Decision]): Seq[Row] = {
    val (id, g) = open(spark, statement)
    try Seq(row(g, decide(g, spark.sessionState.newHadoopConf()).fold(s"$outcome (nothing written)")(_.outcome)))
    finally leaveIfDecided(spark, id)
  }

  def row(g: OpenGroup, outcome: String): Row =
    Row(g.id, outcome, g.prepared.size, g.decisionRef.map(r => Paths.display(r.decisionPath)).orNull)
}

/** `TXCOMMIT BEGIN [LOCATION '<dir>']`: one row, the transaction and where its decision will live. */
final case class BeginTransactionCommand(location: Option[String]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = MaintenanceCommands.attrs(
    "transaction" -> StringType, "location" -> StringType, "leaseMs" -> LongType)

  override def run(spark: SparkSession): Seq[Row] = {
    val statement = "TXCOMMIT BEGIN"
    TransactionCommands.current(spark).filter(id => OpenGroups.get(id).isDefined).foreach { id =>
      throw new TransactionException(s"$statement: transaction $id is open in this session; TXCOMMIT COMMIT or " +
        "TXCOMMIT ROLLBACK it first (transactions do not nest).")
    }
    val protocol = spark.conf.getOption("spark.sql.sources.commitProtocolClass").getOrElse("")
    if (protocol != TxCommitConf.ProtocolClass) throw new TransactionException(s"$statement: this session's " +
      s"writes do not go through txcommit (spark.sql.sources.commitProtocolClass is '$protocol'), so they could " +
      "not be part of a transaction; switch it on first (txcommit.enable(spark), or SET " +
      s"spark.sql.sources.commitProtocolClass=${TxCommitConf.ProtocolClass}).")
    val conf = spark.sessionState.newHadoopConf()
    val dir = location.map { l =>
      val (p, _) = MaintenanceCommands.qualified(spark, l)
      checkLocation(statement, p, conf)
      p
    }
    val leaseMs = TxCommitConf.groupLeaseMs(conf)
    val g = OpenGroups.begin(dir, leaseMs)
    spark.conf.set(TxCommitConf.Group, g.id)
    Seq(Row(g.id, dir.map(Paths.display).orNull, leaseMs))
  }

  /**
   * A named location holds decisions in `<dir>/_txcommit/groups/`, which makes it look like a
   * table to readers: it must be a directory of its own, in no table and holding nothing else.
   */
  private def checkLocation(statement: String, dir: Path, conf: org.apache.hadoop.conf.Configuration): Unit = {
    val fs = dir.getFileSystem(conf)
    CheckTableNesting.enclosingTable(fs, dir.getParent).foreach { t =>
      throw new TransactionException(s"$statement LOCATION '${Paths.display(dir)}': it is inside the txcommit " +
        s"table ${Paths.display(t)}; name a directory of its own for transactions' decisions. Nothing was begun.")
    }
    val others =
      try fs.listStatus(dir).toSeq.map(_.getPath.getName).filterNot(_ == LogLayout.LogDirName)
      catch { case _: java.io.FileNotFoundException => Nil }
    if (others.nonEmpty) throw new TransactionException(s"$statement LOCATION '${Paths.display(dir)}': it holds " +
      s"${others.take(3).mkString(", ")}${if (others.size > 3) ", ..." else ""}; decisions need a directory of their " +
      "own (readers would take it for a table holding those files). Nothing was begun.")
  }
}

/** `TXCOMMIT COMMIT`: one row, the transaction, `committed`, its writes and its decision. */
final case class CommitTransactionCommand() extends LeafRunnableCommand {
  override val output: Seq[Attribute] = TransactionCommands.Columns

  override def run(spark: SparkSession): Seq[Row] =
    TransactionCommands.decide(spark, "TXCOMMIT COMMIT", "committed")(DecideGroup.commit(_, _))
}

/** `TXCOMMIT ROLLBACK`: one row, the transaction, `aborted`, its writes and its decision. */
final case class RollbackTransactionCommand() extends LeafRunnableCommand {
  override val output: Seq[Attribute] = TransactionCommands.Columns

  override def run(spark: SparkSession): Seq[Row] =
    TransactionCommands.decide(spark, "TXCOMMIT ROLLBACK", "aborted")(DecideGroup.rollback(_, _))
}
