"""The Python store of the ``example`` adapter: ``example:///abs/path`` is the local directory
``/abs/path``. Like the JVM side, a file is published by writing a temporary file next to it,
forcing it to disk, then hard-linking it into place: ``link(2)`` fails when the target exists,
so of any number of racing publishers exactly one wins and a reader never sees a part."""

from __future__ import annotations

import builtins
import contextlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from txcommit.adapters.base import Store, StoreFile, declared
from txcommit.errors import StoreError

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from txcommit.adapters.declarations import AdapterDeclaration

SCHEME = "example"


def local_root(url: str) -> Path:
    """The local directory of an ``example:///abs/path`` URL."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME or parts.netloc or not parts.path.startswith("/"):
        raise StoreError(f"txcommit: {url} is not an example:///absolute/path URL", url=url)
    return Path(unquote(parts.path))


class ExampleStore(Store):
    """A directory of the local file system, named ``example:///abs/path``."""

    def __init__(self, root: str, *, declaration: AdapterDeclaration | None = None) -> None:
        self.root = local_root(root)
        super().__init__(f"{SCHEME}://{self.root}", declared(declaration, "example"))

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*self.check_key(key).split("/"))

    def _failed(self, action: str, key: str, e: OSError) -> StoreError:
        return self.failure(action, key, str(e), "check that the directory may be written")

    def _temp_copy(self, target: Path, data: bytes) -> Path:
        """``data`` in a new temporary file next to ``target``, on disk before it is named."""
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.{uuid.uuid4()}.tmp"
        self.requests.add("PUT")
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return tmp

    def _sync_dir(self, key: str, directory: Path) -> None:
        try:
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)  # the new name survives a power loss too
            finally:
                os.close(fd)
        except OSError as e:
            raise self._failed("publish", key, e) from None

    def create_exclusive(self, key: str, data: bytes) -> None:
        target = self._path(key)
        try:
            tmp = self._temp_copy(target, data)
        except OSError as e:
            raise self._failed("create", key, e) from None
        try:
            self.requests.add("RENAME")
            os.link(tmp, target)
        except FileExistsError:
            raise self.conflict(key, "link(2) refused it; ") from None
        except OSError as e:
            raise self._failed("publish", key, e) from None
        finally:
            tmp.unlink(missing_ok=True)
        self._sync_dir(key, target.parent)

    def write_replacing(self, key: str, data: bytes) -> None:
        target = self._path(key)
        try:
            tmp = self._temp_copy(target, data)
            self.requests.add("RENAME")
            os.replace(tmp, target)
        except OSError as e:
            raise self._failed("write", key, e) from None
        self._sync_dir(key, target.parent)

    def read(self, key: str) -> bytes | None:
        self.requests.add("GET")
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        except OSError as e:
            raise self._failed("read", key, e) from None

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        directory = self._path(prefix) if prefix else self.root
        self.requests.add("LIST")
        found = []
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise self._failed("list", prefix, e) from None
        for entry in entries:
            with contextlib.suppress(FileNotFoundError):  # deleted since the listing
                # Dot names are the temporary files of writes still in flight.
                if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                    st = entry.stat()
                    key = f"{prefix}/{entry.name}" if prefix else entry.name
                    found.append(StoreFile(key, st.st_size, st.st_mtime_ns))
        return sorted(found, key=lambda f: f.key)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        found: builtins.list[StoreFile] = []
        for directory, _, names in os.walk(self._path(prefix) if prefix else self.root):
            self.requests.add("LIST")
            base = Path(directory).relative_to(self.root).as_posix()
            for name in names:
                with contextlib.suppress(FileNotFoundError):  # deleted since the listing
                    st = os.stat(os.path.join(directory, name))
                    if not name.startswith("."):
                        key = name if base == "." else f"{base}/{name}"
                        found.append(StoreFile(key, st.st_size, st.st_mtime_ns))
            if progress is not None:
                progress(len(found))
        return sorted(found, key=lambda f: f.key)

    def exists(self, key: str) -> bool:
        self.requests.add("HEAD")
        return self._path(key).is_file()

    def delete(self, key: str) -> bool:
        self.requests.add("DELETE")
        try:
            self._path(key).unlink()
        except FileNotFoundError:
            return False
        except OSError as e:
            raise self._failed("delete", key, e) from None
        return True

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        from fsspec.implementations.local import LocalFileSystem

        return LocalFileSystem(), str(self.root)


__all__ = ["SCHEME", "ExampleStore", "local_root"]
