package io.txcommit.spark

import java.util.Locale

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

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
 * TXCOMMIT GENERATE MANIFEST '<path>'
 * TXCOMMIT ALTER '<path>' SET ('<property>' = '<value>' [, ...])
 * TXCOMMIT RESTORE '<path>' TO '<transaction id or ISO-8601 time>'
 * TXCOMMIT BEGIN [LOCATION '<directory>']
 * TXCOMMIT COMMIT
 * TXCOMMIT ROLLBACK
 * }}}
 *
 * A quote inside the path is written twice (`'it''s'`). Every other statement goes to Spark's
 * parser untouched (DelegatingParser, compiled per Spark line).
 */
final class TxCommitSqlParser(delegate: ParserInterface) extends DelegatingParser(delegate) {
  override protected def ours(sqlText: String): Option[LogicalPlan] = TxCommitSqlParser.ours(sqlText)
}

object TxCommitSqlParser {
  private val Statement =
    "(?is)^\\s*TXCOMMIT\\s+(VACUUM|CHECKPOINT|HISTORY|FILES|GENERATE\\s+MANIFEST|ALTER|RESTORE)\\b(.*)$".r
  private val PathThenRest = "(?s)^\\s*'((?:[^']|'')*)'(.*)$".r
  private val VacuumOpts =
    "(?is)^(?:\\s+RETAIN\\s+([0-9]+(?:\\.[0-9]+)?)\\s+HOURS?)?(\\s+DRY\\s+RUN)?(\\s+FORCE)?\\s*;?\\s*$".r
  private val Nothing = "(?s)^\\s*;?\\s*$".r
  private val SetList = "(?is)^\\s+SET\\s*\\((.*)\\)\\s*;?\\s*$".r
  private val RestoreTo = "(?is)^\\s+TO\\s+'((?:[^']|'')*)'\\s*;?\\s*$".r
  private val Pair = "(?s)^\\s*'((?:[^']|'')*)'\\s*=\\s*'((?:[^']|'')*)'\\s*(?:,(.*))?$".r

  val Usage: String = "TXCOMMIT VACUUM '<path>' [RETAIN <n> HOURS] [DRY RUN] [FORCE], " +
    "TXCOMMIT CHECKPOINT '<path>', TXCOMMIT HISTORY '<path>', TXCOMMIT FILES '<path>', " +
    "TXCOMMIT GENERATE MANIFEST '<path>', TXCOMMIT ALTER '<path>' SET ('<property>' = '<value>') or " +
    "TXCOMMIT RESTORE '<path>' TO '<transaction id or time>'"

  private val TransactionStatement = "(?is)^\\s*TXCOMMIT\\s+(BEGIN|COMMIT|ROLLBACK)\\b(.*)$".r
  private val BeginLocation = "(?is)^\\s+LOCATION\\s+'((?:[^']|'')*)'\\s*;?\\s*$".r

  val TransactionUsage: String = "TXCOMMIT BEGIN [LOCATION '<directory>'], TXCOMMIT COMMIT or TXCOMMIT ROLLBACK"

  /** The command for a txcommit statement; None for any other SQL. */
  def ours(sqlText: String): Option[LogicalPlan] = sqlText match {
    case TransactionStatement(verb, tail) =>
      def bad(why: String) = new MaintenanceException(s"cannot parse '${sqlText.trim}': $why. " +
        s"Expected $TransactionUsage.")
      Some((verb.toUpperCase(Locale.ROOT), tail) match {
        case ("BEGIN", Nothing()) => BeginTransactionCommand(None)
        case ("BEGIN", BeginLocation(dir)) if dir.trim.nonEmpty => BeginTransactionCommand(Some(dir.replace("''", "'")))
        case ("COMMIT", Nothing()) => CommitTransactionCommand()
        case ("ROLLBACK", Nothing()) => RollbackTransactionCommand()
        case (v, t) => throw bad(s"unexpected '${t.trim}' after $v")
      })
    case Statement(verb, rest) =>
      def bad(why: String) = new MaintenanceException(s"cannot parse '${sqlText.trim}': $why. " +
        s"Expected $Usage.")
      val (path, tail) = rest match {
        case PathThenRest(p, t) => (p.replace("''", "'"), t)
        case _ => throw bad("the path must follow as a single-quoted string")
      }
      if (path.trim.isEmpty) throw bad("the path is empty")
      Some(verb.toUpperCase(Locale.ROOT).split("\\s+").mkString(" ") match {
        case "VACUUM" => tail match {
            case VacuumOpts(hours, dry, force) => VacuumCommand(path,
                VacuumOptions(
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
        case "ALTER" => tail match {
            case SetList(list) => AlterCommand(path,
                pairs(list).getOrElse(throw bad("SET takes " +
                    "('<property>' = '<value>'), pairs separated by commas, each quoted")))
            case _ => throw bad(s"expected SET ('<property>' = '<value>') after the path, not '${tail.trim}'")
          }
        case "RESTORE" => tail match {
            case RestoreTo(to) => RestoreCommand(path, to.replace("''", "'"))
            case _ => throw bad(s"expected TO '<transaction id or time>' after the path, not '${tail.trim}'")
          }
        case "GENERATE MANIFEST" => tail match {
            case Nothing() => GenerateManifestCommand(path)
            case _ => throw bad(s"unexpected '${tail.trim}' after the path")
          }
        case _ => tail match {
            case Nothing() => FilesCommand(path)
            case _ => throw bad(s"unexpected '${tail.trim}' after the path")
          }
      })
    case _ => None
  }

  /** `'k' = 'v', ...` as pairs in order; None when it is not that, or is empty. */
  private def pairs(list: String): Option[Seq[(String, String)]] = {
    @scala.annotation.tailrec
    def loop(rest: String, acc: Vector[(String, String)]): Option[Seq[(String, String)]] = rest match {
      case Pair(k, v, more) =>
        val next = acc :+ (k.replace("''", "'") -> v.replace("''", "'"))
        Option(more) match {
          case Some(m) => loop(m, next)
          case None => Some(next)
        }
      case _ => None
    }
    loop(list, Vector.empty)
  }
}
