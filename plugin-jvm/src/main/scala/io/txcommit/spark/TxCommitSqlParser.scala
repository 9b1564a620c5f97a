package io.txcommit.spark

import java.util.Locale

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

import io.txcommit.MaintenanceException
import io.txcommit.maintenance.{Vacuum, VacuumOptions}

/**
 * Spark's SQL parser plus txcommit's maintenance statements (injected by
 * [[TxCommitExtensions]]), so a JVM-less Connect client runs them with `spark.sql(...)`:
 *
 * {{{
 * TXCOMMIT VACUUM '<path>' [RETAIN <n> HOURS] [DRY RUN] [FORCE]
 * TXCOMMIT CHECKPOINT '<path>'
 * TXCOMMIT HISTORY '<path>'
 * TXCOMMIT FILES '<path>'
 * }}}
 *
 * A quote inside the path is written twice (`'it''s'`). Every other statement goes to Spark's
 * parser untouched.
 */
final class TxCommitSqlParser(delegate: ParserInterface) extends ParserInterface {
  import TxCommitSqlParser._

  override def parsePlan(sqlText: String): LogicalPlan = ours(sqlText).getOrElse(delegate.parsePlan(sqlText))

  override def parsePlanWithParameters(sqlText: String, ctx: ParameterContext): LogicalPlan =
    ours(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, ctx))

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
  override def parseTemporalTableIdentifier(sqlText: String) = delegate.parseTemporalTableIdentifier(sqlText)
}

object TxCommitSqlParser {
  private val Statement = "(?is)^\\s*TXCOMMIT\\s+(VACUUM|CHECKPOINT|HISTORY|FILES)\\b(.*)$".r
  private val PathThenRest = "(?s)^\\s*'((?:[^']|'')*)'(.*)$".r
  private val VacuumOpts =
    "(?is)^(?:\\s+RETAIN\\s+([0-9]+(?:\\.[0-9]+)?)\\s+HOURS?)?(\\s+DRY\\s+RUN)?(\\s+FORCE)?\\s*;?\\s*$".r
  private val Nothing = "(?s)^\\s*;?\\s*$".r

  val Usage: String = "TXCOMMIT VACUUM '<path>' [RETAIN <n> HOURS] [DRY RUN] [FORCE], " +
    "TXCOMMIT CHECKPOINT '<path>', TXCOMMIT HISTORY '<path>' or TXCOMMIT FILES '<path>'"

  /** The command for a txcommit statement; None for any other SQL. */
  def ours(sqlText: String): Option[LogicalPlan] = sqlText match {
    case Statement(verb, rest) =>
      def bad(why: String) = new MaintenanceException(s"cannot parse '${sqlText.trim}': $why. " +
        s"Expected $Usage.")
      val (path, tail) = rest match {
        case PathThenRest(p, t) => (p.replace("''", "'"), t)
        case _ => throw bad("the path must follow as a single-quoted string")
      }
      if (path.trim.isEmpty) throw bad("the path is empty")
      Some(verb.toUpperCase(Locale.ROOT) match {
        case "VACUUM" => tail match {
          case VacuumOpts(hours, dry, force) => VacuumCommand(path, VacuumOptions(
            retainHours = Option(hours).map(_.toDouble).getOrElse(Vacuum.DefaultRetainHours),
            dryRun = dry != null, force = force != null))
          case _ => throw bad(s"unexpected '${tail.trim}' after the path")
        }
        case "CHECKPOINT" => tail match {
          case Nothing() => CheckpointCommand(path)
          case _ => throw bad(s"unexpected '${tail.trim}' after the path")
        }
        case "HISTORY" => tail match {
          case Nothing() => HistoryCommand(path)
          case _ => throw bad(s"unexpected '${tail.trim}' after the path")
        }
        case _ => tail match {
          case Nothing() => FilesCommand(path)
          case _ => throw bad(s"unexpected '${tail.trim}' after the path")
        }
      })
    case _ => None
  }
}
