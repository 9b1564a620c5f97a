"""A TCP proxy that loses answers: the request reaches the store and takes effect, the answer
never reaches the client (its connection is closed instead).

It stands between a client and any store that speaks a request/answer protocol over TCP: an
HTTP emulator (fake-gcs-server, Azurite) or an HDFS NameNode's RPC port. Armed with a pattern,
it watches what clients send; once a request matches, it forwards it whole and drops that
connection when the store's answer comes back, as a network that fails at the worst moment
does. The client's library then retries (or reports an error) exactly as it would against the
real service, so a test sees the product's own handling of an unknown outcome.

``(?s)`` patterns match raw bytes of the request stream (an HTTP request line and body, or a
Hadoop RPC call, whose method name and paths are plain UTF-8 in it).
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from dataclasses import dataclass, field

#: An HTTP interim answer ("100 Continue"): the request's body has not been sent yet, so the
#: request has not taken effect; it is forwarded, and the final answer is the one lost.
_INTERIM = re.compile(rb"^HTTP/1\.[01] 1\d\d [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n")
#: How much of a connection's recent request bytes a pattern is matched against.
_WINDOW = 256 * 1024


@dataclass
class _Armed:
    pattern: re.Pattern[bytes] | None = None
    remaining: int = 0
    #: Requests sent before the proxy was armed never match: each arming is a new epoch.
    epoch: int = 0
    lost: list[str] = field(default_factory=list)


class LossyProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target_host:target_port``; see the module doc."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._armed = _Armed()
        self._closed = False
        threading.Thread(target=self._accept, name="lossy-proxy", daemon=True).start()

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    def lose(self, pattern: bytes, count: int = 1) -> None:
        """Lose the answers to the next ``count`` requests matching ``pattern`` (a bytes regular
        expression); forgets what was lost before."""
        with self._lock:
            self._armed = _Armed(re.compile(pattern, re.DOTALL), count, self._armed.epoch + 1)

    def lost(self) -> list[str]:
        """What each lost request matched (decoded, for messages), and disarms the proxy."""
        with self._lock:
            lost = list(self._armed.lost)
            self._armed = _Armed(epoch=self._armed.epoch + 1)
            return lost

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def __enter__(self) -> LossyProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ forwarding
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=30)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            _Connection(self, client, upstream).start()

    def epoch(self) -> int:
        with self._lock:
            return self._armed.epoch

    def _take(self, window: bytes, epoch: int) -> str | None:
        """The matched text if ``window`` (sent since ``epoch`` began) holds a request whose
        answer is to be lost."""
        with self._lock:
            armed = self._armed
            if armed.pattern is None or armed.remaining <= 0 or armed.epoch != epoch:
                return None
            found = armed.pattern.search(window)
            if found is None:
                return None
            armed.remaining -= 1
            text = found.group(0)[:300].decode("utf-8", "replace")
            armed.lost.append(text)
            return text


class _Connection:
    def __init__(self, proxy: LossyProxy, client: socket.socket, upstream: socket.socket) -> None:
        self.proxy, self.client, self.upstream = proxy, client, upstream
        self.window = b""
        self.epoch = proxy.epoch()
        #: Set once a request of this connection matched: its answer is not forwarded.
        self.doomed = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._requests, daemon=True).start()
        threading.Thread(target=self._answers, daemon=True).start()

    def _requests(self) -> None:
        try:
            while data := self.client.recv(65536):
                # Doomed before the bytes go on, so the answer cannot overtake the flag.
                if not self.doomed.is_set():
                    epoch = self.proxy.epoch()
                    if epoch != self.epoch:  # armed anew: what was sent before does not count
                        self.window, self.epoch = b"", epoch
                    self.window = (self.window + data)[-_WINDOW:]
                    if self.proxy._take(self.window, epoch) is not None:
                        self.window = b""
                        self.doomed.set()
                self.upstream.sendall(data)
        except OSError:
            pass
        finally:
            _shut(self.upstream)

    def _answers(self) -> None:
        try:
            while data := self.upstream.recv(65536):
                if self.doomed.is_set():
                    interim = _INTERIM.match(data)
                    if interim is None:
                        break  # the answer to the doomed request: lost
                    self.client.sendall(interim.group(0))
                    data = data[interim.end() :]
                    if not data:
                        continue
                    break
                self.client.sendall(data)
        except OSError:
            pass
        finally:
            _shut(self.client)
            _shut(self.upstream)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
