"""The ``hdfs`` adapter (primitive ``rename``), Python store: HDFS through the NameNode's
WebHDFS REST API, so that Python readers and the conformance kit need no JVM.

As the JVM's ``RenameStore``, a record is published by writing it whole to a temporary file
next to the target (``.<name>.<uuid>.tmp``), then renaming it into place with
``op=RENAME&renameoptions=NONE``: WebHDFS then calls the NameNode's ``rename2`` with
``Options.Rename.NONE``, which refuses an existing target atomically (403
``FileAlreadyExistsException``; a directory of that name: 403 ``IOException`` "must both be
directories") and never moves the file into a directory. The plain ``op=RENAME`` is never used:
it answers ``{"boolean": false}`` alike for a missing source, a missing parent and an existing
target, and moves the file INTO an existing directory.

A rename whose answer was lost is sent again; the resend then finds the target taken (or its
source gone) although the rename was ours, so the target is read back: the same bytes (a
record carries a token random per job) mean the publish landed.

The NameNode's HTTP address is the ``endpoint`` option (``http://namenode:9870``, with or
without ``/webhdfs/v1``), else ``$TXCOMMIT_WEBHDFS_ENDPOINT``, else port 9870 of the URL's
host. Requests carry ``user.name`` (simple authentication): the ``user`` option, else
``$HADOOP_USER_NAME``, else the login name. Kerberos (SPNEGO) is not supported.
"""

from __future__ import annotations

import builtins
import getpass
import os
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from txcommit.adapters.base import Store, StoreFile, declared
from txcommit.errors import StoreError, UnsupportedStoreError
from txcommit.paths import display_url, join

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

    from txcommit.adapters.declarations import AdapterDeclaration

ENDPOINT_ENV = "TXCOMMIT_WEBHDFS_ENDPOINT"
USER_ENV = "HADOOP_USER_NAME"
#: Hadoop 3's default NameNode HTTP port (``dfs.namenode.http-address``).
DEFAULT_HTTP_PORT = 9870
API = "/webhdfs/v1"
#: Connection errors and 5xx answers are retried; a create writes a fresh temporary name (so
#: a resend overwrites only itself) and a resent rename is read back (see the module's doc).
RETRIES = 5
TIMEOUT = (10.0, 300.0)


def parse_hdfs_url(url: str) -> tuple[str, int | None, str]:
    """``hdfs://host[:port]/path`` -> (host, port or None, absolute path without a trailing
    slash; "" for the root)."""
    parts = urlsplit(url)
    shown = display_url(url)
    scheme = parts.scheme.lower()
    if scheme == "viewfs":
        raise UnsupportedStoreError(
            f"txcommit: {shown} is a viewfs:// path, whose mount table only Hadoop's client "
            "resolves; from Python open the hdfs:// URL the mount points to (same path on that "
            "NameNode), or read the table through Spark"
        )
    if scheme != "hdfs":
        raise StoreError(f"txcommit: {shown} is not an hdfs:// URL", url=shown)
    if "@" in parts.netloc:
        raise StoreError(
            f"txcommit: {shown} carries a user in the URL; set the user with the 'user' option "
            f"or {USER_ENV} instead",
            url=shown,
        )
    if not parts.hostname:
        raise StoreError(
            f"txcommit: {shown} names no NameNode; use hdfs://<namenode>[:port]/<path> (Python "
            "does not read core-site.xml's fs.defaultFS)",
            url=shown,
        )
    return parts.hostname, parts.port, parts.path.rstrip("/")


def webhdfs_base(endpoint: str) -> str:
    """``http://host:port`` or ``http://host:port/webhdfs/v1`` -> the latter, no trailing /."""
    base = endpoint.rstrip("/")
    if "://" not in base:
        base = f"http://{base}"
    return base if base.endswith(API) else base + API


class HdfsStore(Store):
    """A directory on HDFS, reached over WebHDFS, as a :class:`Store`.

    ``endpoint``: the NameNode's HTTP address (see the module's doc); ``user``: the HDFS user;
    ``session``: a ready ``requests.Session`` (tests).
    """

    def __init__(
        self,
        url: str,
        *,
        endpoint: str | None = None,
        user: str | None = None,
        session: Any = None,
        declaration: AdapterDeclaration | None = None,
    ) -> None:
        host, port, self.path = parse_hdfs_url(url)
        netloc = f"{host}:{port}" if port else host
        super().__init__(f"hdfs://{netloc}{self.path}", declared(declaration, "hdfs"))
        chosen = endpoint or os.environ.get(ENDPOINT_ENV) or f"http://{host}:{DEFAULT_HTTP_PORT}"
        self.endpoint: str = webhdfs_base(chosen)
        self.user: str = user or os.environ.get(USER_ENV) or getpass.getuser()
        self._session = session if session is not None else self._new_session()

    def _new_session(self) -> Any:
        return self._import_extra("requests", "requests", "hdfs").Session()

    # -- requests ------------------------------------------------------------------------

    def _abs(self, key: str) -> str:
        return f"{self.path}/{key}" if key else (self.path or "/")

    def _url(self, path: str) -> str:
        return self.endpoint + quote(path)

    def _send(
        self, kind: str, action: str, key: str, method: str, path: str, op: str, **kwargs: Any
    ) -> tuple[Any, bool]:
        """One WebHDFS call, retried on connection errors and 5xx: (response, resent), where
        ``resent`` says an earlier attempt may have been applied without its answer."""
        params = {"op": op, "user.name": self.user, **kwargs.pop("params", {})}
        resent = False
        for attempt in range(RETRIES + 1):
            self.requests.add(kind)
            try:
                response = self._session.request(
                    method, self._url(path), params=params, timeout=TIMEOUT, **kwargs
                )
            except Exception as e:  # requests' ConnectionError, Timeout, ...
                if attempt < RETRIES:
                    resent = True
                    time.sleep(0.1 * 2**attempt)
                    continue
                raise self._failure(action, key, f"{type(e).__name__}: {e}") from None
            if response.status_code >= 500 and attempt < RETRIES:
                resent = True
                time.sleep(0.1 * 2**attempt)
                continue
            return response, resent
        raise AssertionError("unreachable")  # pragma: no cover

    def _call(
        self, kind: str, action: str, key: str, method: str, path: str, op: str, **kwargs: Any
    ) -> Any:
        return self._send(kind, action, key, method, path, op, **kwargs)[0]

    @staticmethod
    def _exception(response: Any) -> tuple[str, str]:
        """(Java exception's simple name, message) of a WebHDFS error answer."""
        try:
            remote = response.json()["RemoteException"]
            return str(remote.get("exception", "")), str(remote.get("message", ""))
        except Exception:
            return "", response.text[:200]

    def _failure(self, action: str, key: str, what: str) -> StoreError:
        if "AccessControlException" in what or what.startswith("401"):
            advice = (
                f"HDFS denied user '{self.user}'; set the user (the 'user' option or "
                f"{USER_ENV}) or the directory's permissions"
            )
        elif "UnresolvedPathException" in what:
            advice = (
                "the path leads through an HDFS link (the exception names where it leads), "
                "which WebHDFS does not follow; use the directory it leads to"
            )
        elif "SafeModeException" in what:
            advice = "the NameNode is in safe mode; wait until it leaves it, then retry"
        elif "StandbyException" in what:
            advice = (
                f"{self.endpoint} is a standby NameNode; point the WebHDFS endpoint at the "
                "active one"
            )
        else:
            advice = (
                f"check that WebHDFS is enabled (dfs.webhdfs.enabled) and reachable at "
                f"{self.endpoint}; set the NameNode's HTTP address with the 'endpoint' option "
                f"(--endpoint) or {ENDPOINT_ENV}"
            )
        denied = "AccessControlException" in what or what.startswith("401")
        return self.failure(action, key, what, advice, denied=denied)

    def _error(self, action: str, key: str, response: Any) -> StoreError:
        exception, message = self._exception(response)
        return self._failure(action, key, f"{response.status_code} {exception}: {message}")

    def _write_file(self, key: str, path: str, data: bytes, *, overwrite: bool) -> None:
        """CREATE in WebHDFS's two steps: the NameNode names a DataNode, which takes the bytes
        (parents are created as needed)."""
        params = {"overwrite": str(overwrite).lower(), "noredirect": "true"}
        response = self._call("PUT", "write", key, "PUT", path, "CREATE", params=params)
        if response.status_code != 200:
            raise self._error("write", key, response)
        location = response.json()["Location"]
        for attempt in range(RETRIES + 1):
            try:
                answer = self._session.put(location, data=data, timeout=TIMEOUT)
            except Exception as e:  # the temp name is ours alone: resending is safe
                if attempt < RETRIES:
                    time.sleep(0.1 * 2**attempt)
                    continue
                raise self._failure("write", key, f"{type(e).__name__}: {e}") from None
            if answer.status_code >= 500 and attempt < RETRIES:
                time.sleep(0.1 * 2**attempt)
                continue
            if answer.status_code != 201:
                raise self._error("write", key, answer)
            return

    def _temp_for(self, key: str) -> str:
        parent, _, name = key.rpartition("/")
        return join(parent, f".{name}.{uuid.uuid4()}.tmp")

    def _publish(self, key: str, data: bytes, *, exclusive: bool) -> None:
        self.check_key(key)
        tmp = self._temp_for(key)
        self._write_file(key, self._abs(tmp), data, overwrite=True)
        try:
            option = "NONE" if exclusive else "OVERWRITE"
            response, resent = self._send(
                "RENAME",
                "publish",
                key,
                "PUT",
                self._abs(tmp),
                "RENAME",
                params={"destination": self._abs(key), "renameoptions": option},
            )
            if response.status_code == 200:
                return
            exception, _ = self._exception(response)
            landed = exception in ("FileAlreadyExistsException", "FileNotFoundException")
            # A resend after a lost answer: if the first attempt landed, the target holds
            # our bytes.
            if resent and landed and self.read(key) == data:
                return
            if exclusive and response.status_code == 403:
                if exception == "FileAlreadyExistsException":
                    raise self.conflict(key, "the NameNode refused the rename onto it; ")
                if self._status(key) is not None:  # a directory of that name
                    raise self.conflict(key, "a directory of that name exists; ")
            raise self._error("publish", key, response)
        finally:
            self._delete_path(tmp, self._abs(tmp))

    # -- the contract --------------------------------------------------------------------

    def create_exclusive(self, key: str, data: bytes) -> None:
        self._publish(key, data, exclusive=True)

    def write_replacing(self, key: str, data: bytes) -> None:
        self._publish(key, data, exclusive=False)

    def read(self, key: str) -> bytes | None:
        self.check_key(key)
        # OPEN redirects to a DataNode, which requests follows for a GET.
        response = self._call("GET", "read", key, "GET", self._abs(key), "OPEN")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._error("read", key, response)
        return bytes(response.content)

    def _status(self, key: str) -> dict[str, Any] | None:
        response = self._call("HEAD", "check", key, "GET", self._abs(key), "GETFILESTATUS")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise self._error("check", key, response)
        status: dict[str, Any] = response.json()["FileStatus"]
        return status

    def exists(self, key: str) -> bool:
        self.check_key(key)
        return self._status(key) is not None

    def _delete_path(self, key: str, path: str) -> bool:
        response = self._call(
            "DELETE", "delete", key, "DELETE", path, "DELETE", params={"recursive": "false"}
        )
        if response.status_code == 404:
            return False
        if response.status_code != 200:
            raise self._error("delete", key, response)
        return bool(response.json().get("boolean"))

    def delete(self, key: str) -> bool:
        self.check_key(key)
        status = self._status(key)
        if status is None or status.get("type") != "FILE":
            return False  # a directory is no key: never removed here
        return self._delete_path(key, self._abs(key))

    def _list_dir(self, prefix: str) -> builtins.list[dict[str, Any]]:
        response = self._call("LIST", "list", prefix, "GET", self._abs(prefix), "LISTSTATUS")
        if response.status_code == 404:
            return []
        if response.status_code != 200:
            raise self._error("list", prefix, response)
        entries: builtins.list[dict[str, Any]] = response.json()["FileStatuses"]["FileStatus"]
        return entries

    @staticmethod
    def _file(key: str, entry: dict[str, Any]) -> StoreFile:
        # fileId is new for every file created under a name (a rename keeps it).
        return StoreFile(
            key,
            int(entry["length"]),
            int(entry["modificationTime"]) * 1_000_000,
            str(entry.get("fileId", "")) or None,
        )

    def list(self, prefix: str = "") -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        files = [
            self._file(join(prefix, e["pathSuffix"]), e)
            for e in self._list_dir(prefix)
            if e.get("type") == "FILE"
        ]
        return sorted(files, key=lambda f: f.key)

    def walk(
        self, prefix: str = "", progress: Callable[[int], None] | None = None
    ) -> builtins.list[StoreFile]:
        prefix = self.check_prefix(prefix)
        files: builtins.list[StoreFile] = []
        pending = [prefix]
        while pending:  # one LISTSTATUS per directory
            directory = pending.pop()
            for e in self._list_dir(directory):
                key = join(directory, e["pathSuffix"])
                if e.get("type") == "DIRECTORY":
                    pending.append(key)
                elif e.get("type") == "FILE":
                    files.append(self._file(key, e))
            if progress is not None:
                progress(len(files))
        return sorted(files, key=lambda f: f.key)

    def fsspec(self) -> tuple[AbstractFileSystem, str]:
        from fsspec.implementations.webhdfs import WebHDFS

        parts = urlsplit(self.endpoint)
        fs = WebHDFS(
            host=parts.hostname,
            port=parts.port or (443 if parts.scheme == "https" else 80),
            user=self.user,
            use_https=parts.scheme == "https",
        )
        return fs, self.path or "/"

    def __repr__(self) -> str:
        return (
            f"HdfsStore({self.root_url!r}, adapter={self.declaration.name!r}, "
            f"endpoint={self.endpoint!r}, user={self.user!r})"
        )


__all__ = ["DEFAULT_HTTP_PORT", "ENDPOINT_ENV", "HdfsStore", "parse_hdfs_url", "webhdfs_base"]
