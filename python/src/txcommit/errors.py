"""Exceptions raised by txcommit's Python side, and the typed twins of the server plugin's.

A Spark Connect client sees a failed write as a generic pyspark exception. Inside
:func:`typed_errors` (and :func:`txcommit.transactional`) one that the plugin raised on purpose
is raised again as its twin below, with the pyspark exception as ``__cause__``:

    with txcommit.typed_errors():
        df.write.mode("overwrite").parquet(path)

=============================  ==========================================  =====================
Python                         JVM (``io.txcommit.``)                      a scheduler should
=============================  ==========================================  =====================
CommitConflictError            CommitConflictException                     retry the job
FencedError                    CommitConflictException ("was fenced")      retry once, then alert
CommitOutcomeUnknownError      CommitOutcomeUnknownException               re-run, same write id
WriteIdCommittedError          WriteIdCommittedException                   give up (already done)
InvalidConfError               InvalidConfException                        give up
UnsupportedWriteError          UnsupportedWriteException                   give up
UnsupportedReadError           UnsupportedReadException                    give up (read the table)
UnsupportedStoreError          UnsupportedStoreException                   give up
MaintenanceError               MaintenanceException                        give up
CorruptCommitRecordError       CorruptCommitRecordException                give up
CorruptCheckpointError         CorruptCheckpointException                  give up
CorruptTablePropertiesError    CorruptTablePropertiesException             give up (restore it)
TaskFileMissingError           TaskFileMissingException                    retry the job
ListingChangedError            ListingChangedException                     retry the job
StorePermissionError           StorePermissionException                    give up (fix access)
SchemaMismatchError            SchemaMismatchException                     give up (fix the data)
TimeTravelError                TimeTravelException                         give up (name another)
RestoreFilesMissingError       RestoreFilesMissingException                give up (VACUUM ran)
CorruptDecisionError           CorruptDecisionException                    give up (restore it)
TransactionError               TransactionException                        re-run the transaction
=============================  ==========================================  =====================
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator


class TxCommitError(Exception):
    """Base class of every txcommit error.

    ``server_class`` is the server plugin's exception class for an error raised by
    :func:`typed_errors`, else None.
    """

    server_class: str | None = None


class TxCommitNotInstalledError(TxCommitError):
    """The Spark Connect server does not have the txcommit plugin loaded.

    ``url`` is the server the session talks to (None when unknown) and ``server_error`` the
    first line of the error the server answered with.
    """

    def __init__(
        self, message: str, *, url: str | None = None, server_error: str | None = None
    ) -> None:
        super().__init__(message)
        self.url = url
        self.server_error = server_error


class InvalidRemoteError(TxCommitError, ValueError):
    """A Spark Connect URL that is not ``sc://host[:port][/;param=value...]``. The message
    shows the URL without its parameters (they may carry a token)."""


class ServerUnreachableError(TxCommitError):
    """Nothing accepts connections at a Spark Connect URL's host and port. ``url`` is
    ``sc://host:port``, without parameters."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class ServerStartError(TxCommitError):
    """A Spark Connect server could not be found, built a command line for, or started."""


class StoreError(TxCommitError):
    """A store operation failed. ``url`` is the key's location, never with credentials."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class AccessDeniedError(StoreError):
    """The store refused the request for lack of permission (S3 and GCS 403, Azure's
    AuthorizationFailure, HDFS's AccessControlException). Readers looking for a table above the
    path they were given stop there, as the JVM's read filter does."""


class AlreadyExistsError(StoreError):
    """An exclusive create found its target existing; the target was not overwritten.

    The Python twin of the JVM's ``CommitConflictException``: for a commit record it means
    another writer published that transaction's record first.
    """


class UnsupportedStoreError(TxCommitError):
    """No adapter can serve a store, or an adapter declaration is unusable."""


class UnknownAdapterError(UnsupportedStoreError):
    """An unknown URI scheme or adapter name, or an adapter picked for a scheme it does not
    serve. The message lists the known adapters with their primitives."""


class InvalidDeclarationError(UnsupportedStoreError):
    """An ``adapter.json`` that is not a valid adapter declaration; the message names the
    file and the bad key or value."""


class StorePluginError(UnsupportedStoreError):
    """A store registered in the ``txcommit.adapters`` entry-point group whose descriptor
    cannot be loaded; the message names the store and the entry point."""


class CorruptCommitRecordError(TxCommitError):
    """A commit record that cannot be trusted: truncated, not JSON, wrong shape or unsafe.
    The message names the record file."""


class CorruptCheckpointError(TxCommitError):
    """A checkpoint that cannot be trusted: truncated, not JSON, miscounted or unsafe. The
    message names the file. Readers skip such a checkpoint (it only summarises records that
    stay in the log) and use the previous one or the records."""


class CorruptDecisionError(TxCommitError):
    """A multi-table transaction's decision (``_txcommit/groups/<group>.json``) that cannot be
    trusted. The message names the file; the transaction stays undecided (invisible) until it
    is repaired."""


class CorruptTablePropertiesError(TxCommitError):
    """Table properties (``_txcommit/properties/<n>.json``) that cannot be trusted. The
    message names the file. Never skipped for an older number, which may say the opposite of
    what was set last."""


# -- the server plugin's errors, typed ---------------------------------------------------------


class CommitConflictError(TxCommitError):
    """Another writer committed first: a racing overwrite of the same data committed after
    this job started, or this transaction's record already exists. Nothing of this job is
    visible. Retrying the job is safe."""


class FencedError(CommitConflictError):
    """This job's transaction was fenced: VACUUM took its silent driver for dead (the job ran
    longer than VACUUM's retention horizon), or another driver of the same streaming query
    took over the batch. Nothing of this attempt is visible."""


class CommitOutcomeUnknownError(TxCommitError):
    """Publishing the commit record failed in a way that does not say whether it landed: the
    job is committed or not, whole either way. Re-run it with the same write id
    (``txcommit.writeId``), which replaces exactly what a committed run wrote; without one,
    check ``txcommit log`` before re-running an append."""


class WriteIdCommittedError(TxCommitError):
    """The write id (with policy ``fail``) was already committed by an earlier run: the data
    is there. Do not retry."""


class InvalidConfError(TxCommitError, ValueError):
    """A ``spark.txcommit.*`` conf or write option set to a value txcommit cannot use."""


class UnsupportedWriteError(TxCommitError):
    """A write shape txcommit cannot make transactional; it refused rather than pretend."""


class UnsupportedReadError(TxCommitError):
    """A read txcommit cannot serve right (a path a link leads inside a table, where the table's
    log is not on the path as written); it refused rather than show a wrong view. Raised by the
    Python readers too. The message names the link, where it leads and what to read instead."""


class MaintenanceError(TxCommitError):
    """A maintenance statement (VACUUM, HISTORY, ...) that cannot run as asked."""


class TaskFileMissingError(TxCommitError):
    """A task could not find a file it wrote (deleted under it); Spark retries the task, so
    this surfaces only once its retries are spent."""


class ListingChangedError(TxCommitError):
    """The table's tree kept changing while the job listed it (directories disappearing under
    the listing, e.g. another tool's temporary directories): nothing was committed from a
    partial listing. Retrying the job is safe."""


class StorePermissionError(TxCommitError):
    """The credentials may not look at a path txcommit must check before it writes or
    deletes (a 403 on an ancestor or on the table's log): the message names the path and the
    permission to grant. Nothing was written."""


class SchemaMismatchError(TxCommitError):
    """The write's schema cannot be read together with the table's (a column's type changed, a
    column was added without ``mergeSchema``, or, under ``spark.txcommit.enforceNotNull``, a
    NOT NULL column may get nulls): nothing was committed. The message names each column with
    both types and what to do: cast to the table's type, ``option("mergeSchema", "true")`` for
    added columns, or an overwrite of the whole table to replace its schema."""


class TimeTravelError(TxCommitError, ValueError):
    """A read of a past snapshot (``txcommit.asOf``, ``VERSION AS OF``, ``TIMESTAMP AS OF``,
    ``dataset(as_of=...)``) that cannot be served whole: the value names no committed
    transaction of the table, no time at or after its first commit, or is neither a transaction
    id nor an ISO-8601 time; the path is no txcommit table; or VACUUM has deleted files of the
    snapshot. The message names the table, the option and the value."""


class TransactionError(TxCommitError):
    """A multi-table transaction (``txcommit.transaction``, ``TXCOMMIT BEGIN``) used in a way it
    cannot serve, or decided ``aborted`` before its COMMIT (its lease ran out): nothing of it is
    visible. The message says what happened and what to do."""


class RestoreFilesMissingError(TxCommitError):
    """A restore would re-add files that are no longer on the store (VACUUM deleted them once
    their removal was older than its horizon) or that no committed transaction wrote: nothing
    was published. The message names the files; the table cannot be restored to that version."""


#: The server plugin's exception (simple name) -> its Python twin.
SERVER_ERRORS: dict[str, type[TxCommitError]] = {
    "CommitConflictException": CommitConflictError,
    "CommitOutcomeUnknownException": CommitOutcomeUnknownError,
    "WriteIdCommittedException": WriteIdCommittedError,
    "InvalidConfException": InvalidConfError,
    "UnsupportedWriteException": UnsupportedWriteError,
    "UnsupportedReadException": UnsupportedReadError,
    "UnsupportedStoreException": UnsupportedStoreError,
    "MaintenanceException": MaintenanceError,
    "CorruptCommitRecordException": CorruptCommitRecordError,
    "CorruptCheckpointException": CorruptCheckpointError,
    "CorruptTablePropertiesException": CorruptTablePropertiesError,
    "TaskFileMissingException": TaskFileMissingError,
    "ListingChangedException": ListingChangedError,
    "StorePermissionException": StorePermissionError,
    "SchemaMismatchException": SchemaMismatchError,
    "TimeTravelException": TimeTravelError,
    "RestoreFilesMissingException": RestoreFilesMissingError,
    "CorruptDecisionException": CorruptDecisionError,
    "TransactionException": TransactionError,
}

# How pyspark shows a server error's class: "(io.txcommit.X) txcommit: why" (the message of
# an error class it does not know), "io.txcommit.X" (first line of the JVM stack trace) and
# "Caused by: io.txcommit.X: txcommit: why" (a cause, in the trace).
_SERVER_CLASS = re.compile(r"\bio\.txcommit\.(\w+Exception)\b(?:\)|:)?[ \t]*([^\n]*)")
_FENCED = re.compile(r"\bwas fenced\b")


def translate(exc: BaseException) -> TxCommitError | None:
    """The typed twin of ``exc`` (a pyspark exception, or one of its causes, carrying one of
    the server plugin's exceptions), without raising it; None when ``exc`` carries none."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _from_server_text(current)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def _from_server_text(exc: BaseException) -> TxCommitError | None:
    # pyspark appends the JVM stack trace to str() when asked to: keep the message alone.
    message = str(exc).split("\n\nJVM stacktrace:", 1)[0].strip()
    get_trace = getattr(exc, "getStackTrace", None)
    trace = get_trace() if callable(get_trace) else None
    # The message first (it may quote the server's exception), then the trace: the root
    # error's class on its first line (its message is ``exc``'s), its causes' as "Caused by".
    for text in (message, trace if isinstance(trace, str) else ""):
        for match in _SERVER_CLASS.finditer(text):
            cls = SERVER_ERRORS.get(match.group(1))
            if cls is not None:
                return _typed(cls, match.group(1), (match.group(2) or "").strip() or message)
    return None


def _typed(cls: type[TxCommitError], server_class: str, message: str) -> TxCommitError:
    if cls is CommitConflictError and _FENCED.search(message):
        cls = FencedError
    typed = cls(message)
    typed.server_class = f"io.txcommit.{server_class}"
    return typed


@contextlib.contextmanager
def typed_errors() -> Iterator[None]:
    """Raise the server plugin's errors inside the block as their typed twins (see the module
    doc), each with the original exception as ``__cause__``; other exceptions pass unchanged.
    Also usable as a decorator."""
    try:
        yield
    except TxCommitError:
        raise
    except Exception as exc:
        typed = translate(exc)
        if typed is None:
            raise
        raise typed from exc
