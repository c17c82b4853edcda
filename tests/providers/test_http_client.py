"""The stdlib HTTP client against a server that behaves like the real APIs: chunked SSE over keep-alive."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evo_agent.providers.http_client import Client, StatusError


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    connections = 0
    hold: threading.Event

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("fail"):
            data = b'{"error": {"type": "invalid_request_error", "message": "bad"}}'
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        # events split across chunks at awkward places, CRLF line ends, a comment, a multi-line data field
        self._chunk(b"event: one\r\ndata: {\"n\"")
        self._chunk(b": 1}\r\n\r\n: keep-alive comment\n\nevent: two\ndata: line a\ndata: line b\n\n")
        if body.get("hang"):
            self.server.hold.wait(30)
        self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


@pytest.fixture
def server():
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.hold = threading.Event()
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True).start()  # shutdown waits one
    yield httpd
    httpd.hold.set()
    httpd.shutdown()
    httpd.server_close()


def test_chunked_events_are_parsed_and_the_connection_is_reused(server):
    client = Client(f"http://127.0.0.1:{server.server_address[1]}", max_retries=0)
    for _ in range(3):
        events = list(client.post("/v1/x", b"{}").events())
        assert events == [("one", '{"n": 1}'), ("two", "line a\nline b"), ("message", "[DONE]")]
    assert server.connections == 1  # keep-alive: one connection for three requests


def test_an_error_answer_leaves_the_client_usable(server):
    client = Client(f"http://127.0.0.1:{server.server_address[1]}", max_retries=0)
    with pytest.raises(StatusError) as info:
        client.post("/v1/x", b'{"fail": true}')
    assert info.value.status == 400 and info.value.body["error"]["message"] == "bad"
    assert [name for name, _ in client.post("/v1/x", b"{}").events()] == ["one", "two", "message"]


def test_close_from_another_thread_ends_a_blocked_read(server):
    client = Client(f"http://127.0.0.1:{server.server_address[1]}", max_retries=0)
    response = client.post("/v1/x", b'{"hang": true}')
    seen = []
    done = threading.Event()

    def read() -> None:
        for event in response.events():
            seen.append(event[0])
            if len(seen) == 2:
                threading.Timer(0.05, response.close).start()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(10), "close() did not end the blocked read"
    assert seen == ["one", "two"]


def test_a_warmed_connection_serves_the_first_request(server):
    from tests.helpers import wait_for

    client = Client(f"http://127.0.0.1:{server.server_address[1]}", max_retries=0)
    client.warm()
    wait_for(lambda: any(client._idle.values()), 10, "the background connection")
    assert [name for name, _ in client.post("/v1/x", b"{}").events()] == ["one", "two", "message"]
    assert server.connections == 1


def test_warming_an_unreachable_server_is_silent_and_the_request_says_why():
    import socket

    from evo_agent.providers.http_client import ConnectError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = Client(f"http://127.0.0.1:{port}", max_retries=0)
    client.warm()
    with pytest.raises(ConnectError, match="connection refused"):
        client.post("/v1/x", b"{}")


def test_a_proxy_url_without_a_host_is_one_clear_connect_error(monkeypatch):
    from evo_agent.providers.http_client import ConnectError

    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://:3128")
    monkeypatch.setenv("http_proxy", "http://:3128")
    client = Client("http://api.example.com", max_retries=0)
    with pytest.raises(ConnectError, match="names no host"):
        client.post("/v1/x", b"{}")
