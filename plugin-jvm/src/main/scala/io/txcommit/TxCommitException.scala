package io.txcommit

import java.io.IOException

/**
 * Every error txcommit raises on purpose. Each message names the file, key or value at fault
 * and says what to do; none carries credentials (paths are printed without user info).
 */
sealed abstract class TxCommitException(message: String, cause: Throwable = null)
  extends IOException(s"txcommit: $message", cause)

/** A commit record for this transaction already exists: someone committed it first. */
final class CommitConflictException(message: String) extends TxCommitException(message)

/**
 * The publish of a commit record failed in a way that does not say whether the record was
 * created (the request may have reached the store). The transaction is committed or not, whole
 * either way; its files are kept, and VACUUM removes them if no record ever appears.
 */
final class CommitOutcomeUnknownException(message: String, cause: Throwable)
  extends TxCommitException(message, cause)

/** A commit record that cannot be trusted: truncated, not JSON, wrong shape, or unsafe. */
final class CorruptCommitRecordException(message: String, cause: Throwable = null)
  extends TxCommitException(message, cause)

/**
 * A checkpoint that cannot be trusted (truncated, wrong shape, unsafe). Readers skip it: it only
 * summarises records that stay in the log.
 */
final class CorruptCheckpointException(message: String, cause: Throwable = null)
  extends TxCommitException(message, cause)

/**
 * Table properties (`_txcommit/properties/<n>.json`) that cannot be trusted. Never skipped for
 * an older number: that one may say the opposite of what was set last.
 */
final class CorruptTablePropertiesException(message: String, cause: Throwable = null)
  extends TxCommitException(message, cause)

/** A task cannot find a file it wrote (deleted under it): the task attempt fails and is retried. */
final class TaskFileMissingException(message: String) extends TxCommitException(message)

/** A conf set to a value txcommit cannot use. */
final class InvalidConfException(val key: String, val value: String, expected: String)
  extends TxCommitException(
    s"conf $key has the invalid value '$value'; expected $expected. " +
      s"Fix it with spark.conf.set(\"$key\", ...) or unset it to get the default.")

/** A store whose scheme has no adapter that guarantees what the protocol needs. */
final class UnsupportedStoreException(message: String) extends TxCommitException(message)

/** A write shape that txcommit cannot make transactional (it refuses rather than pretend). */
final class UnsupportedWriteException(message: String) extends TxCommitException(message)

/**
 * A read txcommit cannot serve right, so it refuses rather than show a wrong view: its path
 * reaches a directory inside a txcommit table through a link, where the table's log is not on
 * the path as written. The message names the link, where it leads and what to read instead.
 */
final class UnsupportedReadException(message: String) extends TxCommitException(message)

/** A write id whose policy is `fail` was already committed by an earlier transaction. */
final class WriteIdCommittedException(message: String) extends TxCommitException(message)

/** A maintenance command (VACUUM, history) that cannot run as asked. */
final class MaintenanceException(message: String) extends TxCommitException(message)

/**
 * A listing whose tree kept changing under it (directories below it disappearing while it was
 * listed): what it saw cannot be trusted to be whole, so nothing is decided from it.
 */
final class ListingChangedException(message: String, cause: Throwable)
  extends TxCommitException(message, cause)

/**
 * The store refused to let txcommit look at a path it must check before it may write or delete
 * (HTTP 403 or the local equivalent). The message names the path and the permission needed.
 */
final class StorePermissionException(message: String, cause: Throwable) extends TxCommitException(message, cause)

/**
 * A write whose schema cannot be read together with its table's (a column's type changed, a
 * column added without `mergeSchema`, under `enforceNotNull` a NOT NULL column that may get
 * nulls). Raised before the
 * commit point: nothing of the write is visible. `columns` names the columns at fault.
 */
final class SchemaMismatchException(message: String, val columns: Seq[String]) extends TxCommitException(message)

/**
 * A read of a past snapshot (`txcommit.asOf`, `VERSION AS OF`, `TIMESTAMP AS OF`) that cannot be
 * served whole: a value that names no committed transaction of the table, no time at or after its
 * first commit, or is neither a transaction id nor a time; a root that is no txcommit table; or a
 * snapshot whose files VACUUM has deleted. Never a partial table. The message names the table,
 * the option and the value.
 */
final class TimeTravelException(message: String) extends TxCommitException(message)

/**
 * A restore that would re-add files which are no longer on the store (VACUUM deleted them, as
 * it may once their removal is older than its horizon), or which never were committed files of
 * the table. Raised before the commit point: nothing was published. `missing` names the files.
 */
final class RestoreFilesMissingException(message: String, val missing: Seq[String]) extends TxCommitException(message)

/**
 * A group's decision (`_txcommit/groups/<group>.json`) that cannot be trusted: truncated, of an
 * unknown version, about another group. The read fails naming it; the records of its group stay
 * undecided until it is repaired (docs/protocol.md, I33).
 */
final class CorruptDecisionException(message: String, cause: Throwable = null)
  extends TxCommitException(message, cause)

/**
 * A multi-table transaction used in a way it cannot serve (BEGIN inside one, COMMIT of none, a
 * COMMIT after one of its writes failed, a write the transaction cannot include), or one decided
 * `aborted` before its COMMIT (its lease expired). Nothing of the transaction is visible; the
 * message says what happened and what to do.
 */
final class TransactionException(message: String, cause: Throwable = null)
  extends TxCommitException(message, cause)
