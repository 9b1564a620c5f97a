"""Switch transactional commits on and off for one Spark session, from any Python client.

Everything goes through ``spark.conf`` and ``spark.sql``, so the same calls work with a
pure ``pyspark-client`` Connect session (no JVM on this machine), a Connect session from the
full pyspark, and a classic SparkSession. pyspark is imported lazily, inside functions.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from txcommit._names import (
    COMMIT_PROTOCOL_CONF,
    PROTOCOL_CLASS,
    READ_FILTER_CONF,
)
from txcommit._session import (
    VERSION_FUNCTION,
    not_installed,
    server_version,
    session_url,
)
from txcommit._spark_home import ensure_spark_home
from txcommit.errors import (
    InvalidRemoteError,
    ServerUnreachableError,
    typed_errors,
)

if TYPE_CHECKING:
    from pyspark.sql.connect.session import SparkSession

__all__ = [
    "VERSION_FUNCTION",
    "abandon",
    "check_reachable",
    "check_speaks_grpc",
    "close_owned_sessions",
    "connect",
    "disable",
    "enable",
    "is_enabled",
    "release",
    "remote_endpoint",
    "server_version",
    "session_url",
    "transactional",
]

_DEFAULT_CONNECT_PORT = 15002

#: Seconds :func:`connect` waits for the server's port to accept a connection, and again for
#: it to answer gRPC's handshake.
CONNECT_TIMEOUT = 5.0

_log = logging.getLogger("txcommit.client")

#: Seconds the interpreter's exit waits for the sessions :func:`connect` opened to be released.
CLOSE_TIMEOUT = 10.0


def connect(url: str, *, timeout: float = CONNECT_TIMEOUT) -> SparkSession:
    """A Spark Connect session for ``url`` (``sc://host:port``), safe on JVM-less clients.

    Reuses this thread's active session when it talks to the same host and port; otherwise
    creates a new one, so a session to an old (perhaps dead) server is never handed back
    for a different URL, which ``builder.getOrCreate()`` alone would do.

    Raises InvalidRemoteError for a URL that is not ``sc://...`` and ServerUnreachableError
    when nothing accepts a connection at its host and port within ``timeout`` seconds, or what
    does is no gRPC server (an HTTP server, a socket that never answers): pyspark itself would
    retry the first request for minutes.

    A session it creates is its own: at the interpreter's exit it is stopped (its server
    releases it) if ``spark.stop()`` was not called, within :data:`CLOSE_TIMEOUT` seconds in
    all, and closed without a request when its server is gone, where pyspark's own exit hooks
    and ``SparkSession.__del__`` would retry that server for minutes. Sessions of any thread.
    """
    check_reachable(url, timeout)
    ensure_spark_home()
    from pyspark.sql.connect.session import SparkSession

    active = SparkSession.getActiveSession()
    if (
        active is not None
        and not getattr(active, "is_stopped", False)
        and session_url(active) == _endpoint_url(url)
    ):
        return active
    check_speaks_grpc(url, timeout)
    session = SparkSession.builder.remote(url).create()
    _own(session)
    return session


def enable(spark: Any) -> None:
    """Use the transactional commit protocol for this session's file writes.

    Also switches the read filter on (``spark.txcommit.read.filter=true``) so this session's
    reads hide files of uncommitted transactions. Other sessions are unaffected. Raises
    TxCommitNotInstalledError, with installation instructions, when the server lacks the
    plugin.
    """
    from pyspark.errors import IllegalArgumentException

    server_version(spark)
    try:
        # Spark 4 checks here, on the server, that the class loads and is a FileCommitProtocol.
        spark.conf.set(COMMIT_PROTOCOL_CONF, PROTOCOL_CLASS)
    except IllegalArgumentException as exc:
        raise not_installed(spark, exc) from exc
    spark.conf.set(READ_FILTER_CONF, "true")


def disable(spark: Any) -> None:
    """Restore Spark's default commit protocol for this session (the conf is unset).

    The read filter is left as it is: hiding uncommitted files stays useful after writes
    stop being transactional.
    """
    spark.conf.unset(COMMIT_PROTOCOL_CONF)


def is_enabled(spark: Any) -> bool:
    """Whether this session's file writes use the transactional commit protocol."""
    return bool(spark.conf.get(COMMIT_PROTOCOL_CONF, None) == PROTOCOL_CLASS)


@contextlib.contextmanager
def transactional(spark: Any) -> Iterator[Any]:
    """Enable for the ``with`` block, then put both confs back exactly as they were.

    A conf that was unset before is unset again, not set to its default value. The server
    plugin's errors raised in the block come out typed, as with :func:`typed_errors`
    (``CommitConflictError``, ...).
    """
    saved = {key: spark.conf.get(key, None) for key in (COMMIT_PROTOCOL_CONF, READ_FILTER_CONF)}
    enable(spark)
    try:
        with typed_errors():
            yield spark
    finally:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


class Transaction:
    """A multi-table transaction open in a session (:func:`transaction`): ``id``, ``location``
    (where its decision lives, None for its first table), ``lease_ms``, and, once the block
    ended, ``outcome`` (``committed`` or ``aborted``) and ``writes`` (how many writes it
    prepared)."""

    def __init__(self, row: Any) -> None:
        self.id: str = row["transaction"]
        self.location: str | None = row["location"]
        self.lease_ms: int = row["leaseMs"]
        self.outcome: str | None = None
        self.writes: int | None = None

    def __repr__(self) -> str:
        return f"Transaction({self.id!r}, outcome={self.outcome!r}, writes={self.writes!r})"


@contextlib.contextmanager
def transaction(spark: Any, *, location: str | None = None) -> Iterator[Transaction]:
    """Every write of ``spark`` inside the block, to any number of tables (DataFrame writes,
    SQL INSERT, overwrites, dynamic overwrites), becomes visible at once when the block ends
    without an error, or never (docs/protocol.md, I33): each write prepares, and the block's end
    creates one decision (``TXCOMMIT BEGIN`` / ``COMMIT`` / ``ROLLBACK`` in SQL). An error
    in the block rolls it back and is raised again; a client that dies leaves it undecided, and
    its lease (``spark.txcommit.transaction.leaseMs``) rolls it back. ``location``: a directory
    of its own for the decision (default: the first table written). Reads in the block see the
    tables as committed before it. The plugin's errors come out typed, as with
    :func:`typed_errors` (a COMMIT that lost to its lease raises ``TransactionError``)."""
    quoted = "" if location is None else " LOCATION '" + location.replace("'", "''") + "'"
    with typed_errors():
        tx = Transaction(spark.sql("TXCOMMIT BEGIN" + quoted).first())
    try:
        yield tx
    except BaseException:
        try:
            with typed_errors():
                _ended(tx, spark.sql("TXCOMMIT ROLLBACK").first())
        except Exception as e:  # the block's error matters more: the rollback's is logged
            _log.warning("txcommit: transaction %s not rolled back (its lease will): %s", tx.id, e)
        raise
    with typed_errors():
        _ended(tx, spark.sql("TXCOMMIT COMMIT").first())


def _ended(tx: Transaction, row: Any) -> None:
    tx.outcome = row["outcome"]
    tx.writes = row["writes"]


def release(spark: Any, server_alive: bool) -> None:
    """Stop a session when it is done: politely while its server is up, else :func:`abandon`."""
    if server_alive:
        with contextlib.suppress(Exception):
            spark.stop()
    else:
        abandon(spark)


def abandon(spark: Any) -> None:
    """Close a Connect session whose server is gone, without sending it any request.

    After the server dies (e.g. ``RunningServer.kill()``), ``spark.stop()`` and even the
    interpreter's exit (pyspark's atexit hook sends an ML-cache cleanup RPC) retry for up
    to ~10 minutes under pyspark's default retry policy. A closed client skips all of that.
    No-op for a classic session.
    """
    client = getattr(spark, "client", None)
    close = getattr(client, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()
    # Forget it as the default and the thread's active session, as `stop()` does: pyspark
    # looks sessions up there (UDF creation, DDL parsing) and would retry the dead server.
    cls = type(spark)
    with contextlib.suppress(Exception):
        if getattr(cls, "_default_session", None) is spark:
            cls._default_session = None
        active: Any = getattr(cls, "_active_session", None)
        if getattr(active, "session", None) is spark:
            active.session = None


def remote_endpoint(url: str) -> tuple[str, int]:
    """Host and port of a Spark Connect URL (port 15002 when absent).

    Raises InvalidRemoteError naming the URL (without its parameters) when it is not one.
    """
    shown = url.split(";", 1)[0]  # parameters may carry a token
    problem = None
    parsed = urllib.parse.urlparse(shown)
    if parsed.scheme != "sc":
        problem = "it does not start with sc://"
    elif not parsed.hostname:
        problem = "it names no host"
    else:
        try:
            port = parsed.port or _DEFAULT_CONNECT_PORT
        except ValueError:
            problem = "its port is not a number from 0 to 65535"
    if problem is not None:
        raise InvalidRemoteError(
            f"'{shown}' is not a Spark Connect URL: {problem}. Give sc://host:port, e.g. "
            f"sc://localhost:{_DEFAULT_CONNECT_PORT}"
        )
    assert parsed.hostname is not None
    return parsed.hostname, port


def check_reachable(url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ServerUnreachableError unless the host and port of ``url`` accept a TCP
    connection within ``timeout`` seconds; InvalidRemoteError for a URL that is not
    ``sc://``. Only the port is probed: no request reaches the server."""
    host, port = remote_endpoint(url)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        endpoint = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise ServerUnreachableError(
            f"no Spark Connect server answers at {endpoint} ({reason}, waited up to "
            f"{timeout:g} s). Start one with `txcommit server --port {port}`, or check the "
            "host and port of the URL",
            url=f"sc://{endpoint}",
        ) from exc


def _endpoint_url(url: str) -> str:
    parsed = urllib.parse.urlparse(url)
    host = parsed.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = parsed.port or _DEFAULT_CONNECT_PORT
    except ValueError:  # ";params" after the port confuse urlparse; let pyspark complain
        return url
    return f"sc://{host}:{port}"


def _shown_endpoint(url: str) -> str:
    host, port = remote_endpoint(url)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def check_speaks_grpc(url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise ServerUnreachableError unless what listens at ``url`` completes gRPC's handshake
    (HTTP/2, with TLS when the URL asks for it) within ``timeout`` seconds: an HTTP server or
    a socket that accepts and never answers would hold pyspark's first request for minutes.
    Uses pyspark's own channel for the URL (its parameters: TLS, token); sends no request."""
    import grpc  # type: ignore[import-untyped] # no stubs installed
    from pyspark.sql.connect.client import core

    channel = core.DefaultChannelBuilder(url).toChannel()
    settled = threading.Event()
    seen: list[Any] = []

    def watch(state: Any) -> None:
        seen.append(state)
        if state in (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            settled.set()

    channel.subscribe(watch, try_to_connect=True)
    try:
        settled.wait(timeout)
    finally:
        channel.unsubscribe(watch)
        channel.close()
    if grpc.ChannelConnectivity.READY in seen:
        return
    what = (
        "refused gRPC's handshake (is it an HTTP server?)"
        if grpc.ChannelConnectivity.TRANSIENT_FAILURE in seen
        else f"did not answer gRPC's handshake within {timeout:g} s"
    )
    endpoint = _shown_endpoint(url)
    raise ServerUnreachableError(
        f"{endpoint} accepts connections but is no Spark Connect server: it {what}. Check the "
        f"port (Spark Connect listens on {_DEFAULT_CONNECT_PORT} unless told otherwise; "
        "`txcommit server` prints its URL) and whether the server wants TLS "
        "(sc://host:port/;use_ssl=true)",
        url=f"sc://{endpoint}",
    )


# -- the sessions connect() opened, closed at the interpreter's exit ------------------------------

#: Held, not weakly: a session left in a finished thread's locals is still released at exit.
_OWNED: list[Any] = []
_OWNED_LOCK = threading.Lock()


def _own(session: Any) -> None:
    with _OWNED_LOCK:
        _OWNED[:] = [s for s in _OWNED if not getattr(s, "is_stopped", True)]
        _OWNED.append(session)
        # Exit hooks run last registered first: registered again after each session, this one
        # runs before the hooks pyspark registered for that session's client.
        atexit.unregister(close_owned_sessions)
        atexit.register(close_owned_sessions)


def close_owned_sessions(timeout: float = CLOSE_TIMEOUT) -> None:
    """Stop every session :func:`connect` opened and nobody stopped (the server releases it),
    those of each server at once, within ``timeout`` seconds in all; close the rest without a
    request: a session whose server is gone (nothing accepts its port), or one its server did
    not release in time. Runs at the interpreter's exit; safe to call before."""
    with _OWNED_LOCK:
        sessions = [s for s in _OWNED if not getattr(s, "is_stopped", True)]
        _OWNED.clear()
    alive: dict[str | None, bool] = {}
    stopping = []
    for session in sessions:
        url = session_url(session)
        if url not in alive:
            try:
                check_reachable(url or "", timeout=1.0)
                alive[url] = True
            except Exception:  # an unreachable server is closed without a request
                alive[url] = False
        if alive[url]:
            t = threading.Thread(target=release, args=(session, True), daemon=True)
            t.start()
            stopping.append((t, session))
        else:
            abandon(session)
    deadline = time.monotonic() + timeout
    for t, session in stopping:
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            abandon(session)
