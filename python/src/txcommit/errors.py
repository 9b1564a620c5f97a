"""Exceptions raised by txcommit's Python side."""

from __future__ import annotations


class TxCommitError(Exception):
    """Base class of every txcommit error."""


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


class CorruptCommitRecordError(TxCommitError):
    """A commit record that cannot be trusted: truncated, not JSON, wrong shape or unsafe.
    The message names the record file."""


class CorruptCheckpointError(TxCommitError):
    """A checkpoint that cannot be trusted: truncated, not JSON, miscounted or unsafe. The
    message names the file. Readers skip such a checkpoint (it only summarises records that
    stay in the log) and use the previous one or the records."""
