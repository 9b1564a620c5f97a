"""The ``local`` adapter (primitive ``rename``): local and NFS-style POSIX file systems.

Like the JVM's ``RenameStore``, a file is published exclusively by writing it to a temporary
file next to the target, ``fsync``-ing it, then hard-linking it into place: ``link(2)`` fails
when the target exists, so of any number of racing publishers exactly one wins, and a reader
never sees a part (``rename(2)`` would silently replace an existing target).

obstore's ``LocalStore.put(mode="create")`` uses the same ``link(2)`` (it stages the bytes in
``<target>#<n>`` and hard-links that), but does not ``fsync`` before linking, so after a power
loss a published record could be empty or partial, which strict decoding then refuses. This
adapter therefore publishes with its own ``fsync`` + ``link`` by default; ``durable=False``
uses obstore's ``mode="create"`` instead (the contract tests run both). Reads, listings,
existence checks and deletes are plain file system calls too: obstore refuses a path with a
control character (a table named with a TAB), which the file system and Spark accept. Readers
get an fsspec file system.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import stat
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import unquote, urlsplit

import obstore
from obstore.store import LocalStore as _ObstoreLocal

from txcommit.adapters.base import ObstoreStore, StoreFile, declared
from txcommit.errors import StoreError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from txcommit.adapters.declarations import AdapterDeclaration


_T = TypeVar("_T")

# A part obstore's create stages next to its target (``<name>#<n>``), never a file of the store
# (obstore's own listing skips it too).
_STAGED = re.compile(r"#[0-9]+$")


def local_path(url_or_path: str | os.PathLike[str], resolve: bool = True) -> Path:
    """The absolute local path of a plain path or a ``file:`` URL: where it leads (every link
    followed), or with ``resolve=False`` as written (``..`` taken lexically, as Hadoop's)."""
    text = os.fspath(url_or_path)
    if text.startswith("file:"):
        # URL parsing drops a raw TAB or line break: kept as escapes, they name the path given.
        for raw, escaped in (("\t", "%09"), ("\r", "%0D"), ("\n", "%0A")):
            text = text.replace(raw, escaped)
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost"):
            raise StoreError(
                f"txcommit: {text} names host '{parts.netloc}'; the local adapter serves only "
                "this machine's files (file:/path or file:///path)",
                url=text,
            )
        text = unquote(parts.path)
    path = Path(text).expanduser()
    return path.resolve() if resolve else Path(os.path.abspath(path))


class LocalStore(ObstoreStore):
    """A directory on a local (or NFS-style POSIX) file system, as a :class:`Store`."""

    addresses_control_characters = True

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        durable: bool = True,
        declaration: AdapterDeclaration | None = None,
    ) -> None:
        self.root = local_path(root)
        super().__init__(f"file://{self.root}", declared(declaration, "local"))
        self.durable = durable
        self._obstore: _ObstoreLocal | None = None

    # -- helpers -------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*self.check_key(key).split("/"))

    def _obstore_client(self, create: bool = False) -> _ObstoreLocal | None:
        """obstore's store on the root; None when the root does not exist and ``create`` is
        false (obstore refuses a missing root, txcommit treats it as empty)."""
        if self._obstore is None:
            if not self.root.is_dir():
                if not create:
                    return None
                try:
                    self.root.mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise self._failure("create the directory", "", e) from None
            self._obstore = _ObstoreLocal(self.root)
        return self._obstore

    def _failure(self, action: str, key: str, cause: BaseException) -> StoreError:
        url = self.url_for(key)
        first = (str(cause).splitlines() or [type(cause).__name__])[0][:300]
        return StoreError(
            f"txcommit: could not {action} {url}: {first}. Check that the directory exists "
            "and that this process may read and write it, then retry.",
            url=url,
        )

    def _write_temp(self, target: Path, data: bytes) -> Path:
        """Writes ``data`` to a new hidden temporary file next to ``target``, fsync'd."""
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.{uuid.uuid4()}.tmp"
        self.requests.add("PUT")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)  # the bytes are durable before the name is published
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        os.close(fd)
        return tmp

    @staticmethod
    def _sync_dir(directory: Path) -> None:
        """Makes a directory entry durable (a no-op where directories cannot be fsync'd)."""
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    # -- the contract --------------------------------------------------------------------

    def create_exclusive(self, key: str, data: bytes) -> None:
        target = self._path(key)
        if not self.durable:
            store = self._obstore_client(create=True)
            assert store is not None  # create=True makes the root (or raises)
            self.requests.add("PUT")
            try:
                obstore.put(store, key, data, mode="create")
            except obstore.exceptions.AlreadyExistsError:
                raise self._conflict(key) from None
            except (OSError, ValueError) as e:  # ValueError: obstore refuses a control character
                raise self._failure("create", key, e) from None
            return
        try:
            tmp = self._write_temp(target, data)
        except OSError as e:
            raise self._failure("create", key, e) from None
        try:
            self.requests.add("RENAME")
            os.link(tmp, target)
        except FileExistsError:
            raise self._conflict(key) from None
        except OSError as e:
            raise self._failure("publish", key, e) from None
        finally:
            tmp.unlink(missing_ok=True)
        self._sync_dir(target.parent)

    def write_replacing(self, key: str, data: bytes) -> None:
        target = self._path(key)
        if not self.durable:
            store = self._obstore_client(create=True)
            assert store is not None  # create=True makes the root (or raises)
            self.requests.add("PUT")
            try:
                obstore.put(store, key, data)
            except (OSError, ValueError) as e:  # ValueError: obstore refuses a control character
                raise self._failure("write", key, e) from None
            return
        try:
            tmp = self._write_temp(target, data)
            self.requests.add("RENAME")
            try:
                os.replace(tmp, target)  # rename(2): atomic, replaces
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        except OSError as e:
            raise self._failure("write", key, e) from None
        self._sync_dir(target.parent)

    def _file_call(
        self, verb: str, action: str, key: str, call: Callable[[Path], _T], missing: _T
    ) -> _T:
        """One file system call (``verb``, counted) on ``key``'s path: ``call``'s answer, or
        ``missing`` when the file or a directory above it is not there."""
        path = self._path(key)
        self.requests.add(verb)
        try:
            return call(path)
        except (FileNotFoundError, NotADirectoryError):
            return missing
        except OSError as e:
            raise self._failure(action, key, e) from None

    def read(self, key: str) -> bytes | None:
        return self._file_call("GET", "read", key, Path.read_bytes, None)

    def exists(self, key: str) -> bool:
        return self._file_call(
            "HEAD", "check", key, lambda p: stat.S_ISREG(p.stat().st_mode), False
        )

    def delete(self, key: str) -> bool:
        def unlink(path: Path) -> bool:
            path.unlink()
            return True

        return self._file_call("DELETE", "delete", key, unlink, False)

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        top = self.root.joinpath(*prefix.split("/")) if prefix else self.root
        self.requests.add("LIST")
        files = []
        try:
            with os.scandir(top) as entries:
                for entry in entries:
                    if _STAGED.search(entry.name):
                        continue
                    try:
                        if not entry.is_file(follow_symlinks=True):
                            continue
                        st = entry.stat(follow_symlinks=True)
                    except FileNotFoundError:  # deleted between listing and stat
                        continue
                    key = f"{prefix}/{entry.name}" if prefix else entry.name
                    files.append(StoreFile(key, st.st_size, st.st_mtime_ns))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise self._failure("list", prefix, e) from None
        return sorted(files, key=lambda f: f.key)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        top = self.root.joinpath(*prefix.split("/")) if prefix else self.root
        found: builtins.list[StoreFile] = []

        def failed(e: OSError) -> None:
            if not isinstance(e, FileNotFoundError):  # a directory deleted meanwhile is empty
                raise self._failure("list", prefix, e) from None

        # Through links, as Spark's listing goes (the JVM's VACUUM alone follows none); a link
        # back to a directory the walk is in would never end: an error naming it.
        for directory, dirs, names in os.walk(top, onerror=failed, followlinks=True):
            self.requests.add("LIST")
            for d in dirs:
                linked = os.path.join(directory, d)
                if os.path.islink(linked):
                    target = os.path.realpath(linked)
                    if os.path.commonpath([target, os.path.realpath(directory)]) == target:
                        raise StoreError(
                            f"txcommit: {linked} is a link to {target}, a directory it lies in: "
                            "a listing through it would never end. Remove the link, then retry.",
                            url=self.url_for(prefix),
                        )
            base = Path(directory).relative_to(self.root).as_posix()
            for name in names:
                try:
                    st = os.stat(os.path.join(directory, name))
                except FileNotFoundError:  # deleted between listing and stat
                    continue
                key = name if base == "." else f"{base}/{name}"
                found.append(StoreFile(key, st.st_size, st.st_mtime_ns))
            if progress is not None:
                progress(len(found))
        return sorted(found, key=lambda f: f.key)

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        from fsspec.implementations.local import LocalFileSystem

        return LocalFileSystem(), str(self.root)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r}, durable={self.durable})"


__all__ = ["LocalStore", "local_path"]
