package io.txcommit

import java.io.IOException

import org.apache.spark.SparkThrowable

/**
 * Every error txcommit raises on purpose. Each message names the file, key or value at fault
 * and says what to do; none carries credentials (paths are printed without user info).
 *
 * Each is a [[org.apache.spark.SparkThrowable]] with an error condition of its own
 * (`TXCOMMIT_*`) and a SQLSTATE from Spark's list (`error/error-states.json`), so every client
 * gets them from Spark's error framework: Spark Connect sends both to Python, Scala and Go
 * clients (`getCondition()`, `getSqlState()`), the Thrift server to JDBC and ODBC clients, and a
 * classic PySpark job reads them through py4j. The condition tells what happened, the SQLSTATE's
 * class what a scheduler may do: 40xxx retry (40001 a serialization failure: retry the job;
 * 40000 a rollback imposed from outside: retry once; 40003 completion unknown: re-run with the
 * same write id), anything else do not. Spark's own message file cannot take a plugin's
 * conditions, so the message is this exception's own (Spark's default `PRETTY` format shows
 * `getMessage`), and its one message parameter, `message`, carries it too. The table of
 * conditions is `conformance/vectors/names.json` ("errors"), which the Python client maps to
 * its `txcommit.*Error` classes.
 */
sealed abstract class TxCommitException(message: String, condition: ErrorCondition, cause: Throwable = null)
  extends IOException(s"txcommit: $message", cause) with SparkThrowable {
  override def getCondition: String = condition.name
  override def getSqlState: String = condition.sqlState
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Map.of("message", getMessage)
}

/** An error condition txcommit raises and its SQLSTATE (see [[TxCommitException]]). */
final case class ErrorCondition(name: String, sqlState: String)

object ErrorCondition {
  val CommitConflict = ErrorCondition("TXCOMMIT_COMMIT_CONFLICT", "40001") // serialization failure
  val Fenced = ErrorCondition("TXCOMMIT_FENCED", "40000") // transaction rollback
  val CommitOutcomeUnknown = ErrorCondition("TXCOMMIT_COMMIT_OUTCOME_UNKNOWN", "40003") // statement completion unknown
  val CorruptCommitRecord = ErrorCondition("TXCOMMIT_CORRUPT_COMMIT_RECORD", "XX001") // data corrupted
  val CorruptCheckpoint = ErrorCondition("TXCOMMIT_CORRUPT_CHECKPOINT", "XX001")
  val CorruptTableProperties = ErrorCondition("TXCOMMIT_CORRUPT_TABLE_PROPERTIES", "XX001")
  val TaskFileMissing = ErrorCondition("TXCOMMIT_TASK_FILE_MISSING", "58030") // I/O error
  val InvalidConf = ErrorCondition("TXCOMMIT_INVALID_CONF", "22023") // invalid parameter value
  val UnsupportedStore = ErrorCondition("TXCOMMIT_UNSUPPORTED_STORE", "0A000") // feature not supported
  val UnsupportedWrite = ErrorCondition("TXCOMMIT_UNSUPPORTED_WRITE", "0A000")
  val UnsupportedRead = ErrorCondition("TXCOMMIT_UNSUPPORTED_READ", "0A000")
  val UnsupportedSparkLine = ErrorCondition("TXCOMMIT_UNSUPPORTED_SPARK_LINE", "0A000")
  val WriteIdCommitted = ErrorCondition("TXCOMMIT_WRITE_ID_COMMITTED", "23505") // unique violation
  val Maintenance = ErrorCondition("TXCOMMIT_MAINTENANCE", "22023")
  val NotATable = ErrorCondition("TXCOMMIT_NOT_A_TABLE", "42K03") // Spark's PATH_NOT_FOUND's
  val ListingChanged = ErrorCondition("TXCOMMIT_LISTING_CHANGED", "40001")
  val StorePermission = ErrorCondition("TXCOMMIT_STORE_PERMISSION", "42501") // insufficient privilege
  val SchemaMismatch = ErrorCondition("TXCOMMIT_SCHEMA_MISMATCH", "42KDG") // schema not compatible with the data
  val TimeTravel = ErrorCondition("TXCOMMIT_TIME_TRAVEL", "42K0E") // Spark's INVALID_TIME_TRAVEL_SPEC's
  val RestoreFilesMissing = ErrorCondition("TXCOMMIT_RESTORE_FILES_MISSING", "58030")

  /** Every condition, keyed by the simple name of the exception that raises it. */
  val byException: Seq[(String, ErrorCondition)] = Seq(
    "CommitConflictException" -> CommitConflict,
    "FencedException" -> Fenced,
    "CommitOutcomeUnknownException" -> CommitOutcomeUnknown,
    "CorruptCommitRecordException" -> CorruptCommitRecord,
    "CorruptCheckpointException" -> CorruptCheckpoint,
    "CorruptTablePropertiesException" -> CorruptTableProperties,
    "TaskFileMissingException" -> TaskFileMissing,
    "InvalidConfException" -> InvalidConf,
    "UnsupportedStoreException" -> UnsupportedStore,
    "UnsupportedWriteException" -> UnsupportedWrite,
    "UnsupportedReadException" -> UnsupportedRead,
    "UnsupportedSparkLineException" -> UnsupportedSparkLine,
    "WriteIdCommittedException" -> WriteIdCommitted,
    "MaintenanceException" -> Maintenance,
    "NotATableException" -> NotATable,
    "ListingChangedException" -> ListingChanged,
    "StorePermissionException" -> StorePermission,
    "SchemaMismatchException" -> SchemaMismatch,
    "TimeTravelException" -> TimeTravel,
    "RestoreFilesMissingException" -> RestoreFilesMissing)
}

/**
 * Another writer committed first: a record of this transaction or of an overlapping replacing
 * commit exists (a store's exclusive create raises it for a target that exists).
 */
sealed class CommitConflictException private[txcommit] (message: String, condition: ErrorCondition)
  extends TxCommitException(message, condition) {
  def this(message: String) = this(message, ErrorCondition.CommitConflict)
}

/**
 * This job's transaction was fenced: VACUUM took its silent driver for dead and deleted its
 * files, or another driver of the same streaming query took the batch over. A conflict the
 * job did not race for: it says so whether it surfaces at the commit point or in a task that
 * finds its file gone.
 */
final class FencedException(message: String) extends CommitConflictException(message, ErrorCondition.Fenced)

/**
 * The publish of a commit record failed in a way that does not say whether the record was
 * created (the request may have reached the store). The transaction is committed or not, whole
 * either way; its files are kept, and VACUUM removes them if no record ever appears.
 */
final class CommitOutcomeUnknownException(message: String, cause: Throwable)
  extends TxCommitException(message, ErrorCondition.CommitOutcomeUnknown, cause)

/** A commit record that cannot be trusted: truncated, not JSON, wrong shape, or unsafe. */
final class CorruptCommitRecordException(message: String, cause: Throwable = null)
  extends TxCommitException(message, ErrorCondition.CorruptCommitRecord, cause)

/**
 * A checkpoint that cannot be trusted (truncated, wrong shape, unsafe). Readers skip it: it only
 * summarises records that stay in the log.
 */
final class CorruptCheckpointException(message: String, cause: Throwable = null)
  extends TxCommitException(message, ErrorCondition.CorruptCheckpoint, cause)

/**
 * Table properties (`_txcommit/properties/<n>.json`) that cannot be trusted. Never skipped for
 * an older number: that one may say the opposite of what was set last.
 */
final class CorruptTablePropertiesException(message: String, cause: Throwable = null)
  extends TxCommitException(message, ErrorCondition.CorruptTableProperties, cause)

/** A task cannot find a file it wrote (deleted under it): the task attempt fails and is retried. */
final class TaskFileMissingException(message: String)
  extends TxCommitException(message, ErrorCondition.TaskFileMissing)

/** A conf set to a value txcommit cannot use. */
final class InvalidConfException(val key: String, val value: String, expected: String)
  extends TxCommitException(
    s"conf $key has the invalid value '$value'; expected $expected. " +
      s"Fix it with spark.conf.set(\"$key\", ...) or unset it to get the default.",
    ErrorCondition.InvalidConf) {
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Map.of("message", getMessage, "key", key, "value", value)
}

/** A store whose scheme has no adapter that guarantees what the protocol needs. */
final class UnsupportedStoreException(message: String)
  extends TxCommitException(message, ErrorCondition.UnsupportedStore)

/** A plugin jar on a Spark line it was not built for: it refuses to start (see [[Version]]). */
final class UnsupportedSparkLineException(message: String)
  extends TxCommitException(message, ErrorCondition.UnsupportedSparkLine)

/** A write shape that txcommit cannot make transactional (it refuses rather than pretend). */
final class UnsupportedWriteException(message: String)
  extends TxCommitException(message, ErrorCondition.UnsupportedWrite)

/**
 * A read txcommit cannot serve right, so it refuses rather than show a wrong view: its path
 * reaches a directory inside a txcommit table through a link, where the table's log is not on
 * the path as written. The message names the link, where it leads and what to read instead.
 */
final class UnsupportedReadException(message: String)
  extends TxCommitException(message, ErrorCondition.UnsupportedRead)

/** A write id whose policy is `fail` was already committed by an earlier transaction. */
final class WriteIdCommittedException(message: String)
  extends TxCommitException(message, ErrorCondition.WriteIdCommitted)

/** A maintenance command (VACUUM, history) that cannot run as asked. */
sealed class MaintenanceException private[txcommit] (message: String, condition: ErrorCondition)
  extends TxCommitException(message, condition) {
  def this(message: String) = this(message, ErrorCondition.Maintenance)
}

/** A maintenance command given a path that holds no txcommit table (no `_txcommit/`). */
final class NotATableException(message: String) extends MaintenanceException(message, ErrorCondition.NotATable)

/**
 * A listing whose tree kept changing under it (directories below it disappearing while it was
 * listed): what it saw cannot be trusted to be whole, so nothing is decided from it.
 */
final class ListingChangedException(message: String, cause: Throwable)
  extends TxCommitException(message, ErrorCondition.ListingChanged, cause)

/**
 * The store refused to let txcommit look at a path it must check before it may write or delete
 * (HTTP 403 or the local equivalent). The message names the path and the permission needed.
 */
final class StorePermissionException(message: String, cause: Throwable)
  extends TxCommitException(message, ErrorCondition.StorePermission, cause)

/**
 * A write whose schema cannot be read together with its table's (a column's type changed, a
 * column added without `mergeSchema`, under `enforceNotNull` a NOT NULL column that may get
 * nulls, a partitioning unlike the table's). Raised before the commit point: nothing of the
 * write is visible. `columns` names the columns at fault.
 */
final class SchemaMismatchException(message: String, val columns: Seq[String])
  extends TxCommitException(message, ErrorCondition.SchemaMismatch) {
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Map.of("message", getMessage, "columns", columns.mkString(","))
}

/**
 * A read of a past snapshot (`txcommit.asOf`, `VERSION AS OF`, `TIMESTAMP AS OF`) that cannot be
 * served whole: a value that names no committed transaction of the table, no time at or after its
 * first commit, or is neither a transaction id nor a time; a root that is no txcommit table; or a
 * snapshot whose files VACUUM has deleted. Never a partial table. The message names the table,
 * the option and the value.
 */
final class TimeTravelException(message: String) extends TxCommitException(message, ErrorCondition.TimeTravel)

/**
 * A restore that would re-add files which are no longer on the store (VACUUM deleted them, as
 * it may once their removal is older than its horizon), or which never were committed files of
 * the table. Raised before the commit point: nothing was published. `missing` names the files.
 */
final class RestoreFilesMissingException(message: String, val missing: Seq[String])
  extends TxCommitException(message, ErrorCondition.RestoreFilesMissing)
