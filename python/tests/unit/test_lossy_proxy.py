"""The answer-losing proxy the end-to-end tests put in front of emulators and HDFS: a matching
request takes effect, its answer never arrives, everything else passes untouched."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from txcommit.devkit.lossy_proxy import LossyProxy


class _Store(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    created: list[str] = []

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Store.created.append(f"{self.path}={body.decode()}")
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        payload = ",".join(_Store.created).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[LossyProxy]:
    _Store.created = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with LossyProxy("127.0.0.1", server.server_address[1]) as p:
        yield p
    server.shutdown()


def put(proxy: LossyProxy, path: str, body: str, expect_continue: bool = False) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    headers = {"Expect": "100-continue"} if expect_continue else {}
    try:
        conn.request("PUT", path, body=body.encode(), headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_matching_request_takes_effect_and_its_answer_is_lost(proxy: LossyProxy) -> None:
    proxy.lose(rb"PUT /log/commits/[^ ]*", count=1)
    assert put(proxy, "/data/a", "1") == 201, "a request that does not match passes"
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        put(proxy, "/log/commits/t1.json", "r1")
    assert put(proxy, "/log/commits/t2.json", "r2") == 201, "only `count` answers are lost"
    assert proxy.lost() == ["PUT /log/commits/t1.json"]
    assert _Store.created == ["/data/a=1", "/log/commits/t1.json=r1", "/log/commits/t2.json=r2"]


def test_an_interim_answer_passes_and_the_final_one_is_lost(proxy: LossyProxy) -> None:
    # http.client does not wait for "100 Continue"; the store still answers it first.
    proxy.lose(rb"PUT /log/[^ ]*")
    with pytest.raises((ConnectionError, http.client.HTTPException)):
        put(proxy, "/log/x", "body", expect_continue=True)
    assert _Store.created == ["/log/x=body"]
    assert proxy.lost() == ["PUT /log/x"]
    assert put(proxy, "/log/y", "2") == 201, "disarmed by lost()"


def test_requests_sent_before_arming_never_match(proxy: LossyProxy) -> None:
    # One connection: a matching request, then (after arming) one that does not match.
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    try:
        conn.request("PUT", "/log/commits/t1.json", body=b"r1")
        assert conn.getresponse().read() == b""
        proxy.lose(rb"PUT /log/commits/[^ ]*")
        conn.request("PUT", "/data/b", body=b"2")
        assert conn.getresponse().status == 201, "the earlier request is not matched again"
    finally:
        conn.close()
    assert proxy.lost() == []
