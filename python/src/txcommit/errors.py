"""Exceptions raised by txcommit's Python side, and the typed twins of the server plugin's.

The plugin's exceptions carry a Spark error condition (``TXCOMMIT_*``) and a SQLSTATE through
Spark's own error framework. ``import txcommit`` makes pyspark raise each as its class below,
with no context manager: the Spark Connect client (full pyspark or ``pyspark-client``) and a
classic PySpark job alike, as delta-spark registers its exception classes. Each such exception
is also the pyspark exception pyspark would have raised (``except PySparkException`` still
catches it; ``getCondition()``, ``getSqlState()`` and ``getMessageParameters()`` answer):

    try:
        df.write.mode("overwrite").parquet(path)
    except txcommit.CommitConflictError:
        ...  # retry the job

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
=======
===========================  =================================  =======  =====================
Python                       condition (``TXCOMMIT_...``)       SQLSTATE a scheduler should
===========================  =================================  =======  =====================
CommitConflictError          COMMIT_CONFLICT                    40001    retry the job
FencedError                  FENCED                             40000    retry once, then alert
CommitOutcomeUnknownError    COMMIT_OUTCOME_UNKNOWN             40003    re-run, same write id
ListingChangedError          LISTING_CHANGED                    40001    retry the job
TaskFileMissingError         TASK_FILE_MISSING                  58030    retry the job
WriteIdCommittedError        WRITE_ID_COMMITTED                 23505    give up (already done)
InvalidConfError             INVALID_CONF                       22023    give up
MaintenanceError             MAINTENANCE                        22023    give up
NotATableError               NOT_A_TABLE                        42K03    give up (fix the path)
UnsupportedWriteError        UNSUPPORTED_WRITE                  0A000    give up
UnsupportedStoreError        UNSUPPORTED_STORE                  0A000    give up
UnsupportedReadError         UNSUPPORTED_READ                   0A000    give up (read the table)
UnsupportedSparkLineError    UNSUPPORTED_SPARK_LINE             0A000    give up (fix the jar)
CorruptCommitRecordError     CORRUPT_COMMIT_RECORD              XX001    give up
CorruptCheckpointError       CORRUPT_CHECKPOINT                 XX001    give up
CorruptTablePropertiesError  CORRUPT_TABLE_PROPERTIES           XX001    give up (restore it)
StorePermissionError         STORE_PERMISSION                   42501    give up (fix access)
SchemaMismatchError          SCHEMA_MISMATCH                    42KDG    give up (fix the data)
TimeTravelError              TIME_TRAVEL                        42K0E    give up (name another)
RestoreFilesMissingError     RESTORE_FILES_MISSING              58030    give up (VACUUM ran)
CorruptDecisionError         CORRUPT_DECISION                   XX001    give up (restore it)
TransactionError             TRANSACTION                        25000    re-run the transaction
===========================  =================================  =======  =====================

The SQLSTATE's class says what to do: ``40xxx`` a transaction rolled back (40001 a
serialization failure, 40000 a rollback imposed from outside, 40003 completion unknown),
anything else not worth retrying as is. A JDBC client reads the same two values from the
Thrift server. ``conformance/vectors/names.json`` holds the table both sides are tested against.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, NamedTuple


class TxCommitError(Exception):
    """Base class of every txcommit error.

    ``server_class`` is the server plugin's exception class (``io.txcommit.…Exception``) for
    one of its errors raised in a Spark client, else None.
    """

    server_class: str | None = None

    # A server error is also pyspark's exception (see the module doc), whose methods these
    # reach; an error raised on the Python side has no condition.
    def getCondition(self) -> str | None:  # pyspark's name
        """The error condition (``TXCOMMIT_...``) the server sent, else None."""
        theirs = getattr(super(), "getCondition", None)
        return theirs() if callable(theirs) else None

    def getSqlState(self) -> str | None:  # pyspark's name
        """The SQLSTATE the server sent, else None."""
        theirs = getattr(super(), "getSqlState", None)
        return theirs() if callable(theirs) else None

    def getMessageParameters(self) -> dict[str, str] | None:  # pyspark's name
        """The message parameters the server sent (``message``: the whole message), else None."""
        theirs = getattr(super(), "getMessageParameters", None)
        return theirs() if callable(theirs) else None


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


class UnsupportedSparkLineError(TxCommitError):
    """The server's plugin jar was built for another Spark line than the one it runs on; it
    refused to start. The message names both versions, the jar and the artifact to use."""


class MaintenanceError(TxCommitError):
    """A maintenance statement (VACUUM, HISTORY, ...) that cannot run as asked."""


class NotATableError(MaintenanceError):
    """A maintenance statement named a path that holds no txcommit table (no ``_txcommit/``
    directory there): nothing was written or deleted. Check the path."""


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
    column was added without ``mergeSchema``, a partitioning unlike the table's, or, under
    ``spark.txcommit.enforceNotNull``, a NOT NULL column may get nulls): nothing was committed.
    The message names each column with both types and what to do: cast to the table's type,
    ``option("mergeSchema", "true")`` for added columns, write with the table's partitioning,
    or an overwrite of the whole table to replace its schema."""


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


class ServerError(NamedTuple):
    """One of the server plugin's exceptions: its error condition, SQLSTATE and Python twin."""

    condition: str
    sql_state: str
    cls: type[TxCommitError]


#: The server plugin's exceptions (simple name) -> condition, SQLSTATE and Python twin; the
#: same table as the JVM's ``ErrorCondition.byException`` (``conformance/vectors/names.json``).
SERVER_ERRORS: dict[str, ServerError] = {
    "CommitConflictException": ServerError(
        "TXCOMMIT_COMMIT_CONFLICT", "40001", CommitConflictError
    ),
    "FencedException": ServerError("TXCOMMIT_FENCED", "40000", FencedError),
    "CommitOutcomeUnknownException": ServerError(
        "TXCOMMIT_COMMIT_OUTCOME_UNKNOWN", "40003", CommitOutcomeUnknownError
    ),
    "CorruptCommitRecordException": ServerError(
        "TXCOMMIT_CORRUPT_COMMIT_RECORD", "XX001", CorruptCommitRecordError
    ),
    "CorruptCheckpointException": ServerError(
        "TXCOMMIT_CORRUPT_CHECKPOINT", "XX001", CorruptCheckpointError
    ),
    "CorruptTablePropertiesException": ServerError(
        "TXCOMMIT_CORRUPT_TABLE_PROPERTIES", "XX001", CorruptTablePropertiesError
    ),
    "TaskFileMissingException": ServerError(
        "TXCOMMIT_TASK_FILE_MISSING", "58030", TaskFileMissingError
    ),
    "InvalidConfException": ServerError("TXCOMMIT_INVALID_CONF", "22023", InvalidConfError),
    "UnsupportedStoreException": ServerError(
        "TXCOMMIT_UNSUPPORTED_STORE", "0A000", UnsupportedStoreError
    ),
    "UnsupportedWriteException": ServerError(
        "TXCOMMIT_UNSUPPORTED_WRITE", "0A000", UnsupportedWriteError
    ),
    "UnsupportedReadException": ServerError(
        "TXCOMMIT_UNSUPPORTED_READ", "0A000", UnsupportedReadError
    ),
    "UnsupportedSparkLineException": ServerError(
        "TXCOMMIT_UNSUPPORTED_SPARK_LINE", "0A000", UnsupportedSparkLineError
    ),
    "WriteIdCommittedException": ServerError(
        "TXCOMMIT_WRITE_ID_COMMITTED", "23505", WriteIdCommittedError
    ),
    "MaintenanceException": ServerError("TXCOMMIT_MAINTENANCE", "22023", MaintenanceError),
    "NotATableException": ServerError("TXCOMMIT_NOT_A_TABLE", "42K03", NotATableError),
    "ListingChangedException": ServerError(
        "TXCOMMIT_LISTING_CHANGED", "40001", ListingChangedError
    ),
    "StorePermissionException": ServerError(
        "TXCOMMIT_STORE_PERMISSION", "42501", StorePermissionError
    ),
    "SchemaMismatchException": ServerError(
        "TXCOMMIT_SCHEMA_MISMATCH", "42KDG", SchemaMismatchError
    ),
    "TimeTravelException": ServerError("TXCOMMIT_TIME_TRAVEL", "42K0E", TimeTravelError),
    "RestoreFilesMissingException": ServerError(
        "TXCOMMIT_RESTORE_FILES_MISSING", "58030", RestoreFilesMissingError
    ),
    "CorruptDecisionException": ServerError(
        "TXCOMMIT_CORRUPT_DECISION", "XX001", CorruptDecisionError
    ),
    "TransactionException": ServerError("TXCOMMIT_TRANSACTION", "25000", TransactionError),
}

#: Error condition -> Python twin.
CONDITIONS: dict[str, type[TxCommitError]] = {e.condition: e.cls for e in SERVER_ERRORS.values()}

#: How many causes deep a server error is looked for (Spark wraps a task's error twice).
_MAX_DEPTH = 16


def translate(exc: BaseException) -> TxCommitError | None:
    """The typed twin of ``exc`` when it is (or is caused by) one of the server plugin's errors:
    ``exc`` itself once pyspark raised it typed (see the module doc), else a new twin with the
    message of the plugin's error; None for any other error."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _MAX_DEPTH:
        seen.add(id(current))
        if isinstance(current, TxCommitError):
            return current
        get = getattr(current, "getCondition", None)
        with contextlib.suppress(Exception):
            cls = CONDITIONS.get(get()) if callable(get) else None
            if cls is not None:
                return cls(str(current).split("\n\nJVM stacktrace:", 1)[0].strip())
        current = current.__cause__ or current.__context__
    return None


@contextlib.contextmanager
def typed_errors() -> Iterator[None]:
    """What ``import txcommit`` does for every pyspark call, for an exception raised otherwise
    (one pyspark built without the plugin's condition reaching it): inside the block, an
    exception carrying one of the plugin's conditions is raised as its twin, with the original
    as ``__cause__``; others pass unchanged. Also usable as a decorator."""
    try:
        yield
    except TxCommitError:
        raise
    except Exception as exc:
        typed = translate(exc)
        if typed is None:
            raise
        raise typed from exc


# -- pyspark raises the plugin's errors typed -----------------------------------------------------
#
# pyspark turns a server error into an exception in one function per client: Spark Connect's
# ``pyspark.errors.exceptions.connect.convert_exception`` (from the error's gRPC details: the
# root error's condition, SQLSTATE and class names, and, when pyspark fetched them, every error
# of its cause chain), and classic PySpark's ``pyspark.errors.exceptions.captured
# .convert_exception`` (from the JVM exception, through py4j). Each is wrapped, as delta-spark
# wraps them, so that an error whose chain holds a ``TXCOMMIT_*`` condition comes out as a class
# that is both the txcommit twin and the pyspark exception it would have been. Importing
# txcommit must not import pyspark (``txcommit server --help`` works without it, and the client
# sets SPARK_HOME first), so the wrappers go in when pyspark loads those modules.

_CONNECT = "pyspark.errors.exceptions.connect"
_CONNECT_CLIENT = "pyspark.sql.connect.client.core"
_CLASSIC = "pyspark.errors.exceptions.captured"
_PATCHED = "_txcommit_typed"


def install() -> None:
    """Make pyspark raise the server plugin's errors typed (see above): now for its modules
    already loaded, and as soon as it loads the others. Idempotent; ``import txcommit`` calls it."""
    for name in (_CONNECT, _CONNECT_CLIENT, _CLASSIC):
        module = sys.modules.get(name)
        if module is not None:
            _patch(module)
    if not any(isinstance(f, _PatchOnLoad) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnLoad())


class _PatchOnLoad(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for the modules it patches, it wraps the loader the other finders
    return so that the module is patched right after it runs."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in (_CONNECT, _CONNECT_CLIENT, _CLASSIC):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: importlib.machinery.ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchAfterExec(spec.loader)
                return spec
        return None


class _PatchAfterExec(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # get_code, get_source, is_package, ...
        return getattr(self._inner, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        module: ModuleType | None = self._inner.create_module(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        _patch(module)


def _patch(module: ModuleType) -> None:
    if getattr(module, _PATCHED, False):
        return
    name, converter = module.__name__, "convert_exception"
    if name == _CONNECT:
        setattr(module, converter, _typed_connect(getattr(module, converter)))
    elif name == _CONNECT_CLIENT:
        # It bound the function by name when it loaded: rebind it to the connect module's
        # (wrapped by then, as the client imports that module first).
        source = sys.modules.get(_CONNECT)
        if source is not None:
            _patch(source)
            setattr(module, converter, getattr(source, converter))
    elif name == _CLASSIC:
        setattr(module, converter, _typed_classic(getattr(module, converter)))
    setattr(module, _PATCHED, True)


class _Found(NamedTuple):
    """The plugin's error in a server error's chain."""

    cls: type[TxCommitError]
    condition: str
    sql_state: str | None
    message: str
    parameters: dict[str, str]
    jvm_class: str | None


def _typed_connect(convert: Callable[..., Any]) -> Callable[..., Any]:
    def convert_exception(
        info: Any, truncated_message: str, resp: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        converted = convert(info, truncated_message, resp, *args, **kwargs)
        try:
            found = _in_connect_error(info, truncated_message, resp)
            return converted if found is None else _connect_twin(found, converted)
        except Exception:  # never lose pyspark's own exception over ours
            return converted

    convert_exception.__wrapped__ = convert  # type: ignore[attr-defined]
    return convert_exception


def _in_connect_error(info: Any, truncated_message: str, resp: Any) -> _Found | None:
    """The first error of the chain, root first, that carries one of the plugin's conditions:
    the root's from the gRPC metadata; the causes' from the fetched details, if any."""
    import json

    metadata = info.metadata
    condition = metadata.get("errorClass")
    root = resp.errors[resp.root_error_idx] if _has(resp, "root_error_idx") else None
    if condition in CONDITIONS:
        classes = json.loads(metadata.get("classes") or "[]")
        params = json.loads(metadata.get("messageParameters") or "{}")
        message = params.get("message", root.message if root is not None else truncated_message)
        jvm_class = classes[0] if classes else None
        state = metadata.get("sqlState")
        return _Found(CONDITIONS[condition], condition, state, message, params, jvm_class)
    if root is None:
        return None
    index: int | None = resp.root_error_idx
    for _ in range(_MAX_DEPTH):
        if index is None:
            break
        error = resp.errors[index]
        throwable: Any = error.spark_throwable if _has(error, "spark_throwable") else None
        condition = throwable.error_class if _has(throwable, "error_class") else None
        if condition in CONDITIONS:
            params = dict(throwable.message_parameters)
            hierarchy = list(error.error_type_hierarchy)
            state = throwable.sql_state if _has(throwable, "sql_state") else None
            return _Found(
                CONDITIONS[condition],
                condition,
                state,
                params.get("message", error.message),
                params,
                hierarchy[0] if hierarchy else None,
            )
        index = error.cause_idx if _has(error, "cause_idx") else None
    return None


def _has(message: Any, field: str) -> bool:
    if message is None:
        return False
    try:
        return bool(message.HasField(field))
    except ValueError:  # not a field of this pyspark's protocol
        return False


def _connect_twin(found: _Found, converted: Any) -> Any:
    """The twin as a subclass of the exception pyspark made (SparkException, UnknownException,
    ...), with the plugin's message, condition, SQLSTATE and parameters."""
    base = type(converted)
    offered = {
        "message": found.message,
        "errorClass": found.condition,
        "messageParameters": found.parameters,
        "sql_state": found.sql_state,
        "server_stacktrace": converted.getStackTrace(),
        "display_server_stacktrace": getattr(converted, "_display_stacktrace", False),
        "contexts": converted.getQueryContext(),
    }
    for name, getter in (
        ("grpc_status_code", "getGrpcStatusCode"),
        ("breaking_change_info", "getBreakingChangeInfo"),
    ):
        if hasattr(converted, getter):
            offered[name] = getattr(converted, getter)()
    accepted = inspect.signature(base.__init__).parameters
    twin = _twin_class(found.cls, base)(**{k: v for k, v in offered.items() if k in accepted})
    twin.server_class = found.jvm_class
    return twin


def _typed_classic(convert: Callable[..., Any]) -> Callable[..., Any]:
    def convert_exception(e: Any) -> Any:
        converted = convert(e)
        try:
            twin = _classic_twin(e)
        except Exception:  # never lose pyspark's own exception over ours
            twin = None
        return converted if twin is None else twin

    convert_exception.__wrapped__ = convert  # type: ignore[attr-defined]
    return convert_exception


def _classic_twin(e: Any) -> Any:
    """For a JVM exception (py4j) whose cause chain holds one of the plugin's exceptions: its
    twin, a CapturedException of that exception (whose getCondition() and getSqlState() ask it)."""
    from py4j.java_gateway import is_instance_of  # type: ignore[import-untyped] # no stubs
    from pyspark import SparkContext
    from pyspark.errors.exceptions.captured import CapturedException

    gateway, jvm = SparkContext._gateway, SparkContext._jvm
    if gateway is None or jvm is None:
        return None
    current = e
    for _ in range(_MAX_DEPTH):
        if current is None:
            return None
        if is_instance_of(gateway, current, "org.apache.spark.SparkThrowable"):
            cls = CONDITIONS.get(jvm.PythonErrorUtils.getCondition(current))
            if cls is not None:
                twin = _twin_class(cls, CapturedException)(origin=current)
                twin.server_class = current.getClass().getName()
                return twin
        current = current.getCause()
    return None


_TWINS: dict[tuple[type[TxCommitError], type[BaseException]], type[Any]] = {}


def _twin_class(cls: type[TxCommitError], base: type[BaseException]) -> type[Any]:
    """A class that is ``cls`` and ``base`` at once, named as ``cls``."""
    twin = _TWINS.get((cls, base))
    if twin is None:
        body: dict[str, Any] = {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        }

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            # pyspark's, not ValueError's (InvalidConfError, TimeTravelError are ValueErrors).
            base.__init__(self, *args, **kwargs)

        body["__init__"] = __init__
        if base.__name__ == "CapturedException":
            # Its getMessage() asks Spark's message file, which has no plugin's conditions.
            body["getMessage"] = lambda self: self._desc
        twin = type(cls.__name__, (cls, base), body)
        _TWINS[(cls, base)] = twin
    return twin
