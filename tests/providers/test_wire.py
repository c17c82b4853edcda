"""HTTP/1.1 on a socket (providers/wire.py) against servers that answer with exact bytes.

Each server is a real loopback socket that reads one request head (and its body) and writes
what the test scripted: the framings the APIs use (Content-Length, chunked with extensions and
trailers, the end of the connection), a 100 Continue before the answer, a proxy's CONNECT, TLS
with a certificate made for the test, and the failures a client must tell apart.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from evo_agent.providers.http_client import Client, ConnectError
from evo_agent.providers.wire import Connection, ProtocolError, RemoteDisconnected
from tests.hostile_endpoint import shut_listener


def _read_head(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            break
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += conn.recv(65536)
    return head + b"\r\n\r\n" + rest


class RawServer:
    """Answers each request with the next scripted bytes; `None` closes the connection without an answer."""

    def __init__(self, *answers: bytes | None, tls: ssl.SSLContext | None = None, proxy: bytes | None = None,
                 keep_open: bool = False) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.tls, self.proxy, self.keep_open = tls, proxy, keep_open
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.acceptor = threading.Thread(target=self._serve, daemon=True)
        self.acceptor.start()

    def _serve(self) -> None:
        while self.answers:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                if self.proxy is not None:  # a proxy: the CONNECT first, then the tunnel speaks to "the target"
                    self.requests.append(_read_head(conn))
                    conn.sendall(self.proxy)
                    if not self.proxy.startswith(b"HTTP/1.1 200"):
                        continue
                if self.tls is not None:
                    try:
                        conn = self.tls.wrap_socket(conn, server_side=True)
                    except (ssl.SSLError, OSError):
                        continue
                while self.answers:
                    head = _read_head(conn)
                    if not head:
                        break
                    self.requests.append(head)
                    answer = self.answers.pop(0)
                    if answer is None:
                        break
                    conn.sendall(answer)
                    if not self.keep_open:
                        break

    def close(self) -> None:
        shut_listener(self.sock, self.acceptor)  # a thread left in accept() took a later test's connections


@pytest.fixture
def servers():
    made: list[RawServer] = []

    def make(*answers: bytes | None, **kwargs) -> RawServer:
        made.append(RawServer(*answers, **kwargs))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _exchange(port: int, body: bytes = b"{}", **kwargs) -> tuple[Connection, object]:
    conn = Connection("127.0.0.1", port, timeout=10, **kwargs)
    conn.connect()
    conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json",
                                                "Content-Length": str(len(body))})
    return conn, conn.getresponse()


def test_content_length_keeps_the_connection_and_frames_the_body(servers):
    server = servers(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nX-Request-Id: r1\r\n\r\nline 1\nline2",
                     b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", keep_open=True)
    conn, response = _exchange(server.port, b'{"a": 1}')
    assert (response.status, response.reason, response.will_close) == (200, "OK", False)
    assert ("X-Request-Id", "r1") in response.getheaders()
    assert [response.readline(), response.readline(), response.readline()] == [b"line 1\n", b"line2", b""]
    conn.request("POST", "/v1/messages", b"{}", {"Content-Length": "2"})  # the same connection, kept alive
    again = conn.getresponse()
    assert (again.status, again.read()) == (201, b"ok")
    first = server.requests[0].decode()
    assert first.startswith("POST /v1/messages HTTP/1.1\r\n") and f"Host: 127.0.0.1:{server.port}\r\n" in first
    assert first.endswith('\r\n\r\n{"a": 1}')
    conn.close()


def test_chunked_bodies_with_extensions_and_trailers_read_whole_and_by_line(servers):
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"6;ext=1\r\nevent:\r\n7\r\n one\nda\r\n5\r\nta: x\r\n1\r\n\n\r\n0\r\nX-Trailer: t\r\n\r\n")
    server = servers(chunked, chunked, keep_open=True)
    conn, response = _exchange(server.port)
    assert response.will_close is False
    assert [response.readline() for _ in range(4)] == [b"event: one\n", b"data: x\n", b"", b""]
    conn.request("POST", "/v1/messages", b"{}", {"Content-Length": "2"})
    assert conn.getresponse().read() == b"event: one\ndata: x\n"
    conn.close()


def test_a_body_without_length_ends_with_the_connection_and_a_100_continue_is_skipped(servers):
    server = servers(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                     b"data: 1\n\ndata: 2\n\n")
    conn, response = _exchange(server.port)
    assert response.status == 200 and response.will_close is True
    assert response.read() == b"data: 1\n\ndata: 2\n\n"
    conn.close()


def test_a_closed_connection_and_a_server_that_is_not_http_are_told_apart(servers):
    server = servers(None, b"SSH-2.0-OpenSSH_9.6\r\n\r\n", keep_open=True)
    conn = Connection("127.0.0.1", server.port, timeout=10)
    conn.connect()
    conn.request("POST", "/", b"", {"Content-Length": "0"})
    with pytest.raises(RemoteDisconnected):
        conn.getresponse()
    conn.close()
    with pytest.raises(ProtocolError, match=r"not an HTTP/1\.x status line"):
        _exchange(server.port)


def test_https_through_a_proxy_tunnel_sends_connect_with_its_credentials(servers):
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    proxy = servers(answer, proxy=b"HTTP/1.1 200 Connection established\r\n\r\n")
    conn, response = _exchange(proxy.port, tunnel=("api.example.com", 443, {"Proxy-Authorization": "Basic eDp5"}))
    assert response.read() == b"ok"
    connect, request = proxy.requests[0].decode(), proxy.requests[1].decode()
    assert connect.startswith("CONNECT api.example.com:443 HTTP/1.1\r\n") and "Proxy-Authorization: Basic eDp5" in connect
    assert "Host: api.example.com:443\r\n" in request  # no TLS in this test: 443 is not plain HTTP's default port
    conn.close()
    refused = servers(answer, proxy=b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(OSError, match="Tunnel connection failed: 407 Proxy Authentication Required"):
        _exchange(refused.port, tunnel=("api.example.com", 443, {}))


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    where = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(where / "key.pem"),
                    "-out", str(where / "cert.pem")], check=True, capture_output=True, timeout=60)
    return where / "cert.pem", where / "key.pem"


def test_tls_verifies_the_certificate_and_names_the_host(servers, certificate):
    cert, key = certificate
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    server = servers(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", tls=server_side)
    trusting = ssl.create_default_context(cafile=str(cert))
    conn = Connection("localhost", server.port, timeout=10, tls=trusting)
    conn.connect()
    conn.request("POST", "/", b"", {"Content-Length": "0"})
    assert conn.getresponse().read() == b"ok"
    assert f"Host: localhost:{server.port}\r\n" in server.requests[0].decode()
    conn.close()
    # The client with the system's CA store does not trust it: one line, and no retry (it would not help).
    untrusted = servers(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", tls=server_side)
    with pytest.raises(ConnectError) as info:
        Client(f"https://localhost:{untrusted.port}", max_retries=0).post("/v1/messages", b"{}")
    assert info.value.tls and not info.value.retryable and "TLS certificate not trusted" in info.value.reason


def test_plain_http_through_a_proxy_names_the_url_and_its_host_and_long_lines_stay_whole(servers):
    long_line = b"data: " + b"x" * 200_000 + b"\n"
    body = long_line + b"\n"
    server = servers(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    conn = Connection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "http://api.example.com:8080/v1/messages", b"", {"Content-Length": "0"})
    response = conn.getresponse()
    assert [response.readline(), response.readline(), response.readline()] == [long_line, b"\n", b""]
    request = server.requests[0].decode()
    assert request.startswith("POST http://api.example.com:8080/v1/messages HTTP/1.1\r\n")
    assert "Host: api.example.com:8080\r\n" in request
    conn.close()
