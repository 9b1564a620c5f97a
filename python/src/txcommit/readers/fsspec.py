"""fsspec file systems that show only committed files: ``txcommit+file://`` (local) and
``txcommit+s3://`` / ``txcommit+s3a://`` (S3 and S3-compatible stores), read-only.

    import fsspec, pandas
    fs = fsspec.filesystem("txcommit+s3", endpoint="http://127.0.0.1:9000")
    fs.find("bucket/events")                      # committed data files only
    pandas.read_parquet("txcommit+file:///data/events")

They are registered with fsspec by the ``fsspec.specs`` entry points of the txcommit
distribution (and again when ``txcommit`` is imported), so any fsspec-aware reader (pandas,
pyarrow, polars, dask) can use them by URL. Options are those of the plain store (S3:
``endpoint``, ``region``, ``access_key_id``, ``secret_access_key``, ``session_token``,
``path_style``, ``allow_http``, ``max_retries``; unset ones come from the AWS environment),
plus ``as_of``: read every table as of a past snapshot (a transaction id or an ISO-8601 time,
as ``txcommit.dataset(path, as_of=...)``; docs/readers.md, "Reading a past snapshot").

Inside a txcommit table (the nearest directory at or above a path holding ``_txcommit/``, as
the JVM's read filter finds it) every listing, ``info`` and ``open`` follows the reader rule
of :mod:`txcommit.table.view`: only visible data files exist; ``_txcommit/``, ``_SUCCESS`` and
hidden names are not shown; a directory exists iff it holds a visible file. Outside any table
the file system shows the store as it is (I7). Each file system instance reads a table once,
when first asked about it, and keeps that snapshot (``cachable = False``: every
``fsspec.filesystem(...)`` call is a new instance); ``invalidate_cache()`` takes a new one.
"""

from __future__ import annotations

import posixpath
import threading
from typing import Any

from fsspec import AbstractFileSystem

from txcommit.table.view import TableView, open_table

_READ_ONLY = (
    "txcommit: the {} file system is read-only (it shows committed files); write with Spark"
)


class _TableIndex:
    """One table's snapshot as fsspec entries: files by relative path, and each directory's
    children, built once so that ``ls``/``info``/``open`` cost no scan of the table."""

    def __init__(self, table: str, view: TableView) -> None:
        self.view = view
        self.files: dict[str, dict[str, Any]] = {}
        self.children: dict[str, dict[str, dict[str, Any]]] = {"": {}}
        for f in view.visible_files():
            entry = {"name": posixpath.join(table, f.path), "size": f.size, "type": "file"}
            self.files[f.path] = entry
            parent = f.path.rpartition("/")[0]
            self.children.setdefault(parent, {})[f.path] = entry
            while parent:  # every ancestor directory exists, holding its child directory
                above = parent.rpartition("/")[0]
                siblings = self.children.setdefault(above, {})
                if parent in siblings:
                    break
                name = posixpath.join(table, parent)
                siblings[parent] = {"name": name, "size": 0, "type": "directory"}
                parent = above

    def entries(self, rel_dir: str) -> list[dict[str, Any]] | None:
        found = self.children.get(rel_dir)
        if found is None:
            return None
        return [dict(e) for e in sorted(found.values(), key=lambda e: e["name"])]


class _CommittedFileSystem(AbstractFileSystem):  # type: ignore[misc]  # fsspec has no type hints
    """The shared logic; subclasses give the store's plain file system, how to tell a table
    directory, and a path's store URL."""

    cachable = False

    def __init__(self, as_of: str | None = None, **storage_options: Any) -> None:
        super().__init__(as_of=as_of, **storage_options)
        # ``as_of`` is not the store's: every table read through this file system is read as
        # of that snapshot (a transaction id or an ISO-8601 time, as ``dataset(as_of=)``).
        self._as_of = as_of
        self._options = dict(storage_options)
        self._lock = threading.Lock()
        self._tables: dict[str, str | None] = {}
        self._indexes: dict[str, _TableIndex] = {}
        self._inner_fs: AbstractFileSystem | None = None

    # -- what a subclass provides ------------------------------------------------------------

    def _make_inner(self) -> AbstractFileSystem:
        raise NotImplementedError

    def _has_log(self, directory: str) -> bool:
        raise NotImplementedError

    def _url(self, path: str) -> str:
        """The plain store URL of a stripped path."""
        raise NotImplementedError

    # -- tables and views ----------------------------------------------------------------

    @property
    def inner(self) -> AbstractFileSystem:
        """The plain file system of the store (it shows every file)."""
        if self._inner_fs is None:
            self._inner_fs = self._make_inner()
        return self._inner_fs

    def _table_of(self, path: str) -> str | None:
        """The nearest directory at or above ``path`` holding ``_txcommit/``, or None."""
        chain = []
        current = path
        found: str | None = None
        while True:
            with self._lock:
                if current in self._tables:
                    found = self._tables[current]
                    break
            chain.append(current)
            if self._has_log(current):
                found = current
                break
            parent = self._parent(current)
            if parent == current:  # the root
                break
            current = parent
        with self._lock:
            for p in chain:
                self._tables[p] = found
        return found

    def _index(self, table: str) -> _TableIndex:
        with self._lock:
            index = self._indexes.get(table)
        if index is None:
            index = _TableIndex(
                table, open_table(self._url(table), self._options, as_of=self._as_of)
            )
            with self._lock:
                index = self._indexes.setdefault(table, index)
        return index

    def invalidate_cache(self, path: str | None = None) -> None:
        """Forget the snapshots taken (all of them: a commit can change any directory)."""
        with self._lock:
            self._tables.clear()
            self._indexes.clear()
        super().invalidate_cache(path)

    @staticmethod
    def _rel(table: str, path: str) -> str:
        return "" if path == table else path[len(table.rstrip("/")) + 1 :]

    def _entries(self, table: str, rel_dir: str) -> list[dict[str, Any]] | None:
        """Visible entries directly under ``rel_dir`` of ``table``; None if it is no directory."""
        return self._index(table).entries(rel_dir)

    def _visible_file(self, table: str, rel: str) -> dict[str, Any] | None:
        found = self._index(table).files.get(rel)
        return dict(found) if found is not None else None

    # -- fsspec's read operations --------------------------------------------------------

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        table = self._table_of(path)
        if table is None:
            listed: list[Any] = self.inner.ls(path, detail=detail, **kwargs)
            return listed
        rel = self._rel(table, path)
        entries = self._entries(table, rel)
        if entries is None:
            file = self._visible_file(table, rel)
            if file is None:
                raise FileNotFoundError(path)
            entries = [file]
        return entries if detail else [e["name"] for e in entries]

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        table = self._table_of(path)
        if table is None:
            info: dict[str, Any] = self.inner.info(path, **kwargs)
            return info
        rel = self._rel(table, path)
        file = self._visible_file(table, rel) if rel else None
        if file is not None:
            return file
        if self._entries(table, rel) is not None:
            return {"name": path, "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        if mode != "rb":
            raise PermissionError(_READ_ONLY.format(self.protocol[0]))
        path = self._strip_protocol(path)
        table = self._table_of(self._parent(path))
        if table is not None and self._visible_file(table, self._rel(table, path)) is None:
            raise FileNotFoundError(
                f"{path}: no such committed file (uncommitted, aborted, removed by a replacing "
                "commit, or absent)"
            )
        return self.inner.open(path, mode="rb", **kwargs)

    # -- no writes -----------------------------------------------------------------------

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(_READ_ONLY.format(self.protocol[0]))

    mkdir = makedirs = rm = rm_file = _rm = cp_file = mv = touch = pipe_file = put_file = _refuse


class CommittedLocalFileSystem(_CommittedFileSystem):
    """Committed files of tables on this machine's file system: ``txcommit+file:///path``."""

    protocol = ("txcommit+file",)
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        from txcommit.adapters.local import local_path

        text = str(path)
        for p in cls.protocol:
            if text.startswith(p + "://"):
                text = text[len(p) + 3 :]
                break
        return local_path(text or "/").as_posix()

    def _make_inner(self) -> AbstractFileSystem:
        from fsspec.implementations.local import LocalFileSystem

        return LocalFileSystem()

    def _has_log(self, directory: str) -> bool:
        return posixpath.isdir(posixpath.join(directory, "_txcommit"))

    def _url(self, path: str) -> str:
        return path

    def unstrip_protocol(self, name: str) -> str:
        return f"txcommit+file://{name}"


class CommittedS3FileSystem(_CommittedFileSystem):
    """Committed files of tables on S3: ``txcommit+s3://bucket/path`` (or ``txcommit+s3a``)."""

    protocol = ("txcommit+s3", "txcommit+s3a")
    root_marker = ""

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        text = str(path)
        for p in (*cls.protocol, "s3", "s3a"):
            if text.startswith(p + "://"):
                text = text[len(p) + 3 :]
                break
        return text.strip("/")

    def _make_inner(self) -> AbstractFileSystem:
        from txcommit.stores import store_descriptor

        bucket = "placeholder"  # obstore's fsspec store takes the bucket from each path
        s3 = store_descriptor("s3").store_class()
        fs, _ = s3(f"s3://{bucket}", **self._options).fsspec()
        return fs

    def _has_log(self, directory: str) -> bool:
        if not directory:  # above the buckets
            return False
        try:  # one LIST request: any key under <directory>/_txcommit/
            return bool(self.inner.ls(f"{directory}/_txcommit", detail=False))
        except FileNotFoundError:
            return False

    def _url(self, path: str) -> str:
        return f"s3://{path}"

    def unstrip_protocol(self, name: str) -> str:
        return f"txcommit+s3://{name}"


def register() -> None:
    """Registers the protocols with fsspec (the entry points do it for installed copies)."""
    import fsspec

    for cls in (CommittedLocalFileSystem, CommittedS3FileSystem):
        for protocol in cls.protocol:
            fsspec.register_implementation(
                protocol, f"{cls.__module__}.{cls.__name__}", clobber=True
            )


__all__ = ["CommittedLocalFileSystem", "CommittedS3FileSystem", "register"]
