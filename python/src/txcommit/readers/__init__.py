"""Readers outside Spark: a table's committed files as a pyarrow dataset, a DuckDB relation or
a polars LazyFrame, on the local file system and on S3, with no JVM.

    import txcommit
    ds = txcommit.dataset("s3://bucket/events", storage_options={"endpoint": "http://..."})
    ds.to_table()                                    # pyarrow
    txcommit.duckdb_relation("/data/events").df()    # DuckDB (pip install 'txcommit[readers]')
    txcommit.polars_frame("/data/events").collect()  # polars

Each call takes one snapshot of the table (:func:`txcommit.table.view.open_table`): the files of the
transactions committed when it listed the table, minus the files replacing commits removed.
The dataset holds that exact file list, so a commit made later is not seen (open a new one);
a file a VACUUM deletes while the dataset is in use fails the read, as it would in Spark. Calls
with the same arguments on a log-only table nothing was committed to since share one dataset.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from txcommit.adapters import LocalStore
from txcommit.paths import join
from txcommit.table.view import open_table

if TYPE_CHECKING:
    import duckdb
    import polars
    import pyarrow
    import pyarrow.dataset


def dataset(
    path: str | os.PathLike[str],
    format: str = "parquet",
    partitioning: Any = "hive",
    storage_options: Mapping[str, Any] | None = None,
    *,
    schema: pyarrow.Schema | None = None,
    ignore_corrupt_records: bool = False,
    as_of: str | None = None,
    **dataset_options: Any,
) -> pyarrow.dataset.Dataset:
    """A ``pyarrow.dataset.Dataset`` of the committed files of the table at ``path``.

    ``format``: any pyarrow dataset format (``parquet``, ``csv``, ``json``, ``orc``, ``ipc``)
    or a ``FileFormat``. ``partitioning``: ``"hive"`` (``k=v`` directories, as Spark writes),
    None, or any pyarrow partitioning. ``storage_options``: the store's options (S3:
    ``endpoint``, ``region``, ``access_key_id``, ``secret_access_key``, ``session_token``,
    ``path_style``, ``allow_http``, ``max_retries``). ``schema``: the dataset's schema (needed
    for an empty table, else inferred from the first file). ``ignore_corrupt_records``: hide
    a transaction whose record is corrupt instead of failing. ``as_of``: a past snapshot, named
    as Spark's ``txcommit.asOf`` names it: a transaction id from the table's history (the
    snapshot right after it committed) or an ISO-8601 time (every commit the store dated at or
    before it); see docs/readers.md. Other keyword arguments go to ``pyarrow.dataset.dataset``.
    """
    import pyarrow.dataset as pads
    import pyarrow.fs as pafs

    view = open_table(
        path, storage_options, ignore_corrupt_records=ignore_corrupt_records, as_of=as_of
    )
    # A log-only table's reads share the plan of the unchanged table (txcommit.table.view), and
    # with it the dataset built from the same arguments: the same files, read the same way.
    arguments = (format, partitioning, schema, dict(storage_options or {}), dataset_options)
    plan = view.plan
    if plan is not None:
        with _datasets_lock:
            for held, built in plan.datasets:
                if _same(held, arguments):
                    return built
    store = view.store
    filesystem: Any
    if isinstance(store, LocalStore):
        filesystem, root = pafs.LocalFileSystem(), str(store.root)
    else:
        fs, root = store.fsspec()
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(fs))
    # Each file with the size its record gives: pyarrow neither checks nor normalises a path
    # given as a FileInfo (a million Python calls on a fsspec file system), and a Parquet scan
    # reads its footer without asking the store the size first.
    file_type = pafs.FileType.File
    files = [
        pafs.FileInfo(join(root, f.path), type=file_type, size=f.size) for f in view.visible_files()
    ]
    built = pads.dataset(
        files,
        schema=schema,
        format=format,
        filesystem=filesystem,
        partitioning=partitioning,
        partition_base_dir=root,
        **dataset_options,
    )
    if plan is not None:
        with _datasets_lock:
            plan.datasets[:] = [(arguments, built)]  # the last one: a Dataset holds every path
    return built


_datasets_lock = threading.Lock()


def _same(a: Any, b: Any) -> bool:
    """Whether the arguments of two :func:`dataset` calls are the same: values of plain types
    (strings, numbers, None, and tuples, lists and dicts of them) equal, anything else (a
    ``FileFormat``, a partitioning, a schema) the very object (held by the plan, so its
    identity is its own). Storage options are compared too: a dataset holds its file system,
    and so the credentials it reads with."""
    if a is b:
        return True
    plain = (str, int, float, bool, bytes)
    if type(a) is not type(b):
        return False
    if isinstance(a, plain):
        return bool(a == b)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return False


def duckdb_relation(
    path: str | os.PathLike[str],
    connection: duckdb.DuckDBPyConnection | None = None,
    **options: Any,
) -> duckdb.DuckDBPyRelation:
    """The committed files of the table as a DuckDB relation (``connection``, default DuckDB's
    default connection); ``options`` are those of :func:`dataset`. DuckDB scans the pyarrow
    dataset lazily, pushing projections and filters into it."""
    import duckdb

    con = connection if connection is not None else duckdb.default_connection()
    return con.from_arrow(dataset(path, **options))


def polars_frame(path: str | os.PathLike[str], **options: Any) -> polars.LazyFrame:
    """The committed files of the table as a polars ``LazyFrame`` (``options`` are those of
    :func:`dataset`), scanned through the pyarrow dataset."""
    import polars

    return polars.scan_pyarrow_dataset(dataset(path, **options))


__all__ = ["dataset", "duckdb_relation", "polars_frame"]
