"""Maintenance of txcommit tables from any Spark Connect client (no JVM needed).

Each function runs one statement of the server plugin's SQL extension
(``spark.sql.extensions=io.txcommit.spark.TxCommitExtensions``) and returns its rows as a
DataFrame. The statement runs on the server exactly once, when the function is called. A
server without the plugin raises :class:`~txcommit.errors.TxCommitNotInstalledError` with the
install steps, as :func:`txcommit.enable` does; a path that holds no table,
:class:`~txcommit.errors.NotATableError`:

    from txcommit.maintenance import vacuum, history, committed_files, generate_manifest
    vacuum(spark, "s3a://bucket/table", dry_run=True).show(truncate=False)
    history(spark, "s3a://bucket/table").show()
    generate_manifest(spark, "s3a://bucket/table").show()
    set_manifests(spark, "s3a://bucket/table", True).show()  # every writer writes them from now on
    restore(spark, "s3a://bucket/table", "<txn from history>").show()  # the table as it was then
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from txcommit._session import run_sql

VACUUM_COLUMNS = ("path", "kind", "reason", "bytes", "deleted")
MANIFEST_COLUMNS = ("partition", "files", "manifest", "deleted")
PROPERTY_COLUMNS = ("property", "value", "number")
RESTORE_COLUMNS = ("txn", "sequence", "version", "versionTxn", "removedFiles", "restoredFiles")
HISTORY_COLUMNS = (
    "txn",
    "state",
    "startedAt",
    "committedAt",
    "operation",
    "writeId",
    "files",
    "bytes",
    "rows",
    "removedFiles",
    "removedBytes",
    "sequence",
    "schema",
    "version",
    "storeTime",
    "restoredFiles",
    "transaction",
)


def quote(path: str) -> str:
    """``path`` as a single-quoted SQL string (a quote inside is written twice)."""
    if not path or not path.strip():
        raise ValueError("txcommit: the table path is empty; give the table's directory or URL")
    return _quoted(path)


def vacuum_statement(
    path: str, retain_hours: float | None = None, dry_run: bool = False, force: bool = False
) -> str:
    """The ``TXCOMMIT VACUUM`` statement for these arguments (validated here, and again on the
    server, which also refuses a horizon below its safe minimum unless ``force``)."""
    sql = f"TXCOMMIT VACUUM {quote(path)}"
    if retain_hours is not None:
        if isinstance(retain_hours, bool) or not math.isfinite(retain_hours) or retain_hours < 0:
            raise ValueError(
                f"txcommit: retain_hours={retain_hours!r} is not a number of hours >= 0"
            )
        # Plain decimals only: the statement has no exponent syntax (1e-05 would not parse).
        hours = f"{float(retain_hours):.12f}".rstrip("0").rstrip(".")
        sql += f" RETAIN {hours} HOURS"
    if dry_run:
        sql += " DRY RUN"
    if force:
        sql += " FORCE"
    return sql


def vacuum(
    spark: Any,
    path: str,
    retain_hours: float | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> Any:
    """Deletes what no reader of the table at ``path`` can see any more, once older than
    ``retain_hours`` (server default 48): files of uncommitted or aborted transactions, of
    failed task attempts, files logically deleted by overwrites and write-id re-runs, stale
    markers and open multipart uploads of dead jobs. With ``dry_run`` nothing is deleted.
    Returns a DataFrame of what was (or would be) deleted: path, kind, reason, bytes, deleted.
    """
    return run_sql(spark, vacuum_statement(path, retain_hours, dry_run, force))


def checkpoint(spark: Any, path: str) -> Any:
    """Writes the next checkpoint of the table at ``path`` (a summary of its log that a reader
    which has not seen the table reads instead of one record per transaction). Returns a
    one-row DataFrame: checkpoint, transactions, files, through, written, detail (``written``
    is false when the newest checkpoint is already up to date)."""
    return run_sql(spark, f"TXCOMMIT CHECKPOINT {quote(path)}")


def history(spark: Any, path: str) -> Any:
    """The transactions of the table at ``path`` (committed ones in version order, then pending
    and aborted ones, oldest first), as a DataFrame with the
    columns of :data:`HISTORY_COLUMNS` (``rows``: as Spark counted them, null where it counted
    none)."""
    return run_sql(spark, f"TXCOMMIT HISTORY {quote(path)}")


def generate_manifest(spark: Any, path: str) -> Any:
    """Rewrites every symlink manifest of the table at ``path``
    (``_symlink_format_manifest/<partition>/manifest``, the file lists Hive, Trino, Athena and
    Redshift Spectrum read) from its log as it is now, so an engine reading them sees exactly the
    committed files. Returns a DataFrame of :data:`MANIFEST_COLUMNS`, one row per manifest
    written or deleted (a partition with no visible file has none)."""
    return run_sql(spark, f"TXCOMMIT GENERATE MANIFEST {quote(path)}")


def alter_statement(path: str, properties: Mapping[str, str]) -> str:
    """The ``TXCOMMIT ALTER '<path>' SET ('<property>' = '<value>', ...)`` statement (the
    server validates keys and values and names a bad one)."""
    if not properties:
        raise ValueError("txcommit: no table property to set")
    pairs = ", ".join(f"{_quoted(k)} = {_quoted(v)}" for k, v in properties.items())
    return f"TXCOMMIT ALTER {quote(path)} SET ({pairs})"


def _quoted(value: str) -> str:
    """``value`` as a single-quoted SQL string (a quote inside is written twice)."""
    return "'" + value.replace("'", "''") + "'"


def set_manifests(spark: Any, path: str, enabled: bool) -> Any:
    """Records in the log of the table at ``path`` whether every commit writes its symlink
    manifests, whatever the writer's session says (a write's ``txcommit.manifests`` option
    still decides for that write). Turning them on also writes every manifest once, as
    :func:`generate_manifest` does, so they are whole from then on. Returns a DataFrame of
    :data:`PROPERTY_COLUMNS`: each table property in force afterwards, with the number of the
    ``_txcommit/properties/<number>.json`` that holds them."""
    if not isinstance(enabled, bool):
        raise TypeError(f"txcommit: enabled must be True or False, got {enabled!r}")
    return run_sql(spark, alter_statement(path, {"manifests": "true" if enabled else "false"}))


def restore_statement(path: str, to: str) -> str:
    """The ``TXCOMMIT RESTORE '<path>' TO '<txn or time>'`` statement."""
    if not isinstance(to, str) or not to.strip():
        raise ValueError(
            "txcommit: restore needs the version to restore to: a transaction id from "
            "history(), or an ISO-8601 time such as 2026-11-27T20:00:00Z"
        )
    return f"TXCOMMIT RESTORE {quote(path)} TO {_quoted(to.strip())}"


def restore(spark: Any, path: str, to: str) -> Any:
    """Makes the table at ``path`` what it was at version ``to`` (a transaction id from
    :func:`history`, or an ISO-8601 time: the newest version the store dated at or before it),
    with no data copied: one replacing commit that removes what later commits added and re-adds
    what they removed (docs/protocol.md, I31). It conflicts like an overwrite of the whole
    table. Raises :class:`~txcommit.errors.TimeTravelError` when ``to`` names no version or
    VACUUM deleted files of it, :class:`~txcommit.errors.RestoreFilesMissingError` when a file it
    needs is gone; nothing is written then. Returns a one-row DataFrame of
    :data:`RESTORE_COLUMNS`."""
    return run_sql(spark, restore_statement(path, to))


def committed_files(spark: Any, path: str) -> Any:
    """The files of the table at ``path`` that readers see: path, size, txn."""
    return run_sql(spark, f"TXCOMMIT FILES {quote(path)}")


__all__ = [
    "HISTORY_COLUMNS",
    "RESTORE_COLUMNS",
    "MANIFEST_COLUMNS",
    "PROPERTY_COLUMNS",
    "alter_statement",
    "VACUUM_COLUMNS",
    "checkpoint",
    "committed_files",
    "generate_manifest",
    "history",
    "quote",
    "restore",
    "restore_statement",
    "set_manifests",
    "vacuum",
    "vacuum_statement",
]
