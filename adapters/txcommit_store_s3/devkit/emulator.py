"""A real S3 endpoint on loopback for trying txcommit on one machine, and for its tests.

It is moto's S3 server (the full REST API over HTTP, the same one `moto_server` runs) behind a
thin WSGI layer that:

* counts every request by S3 operation (PUT, COPY, DELETE, LIST, HEAD, GET, multipart
  initiate/part/complete/abort ...) so a test or a benchmark can measure what a protocol did
  from the outside, executors included (``GET /_txcommit/requests``);
* makes conditional writes atomic: moto checks ``If-None-Match`` and then writes, without a
  lock, so two racing conditional PUTs of one key could both succeed, which real S3 never
  allows; requests carrying a precondition are serialised here;
* can play a store that lies (``ignore_if_none_match``): it strips ``If-None-Match`` so a
  conditional put silently overwrites, which txcommit must detect and refuse;
* can lose answers (``lose_response``, or ``POST /_txcommit/faults`` at run time): it forwards
  a matching request, so it takes effect, and then drops the connection without answering, as
  a network that fails after the request arrived does; the client's own retry then meets the
  result of its first attempt (for a conditional put: 412, although the object is its own);
  with ``fail_read_back`` it also fails every read (GET, HEAD) of a key whose write it lost
  the answer to, with a 500, until the fault is armed again: a client that reads back what it
  wrote to learn whether its write landed cannot tell;
* can charge what each request would cost on real S3 (``latency``, a
  :class:`txcommit.devkit.latency_model.LatencyModel`): a per-operation delay, and a
  per-byte cost for server-side copies, so a rename costs on it what it costs on S3
  (``txcommit bench``).

Start it with ``txcommit local-s3`` or ``LocalS3().start()``; it accepts any credentials.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote
from xml.sax.saxutils import unescape

from txcommit.stores import LocalEmulator
from txcommit_store_s3 import s3a_confs

if TYPE_CHECKING:
    from txcommit.devkit.latency_model import LatencyModel

REQUESTS_PATH = "/_txcommit/requests"
FAULTS_PATH = "/_txcommit/faults"
_KEY = re.compile(rb"<Key>(.*?)</Key>", re.DOTALL)

StartResponse = Callable[..., Any]
Environ = dict[str, Any]
WsgiApp = Callable[[Environ, StartResponse], Iterable[bytes]]


def classify(method: str, path: str, query: str, headers: Environ) -> tuple[str, str, str]:
    """(operation, bucket, key) of one path-style S3 request."""
    parts = unquote(path).lstrip("/").split("/", 1)
    bucket = parts[0]
    key = parts[1] if len(parts) > 1 else ""
    q = parse_qs(query, keep_blank_values=True)
    if method == "HEAD":
        return ("HEAD", bucket, key)
    if method == "GET":
        if "uploads" in q:
            return ("MULTIPART_LIST", bucket, key)
        if "uploadId" in q:
            return ("MULTIPART_LIST_PARTS", bucket, key)
        return ("GET" if key else "LIST", bucket, key)
    if method == "PUT":
        copy = "HTTP_X_AMZ_COPY_SOURCE" in headers
        if "partNumber" in q:
            return ("MULTIPART_PART_COPY" if copy else "MULTIPART_PART", bucket, key)
        if copy:
            return ("COPY", bucket, key)
        return ("PUT" if key else "CREATE_BUCKET", bucket, key)
    if method == "POST":
        if "uploads" in q:
            return ("MULTIPART_INITIATE", bucket, key)
        if "uploadId" in q:
            return ("MULTIPART_COMPLETE", bucket, key)
        if "delete" in q:
            return ("DELETE_BULK", bucket, key)
        return ("POST", bucket, key)
    if method == "DELETE":
        if "uploadId" in q:
            return ("MULTIPART_ABORT", bucket, key)
        return ("DELETE" if key else "DELETE_BUCKET", bucket, key)
    return (method, bucket, key)


@dataclass
class RequestLog:
    """Every S3 request served, in order: operation, bucket, key and HTTP status; ``bytes``
    copied server-side (COPY) and the keys ``deleted`` (DELETE_BULK) where they apply."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, op: str, bucket: str, key: str, status: int, **extra: Any) -> None:
        entry = {"op": op, "bucket": bucket, "key": key, "status": status, **extra}
        with self.lock:
            self.entries.append(entry)

    def since(self, index: int) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.entries[index:])


#: The operations whose answers, once lost, make reads of their key fail (``fail_read_back``).
_WRITES = frozenset({"PUT", "COPY", "MULTIPART_COMPLETE"})
_READS = frozenset({"GET", "HEAD"})


class LostResponses:
    """Which answers to lose: the next ``count`` requests whose ``"<OP> <bucket>/<key>"`` (the
    operation as :func:`classify` names it) matches ``pattern`` (a regular expression, searched).
    Each such subject loses one answer only, so the client's resend of it is answered. With
    ``fail_read_back``, every read of a key whose write lost its answer fails too (until armed
    again), so the writer cannot learn by reading whether its write landed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pattern: re.Pattern[str] | None = None
        self._remaining = 0
        self._fail_read_back = False
        self.lost: list[str] = []
        self.refused: list[str] = []

    def arm(self, pattern: str, count: int = 1, fail_read_back: bool = False) -> None:
        """Loses the next ``count`` matching answers; ``count = 0`` disarms (read-backs too)."""
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            raise ValueError(f"--lose-response {pattern!r} is not a regular expression: {e}") from e
        if count < 0:
            raise ValueError(f"the number of answers to lose must be 0 or more, not {count}")
        with self._lock:
            self._pattern, self._remaining, self.lost = compiled, count, []
            self._fail_read_back, self.refused = fail_read_back and count > 0, []

    def refuses(self, op: str, bucket: str, key: str) -> bool:
        """Whether to fail this read: its key's write lost its answer, and read-backs fail."""
        if op not in _READS:
            return False
        with self._lock:
            if not self._fail_read_back or not any(
                s == f"{w} {bucket}/{key}" for s in self.lost for w in _WRITES
            ):
                return False
            self.refused.append(f"{op} {bucket}/{key}")
            return True

    def take(self, op: str, bucket: str, key: str) -> bool:
        """Whether to lose the answer to this request (counts it as lost if so)."""
        subject = f"{op} {bucket}/{key}"
        with self._lock:
            if self._remaining <= 0 or self._pattern is None or not self._pattern.search(subject):
                return False
            if subject in self.lost:  # the resend of a request whose answer was lost
                return False
            self._remaining -= 1
            self.lost.append(subject)
            return True

    def state(self) -> dict[str, Any]:
        """The armed pattern, how many answers it will still lose, what it lost since armed,
        and the reads it failed since then."""
        with self._lock:
            pattern = self._pattern.pattern if self._pattern is not None else None
            return {
                "pattern": pattern,
                "remaining": self._remaining,
                "failReadBack": self._fail_read_back,
                "lost": list(self.lost),
                "refused": list(self.refused),
            }


class S3Front:
    """WSGI middleware in front of moto: counting, atomic preconditions, optional lying, lost
    answers."""

    def __init__(
        self,
        app: WsgiApp,
        *,
        ignore_if_none_match: bool = False,
        latency: LatencyModel | None = None,
    ) -> None:
        self.app = app
        self.ignore_if_none_match = ignore_if_none_match
        self.latency = latency
        self.lose = LostResponses()
        self.log = RequestLog()
        self._preconditions = threading.Lock()
        # One lock per object, held while moto serves a request that reads or replaces it: moto
        # closes a replaced object's buffer at once, so a GET racing a PUT of the same key would
        # fail (500) or return a mix; S3 serves the old object or the new one, whole.
        self._objects: dict[str, threading.Lock] = {}
        self._objects_lock = threading.Lock()
        # Object sizes seen on the way in, for the per-byte cost of a server-side copy.
        self._sizes: dict[str, int] = {}
        self._part_sizes: dict[str, int] = {}

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(REQUESTS_PATH):
            return self._serve_log(environ, start_response)
        if path.startswith(FAULTS_PATH):
            return self._serve_faults(environ, start_response)
        op, bucket, key = classify(
            environ["REQUEST_METHOD"], path, environ.get("QUERY_STRING", ""), environ
        )
        status: list[int] = [0]

        def recording_start(status_line: str, headers: Any, *rest: Any) -> Any:
            status[0] = int(status_line.split(" ", 1)[0])
            return start_response(status_line, headers, *rest)

        if self.lose.refuses(op, bucket, key):
            self.log.add(op, bucket, key, 500, refused=True)
            return _s3_error(start_response, "InternalError", "read-back failed on purpose")
        extra = self._measure(op, bucket, key, environ)
        if self.latency is not None:
            self.latency.apply(op, int(extra.get("bytes", 0)))
        conditional = "HTTP_IF_NONE_MATCH" in environ or "HTTP_IF_MATCH" in environ
        if self.ignore_if_none_match:
            environ.pop("HTTP_IF_NONE_MATCH", None)
        with contextlib.ExitStack() as held:
            if conditional and environ["REQUEST_METHOD"] in ("PUT", "POST"):
                held.enter_context(self._preconditions)
            for name in self._objects_of(op, bucket, key, environ, extra):
                held.enter_context(self._object_lock(name))
            body = list(self.app(environ, recording_start))
        if op == "LIST":
            # what a LIST asked for (its key is empty), so counts can be split by area
            prefix = parse_qs(environ.get("QUERY_STRING", "")).get("prefix", [""])[0]
            if prefix:
                extra["prefix"] = prefix
        if self.lose.take(op, bucket, key):
            self.log.add(op, bucket, key, status[0], lost=True, **extra)
            _drop_connection(environ)
        self.log.add(op, bucket, key, status[0], **extra)
        return body

    def _objects_of(
        self, op: str, bucket: str, key: str, environ: Environ, extra: dict[str, Any]
    ) -> list[str]:
        """The objects ``op`` reads or replaces (``bucket/key``), in one order for every request
        (no two requests wait on each other's locks)."""
        names: set[str] = set()
        if op in ("GET", "HEAD", "PUT", "DELETE", "COPY", "MULTIPART_COMPLETE"):
            names.add(f"{bucket}/{key}")
        if op == "COPY":
            names.add(unquote(environ.get("HTTP_X_AMZ_COPY_SOURCE", "")).lstrip("/").split("?")[0])
        if op == "DELETE_BULK":
            names.update(f"{bucket}/{k}" for k in extra.get("deleted", []))
        return sorted(names)

    def _object_lock(self, name: str) -> threading.Lock:
        with self._objects_lock:
            return self._objects.setdefault(name, threading.Lock())

    def _measure(self, op: str, bucket: str, key: str, environ: Environ) -> dict[str, Any]:
        """Bytes a COPY moves and keys a bulk DELETE names; remembers sizes written."""
        length = int(environ.get("CONTENT_LENGTH") or 0)
        q = parse_qs(environ.get("QUERY_STRING", ""))
        if op == "PUT":
            self._sizes[f"{bucket}/{key}"] = length
        elif op == "MULTIPART_PART":
            upload = q.get("uploadId", [""])[0]
            self._part_sizes[upload] = self._part_sizes.get(upload, 0) + length
        elif op == "MULTIPART_COMPLETE":
            self._sizes[f"{bucket}/{key}"] = self._part_sizes.pop(q.get("uploadId", [""])[0], 0)
        elif op in ("COPY", "MULTIPART_PART_COPY"):
            source = unquote(environ.get("HTTP_X_AMZ_COPY_SOURCE", "")).lstrip("/").split("?")[0]
            size = self._sizes.get(source, 0)
            span = environ.get("HTTP_X_AMZ_COPY_SOURCE_RANGE", "")  # "bytes=first-last"
            if span.startswith("bytes=") and "-" in span:
                first, last = span[len("bytes=") :].split("-", 1)
                size = int(last) - int(first) + 1
            if op == "COPY":
                self._sizes[f"{bucket}/{key}"] = size
            return {"bytes": size}
        elif op == "DELETE_BULK":
            body = environ["wsgi.input"].read(length) if length else b""
            environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again
            return {"deleted": [unescape(k.decode()) for k in _KEY.findall(body)]}
        return {}

    def _serve_faults(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        """``POST ?lose-response=PATTERN&count=N[&fail-read-back=1]`` arms lost answers;
        ``GET`` shows the state."""
        if environ["REQUEST_METHOD"] == "POST":
            q = parse_qs(environ.get("QUERY_STRING", ""))
            try:
                self.lose.arm(
                    q.get("lose-response", [""])[0],
                    int(q.get("count", ["1"])[0]),
                    q.get("fail-read-back", ["0"])[0] in ("1", "true"),
                )
            except ValueError as e:
                return _json(start_response, {"error": str(e)}, "400 Bad Request")
        return _json(start_response, self.lose.state())

    def _serve_log(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        q = parse_qs(environ.get("QUERY_STRING", ""))
        since = int(q.get("since", ["0"])[0])
        entries = self.log.since(since)
        payload = {
            "next": since + len(entries),
            "counts": dict(Counter(e["op"] for e in entries)),
            "requests": entries,
        }
        return _json(start_response, payload)


def _json(start_response: StartResponse, payload: Any, status: str = "200 OK") -> list[bytes]:
    data = json.dumps(payload).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    )
    return [data]


def _s3_error(start_response: StartResponse, code: str, message: str) -> list[bytes]:
    data = (
        f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
        f"<Message>{message}</Message></Error>"
    ).encode()
    start_response(
        "500 Internal Server Error",
        [("Content-Type", "application/xml"), ("Content-Length", str(len(data)))],
    )
    return [data]


class _ResponseLost(ConnectionError):
    """Raised after the connection was closed on purpose: the server drops the request."""


def _drop_connection(environ: Environ) -> None:
    """Closes the client's connection before any byte of the answer is sent. The request has
    been served, so what it did stays done; the client sees the connection end, as when a
    network fails after the request arrived."""
    import socket

    sock = environ.get("werkzeug.socket")
    if sock is None:  # pragma: no cover - another WSGI server
        raise RuntimeError("losing an answer needs werkzeug's server (environ['werkzeug.socket'])")
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
    raise _ResponseLost("answer dropped on purpose (lose-response)")


class LocalS3:
    """moto's S3 server on loopback in a background thread, behind :class:`S3Front`."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        ignore_if_none_match: bool = False,
        latency: LatencyModel | None = None,
        lose_response: str | None = None,
        lose_count: int = 1,
        fail_read_back: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.ignore_if_none_match = ignore_if_none_match
        self.latency = latency
        self.lose_response = lose_response
        self.lose_count = lose_count
        self.fail_read_back = fail_read_back
        self.front: S3Front | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> LocalS3:
        try:
            from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
            from werkzeug.serving import make_server
        except ImportError as e:  # pragma: no cover - depends on the install
            raise RuntimeError(
                "the local S3 endpoint needs moto's server: pip install 'txcommit[local]'"
            ) from e

        class QuietHandler(MotoRequestHandler):
            def log_request(self, *args: Any, **kwargs: Any) -> None:
                pass  # one line per request drowns the test output; the log has them all

        # moto's S3 app itself, not its dispatcher: the dispatcher picks a service for every
        # request by listing moto's package directory and matching hundreds of URL patterns,
        # under one lock (a fifth of the endpoint's CPU, and every request waits in line).
        self.front = S3Front(
            create_backend_app("s3"),
            ignore_if_none_match=self.ignore_if_none_match,
            latency=self.latency,
        )
        if self.lose_response is not None:
            self.front.lose.arm(self.lose_response, self.lose_count, self.fail_read_back)
        self._server = make_server(
            self.host, self.port, self.front, threaded=True, request_handler=QuietHandler
        )
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="local-s3", daemon=True
        )
        self._thread.start()
        return self

    def create_bucket(self, name: str) -> None:
        import urllib.request

        req = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def __enter__(self) -> LocalS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def lose_responses(
    endpoint: str, pattern: str, count: int = 1, fail_read_back: bool = False
) -> dict[str, Any]:
    """Arms a running LocalS3 to lose the answers to the next ``count`` requests matching
    ``pattern`` (see :class:`LostResponses`); returns the fault state."""
    import urllib.parse
    import urllib.request

    query = urllib.parse.urlencode(
        {"lose-response": pattern, "count": count, "fail-read-back": int(fail_read_back)}
    )
    req = urllib.request.Request(f"{endpoint}{FAULTS_PATH}?{query}", method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        result: dict[str, Any] = json.loads(r.read())
        return result


def fault_state(endpoint: str) -> dict[str, Any]:
    """The fault state of a running LocalS3 (see :meth:`LostResponses.state`)."""
    import urllib.request

    with urllib.request.urlopen(f"{endpoint}{FAULTS_PATH}", timeout=30) as r:
        result: dict[str, Any] = json.loads(r.read())
        return result


def fetch_requests(endpoint: str, since: int = 0) -> dict[str, Any]:
    """The request log of a running LocalS3 (counts by operation, and every request)."""
    import urllib.request

    with urllib.request.urlopen(f"{endpoint}{REQUESTS_PATH}?since={since}", timeout=30) as r:
        result: dict[str, Any] = json.loads(r.read())
        return result


def _start(bucket: str) -> tuple[LocalS3, dict[str, str]]:
    s3 = LocalS3().start()
    s3.create_bucket(bucket)
    return s3, s3a_confs(s3.endpoint)


LOCAL = LocalEmulator(
    start=_start,
    banner=lambda s3, bucket: (
        f"local S3 (moto) at {s3.endpoint}, bucket s3a://{bucket}/ (any credentials)"
    ),
)


def main(argv: list[str] | None = None) -> int:
    from txcommit.devkit.latency_model import MODELS, by_name

    parser = argparse.ArgumentParser(
        prog="txcommit local-s3",
        description="Run a local S3 endpoint (moto) on loopback, counting requests by type.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--bucket", action="append", default=[], help="create this bucket")
    parser.add_argument(
        "--ignore-if-none-match",
        action="store_true",
        help="behave like a store that ignores If-None-Match (for testing detection)",
    )
    parser.add_argument(
        "--lose-response",
        metavar="PATTERN",
        help="forward the first request whose '<OP> <bucket>/<key>' matches this regular "
        "expression (e.g. 'PUT .*/_txcommit/commits/'), then drop the connection without "
        "answering, so the client retries a request that took effect",
    )
    parser.add_argument(
        "--lose-count",
        type=int,
        default=1,
        help="how many matching answers to lose (default 1)",
    )
    parser.add_argument(
        "--fail-read-back",
        action="store_true",
        help="with --lose-response: also fail (500) every read of a key whose write lost its "
        "answer, so the writer cannot read back whether it landed (txcommit's commit then "
        "reports CommitOutcomeUnknownError)",
    )
    parser.add_argument(
        "--latency-model",
        choices=MODELS,
        default="none",
        help="charge each request what it costs on real S3: 's3' = the documented model "
        "(per-operation latency, per-byte cost of server-side copies; docs/benchmarks.md); "
        "default none (moto's own speed)",
    )
    parser.add_argument(
        "--latency-scale",
        type=float,
        default=1.0,
        help="multiply every modelled latency by this factor (default 1.0)",
    )
    args = parser.parse_args(argv)
    s3 = LocalS3(
        args.host,
        args.port,
        ignore_if_none_match=args.ignore_if_none_match,
        latency=by_name(args.latency_model, args.latency_scale),
        lose_response=args.lose_response,
        lose_count=args.lose_count,
        fail_read_back=args.fail_read_back,
    ).start()
    for bucket in args.bucket:
        s3.create_bucket(bucket)
    print(f"txcommit: local S3 ready at {s3.endpoint} (request log: {REQUESTS_PATH})", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        s3.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
