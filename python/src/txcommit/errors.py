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
