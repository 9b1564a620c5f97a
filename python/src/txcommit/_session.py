"""What the client, the SQL wrappers and the command line share about a live Spark session: its
server's URL, whether that server has the plugin, and a server's error told without gRPC's
internals. pyspark is imported lazily, inside functions."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from txcommit._names import EXTENSIONS_CLASS, PLUGIN_CLASS, PLUGIN_JAR_NAME
from txcommit.errors import TxCommitNotInstalledError

#: The SQL function by which a client asks the server for the plugin's version.
VERSION_FUNCTION = "txcommit_version"


def session_url(spark: Any) -> str | None:
    """``sc://host:port`` of a Spark Connect session; None for a classic session.

    Only host and port are kept: URL parameters may carry tokens.
    """
    builder = getattr(getattr(spark, "client", None), "_builder", None)
    endpoint = getattr(builder, "endpoint", None)
    return f"sc://{endpoint}" if isinstance(endpoint, str) else None


def server_version(spark: Any) -> str:
    """The txcommit plugin version reported by the server (``SELECT txcommit_version()``).

    Raises TxCommitNotInstalledError when the server does not know the function.
    """
    from pyspark.errors import AnalysisException

    try:
        with quiet_pyspark_query_errors():
            row = spark.sql(f"SELECT {VERSION_FUNCTION}()").collect()[0]
    except AnalysisException as exc:
        raise not_installed(spark, exc) from exc
    return str(row[0])


def run_sql(spark: Any, statement: str) -> Any:
    """``spark.sql(statement)`` for one of the plugin's statements (``TXCOMMIT ...``). A server
    that cannot parse it is asked whether it has the plugin: one without it raises
    TxCommitNotInstalledError with the install steps, as :func:`txcommit.enable` does, rather
    than Spark's PARSE_SYNTAX_ERROR at 'TXCOMMIT'."""
    from pyspark.errors import ParseException

    try:
        return spark.sql(statement)
    except ParseException:
        server_version(spark)  # raises when the plugin is missing
        raise


def not_installed(spark: Any, exc: BaseException) -> TxCommitNotInstalledError:
    """The error for a server without the plugin, from the error it answered with."""
    url = session_url(spark)
    first_line = next((line for line in str(exc).splitlines() if line.strip()), repr(exc))
    where = f"the Spark Connect server at {url}" if url else "the Spark server"
    message = (
        f"txcommit is not installed on {where}.\n"
        f"Server said: {first_line}\n"
        f"To install it, start the server with `txcommit server` "
        f"(pip install 'txcommit[server]'), or add these options to start-connect-server.sh:\n"
        f"  --jars <path>/{PLUGIN_JAR_NAME} --conf spark.plugins={PLUGIN_CLASS} "
        f"--conf spark.sql.extensions={EXTENSIONS_CLASS}"
    )
    return TxCommitNotInstalledError(message, url=url, server_error=first_line)


def server_failure(exc: BaseException) -> str:
    """The first line of a server's error for a person to read: for a call that never got an
    answer, the gRPC status and its details (``UNAVAILABLE: failed to connect ...``), never the
    repr of gRPC's call object that pyspark puts in its message."""
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            break
        code, details = getattr(current, "code", None), getattr(current, "details", None)
        if callable(code) and callable(details):  # a grpc.RpcError (and grpc.Call)
            with contextlib.suppress(Exception):
                status = getattr(code(), "name", str(code()))
                said = str(details() or "").strip().splitlines()
                return f"the server did not answer ({status}{': ' + said[0] if said else ''})"
        current = current.__cause__ or current.__context__
    text = str(exc).strip()
    return text.splitlines()[0] if text else repr(exc)


@contextlib.contextmanager
def quiet_pyspark_query_errors() -> Iterator[None]:
    """Silence pyspark's logging of a failed query: a missing function is an answer here."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        yield
        return
    # Fetched through PySparkLogger so the logger keeps pyspark's class (it logs with kwargs).
    loggers: list[logging.Logger] = [
        PySparkLogger.getLogger(name)
        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")
    ]
    previous = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, was_disabled in zip(loggers, previous, strict=True):
            logger.disabled = was_disabled
