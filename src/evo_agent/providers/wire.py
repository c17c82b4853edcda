"""HTTP/1.1 on a socket: the part of `http.client` that http_client.py uses, without its imports.

`import http.client` costs ~125 M instructions (about a quarter of a `-p hi` run): it imports the
`email` package to parse headers and `ssl` whether or not the URL is https. Both model APIs need
one kind of exchange — a POST with a body, then a status line, headers and a body framed by
Content-Length, chunked transfer coding or the end of the connection — so this module speaks
exactly that, and `ssl` is imported by the caller only for https.

    conn = Connection("api.example.com", 443, timeout=10, tls=context)
    conn.connect()                      # TCP, the proxy's CONNECT tunnel if any, then TLS
    conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json"})
    response = conn.getresponse()       # status, reason, getheaders(), readline(), read(), will_close

Failures are OSErrors (refused, reset, timed out, TLS) or `ProtocolError` (a ValueError: the
server did not speak HTTP/1.x); `RemoteDisconnected` (a ConnectionResetError) is a server that
closed the connection before answering, as a kept-alive one may.

Plain HTTP is spoken on `_socket`'s socket, the C half of `socket`: the `socket` module (with the
`selectors` and the enums it builds, ~14 M instructions: 6% of `-p hi` to its first request) is
imported only for TLS or a proxy's tunnel, where `ssl` loads it anyway (issue #30).
"""

from __future__ import annotations

import _socket
import io
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    import socket
    from typing import IO, Any

MAX_LINE = 65536  # a status or header line longer than this is not HTTP we expect
MAX_HEADERS = 200
MAX_INTERIM = 32  # interim (1xx) answers before the real one: an endless stream of them is not an answer
PIECE = 1 << 20  # a body is read this much at a time: a declared size is never allocated before it arrives
_HEX = frozenset(b"0123456789abcdefABCDEF")


class ProtocolError(ValueError):
    """The server's answer is not HTTP/1.x as this client reads it."""


class TunnelRefused(OSError):
    """The proxy answered the CONNECT with another status than 200 (`status`: 407 wants credentials)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"Tunnel connection failed: {status} {reason}".strip())
        self.status = status


class RemoteDisconnected(ConnectionResetError):
    """The connection closed before a status line arrived (an idle keep-alive connection that timed out)."""


def _host_header(host: str, port: int, default_port: int) -> str:
    name = f"[{host}]" if ":" in host else host  # an IPv6 literal
    return name if port == default_port else f"{name}:{port}"


class Connection:
    """One TCP connection to `host:port` (a proxy's, when `tunnel` names the real target), TLS when `tls` is set."""

    def __init__(self, host: str, port: int, *, timeout: float, tls: Any = None,
                 tunnel: tuple[str, int, dict[str, str]] | None = None) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.tls = tls  # an ssl.SSLContext, or None for plain HTTP
        self.tunnel = tunnel  # (target host, target port, CONNECT headers): HTTPS through a proxy
        self.sock: Any = None  # a _socket.socket for plain HTTP (see connect)
        self._fp: Any = None
        self._reader: _SocketReader | None = None

    @property
    def _target(self) -> tuple[str, int]:
        return (self.tunnel[0], self.tunnel[1]) if self.tunnel else (self.host, self.port)

    def connect(self) -> Any:
        """The connected socket: a `_socket.socket` for plain HTTP, a `socket.socket` (an SSLSocket) otherwise."""
        # An ASCII host name goes to getaddrinfo as bytes: a str would load the idna codec (~2 ms) first.
        host: str | bytes = self.host.encode("ascii") if self.host.isascii() else self.host
        if self.tunnel is None and self.tls is None:  # plain HTTP: no `socket` module (see above)
            raw = open_tcp(host, self.port, self.timeout)
            self.sock = raw  # a _socket.socket: what socket.socket adds is not used
            self._reader = _SocketReader(raw)
            self._fp = io.BufferedReader(self._reader)
            return raw
        import socket

        sock = socket.create_connection((host, self.port), self.timeout)  # type: ignore[arg-type]  # getaddrinfo takes bytes
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tunnel is not None:
                self._open_tunnel(sock, *self.tunnel)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self._target[0])
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self._reader = _SocketReader(sock)
        self._fp = io.BufferedReader(self._reader)
        return sock

    def _open_tunnel(self, sock: socket.socket, host: str, port: int, headers: dict[str, str]) -> None:
        authority = _host_header(host, port, -1)
        lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        reader = _SocketReader(sock)  # the proxy's answer, whole within the connect timeout (not a byte at a time)
        reader.deadline, reader.usual = time.monotonic() + self.timeout, self.timeout
        fp = io.BufferedReader(reader)
        try:
            _version, status, reason = _status_line(fp)
            _headers(fp)
        finally:
            reader.deadline = None
            sock.settimeout(self.timeout)
            fp.detach()  # the socket stays open: the reader only borrowed it
        if status != 200:
            raise TunnelRefused(status, reason)

    def request(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> None:
        sock = self.sock if self.sock is not None else self.connect()
        lines = [f"{method} {target} HTTP/1.1"]
        if not any(k.lower() == "host" for k in headers):
            lines.append(f"Host: {self._authority(target)}")
        lines += [f"{k}: {v}" for k, v in headers.items()]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        sock.sendall(head + body if len(body) < 65536 else head)
        if len(body) >= 65536:
            sock.sendall(body)

    def _authority(self, target: str) -> str:
        """The Host header: the URL's own for an absolute target (plain HTTP through a proxy), else ours."""
        if target.startswith(("http://", "https://")):
            return target.split("://", 1)[1].split("/", 1)[0]
        host, port = self._target
        return _host_header(host, port, 443 if self.tls is not None else 80)

    def getresponse(self, deadline: float | None = None) -> Response:
        """The answer's status and headers; with `deadline` (a `time.monotonic()`), they must all have arrived by
        then (TimeoutError): a read timeout alone lets a server send a byte a second for ever."""
        if self._fp is None or self._reader is None:
            raise ProtocolError("no request was sent")
        self.read_deadline(deadline)
        try:
            return read_response(self._fp)
        finally:
            self.read_deadline(None)

    def read_deadline(self, when: float | None) -> None:
        """No read of this connection waits past `when` (a `time.monotonic()`; None: each read its timeout)."""
        reader, sock = self._reader, self.sock
        if reader is None or sock is None:
            return
        if when is not None and reader.deadline is None:
            reader.usual = sock.gettimeout()
        elif when is None and reader.deadline is not None:
            sock.settimeout(reader.usual)
        reader.deadline = when

    def close(self) -> None:
        fp, sock, self._fp, self.sock = self._fp, self.sock, None, None
        for thing in (fp, sock):
            if thing is not None:
                try:
                    thing.close()
                except OSError:
                    pass


def open_tcp(host: str | bytes, port: int, timeout: float | None) -> Any:
    """A connected `_socket.socket` with TCP_NODELAY: `socket.create_connection` without the module.

    Each address getaddrinfo gives is tried in turn; the last one's error is raised, as
    create_connection does (a name that does not resolve raises `_socket.gaierror`, which is
    `socket.gaierror`; a timeout `TimeoutError`, which is `socket.timeout`).
    """
    error: OSError | None = None
    for family, kind, proto, _name, address in _socket.getaddrinfo(host, port, 0, _socket.SOCK_STREAM):
        sock = None
        try:
            sock = _socket.socket(family, kind, proto)
            sock.settimeout(timeout)
            sock.connect(address)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            return sock
        except OSError as exc:
            error = exc
            if sock is not None:
                sock.close()
    if error is not None:
        raise error
    raise OSError("getaddrinfo returns an empty list")


class _SocketReader(io.RawIOBase):
    """What `socket.makefile("rb")` buffers (socket.SocketIO), on a `_socket.socket`: the connection's
    reader. Closing it leaves the socket open, as makefile's does; the Connection closes both."""

    def __init__(self, sock: Any) -> None:
        super().__init__()
        self._sock = sock
        self.deadline: float | None = None  # while set, no read waits past it (Connection.read_deadline)
        self.usual: float | None = None  # the socket's own timeout meanwhile

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._checkClosed()
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the answer did not arrive in time")
            self._sock.settimeout(left if self.usual is None else min(left, self.usual))
        count: int = self._sock.recv_into(buffer)
        return count

    def fileno(self) -> int:
        self._checkClosed()
        fd: int = self._sock.fileno()
        return fd


def read_response(fp: Any) -> Response:
    """The answer read from `fp` (a buffered binary file: the socket's), interim 1xx answers skipped.

    Its body is read through the Response; tests/providers/test_wire_against_h11.py reads the same
    bytes with h11 too.
    """
    for _ in range(MAX_INTERIM + 1):
        version, status, reason = _status_line(fp)
        headers = _headers(fp)
        if not 100 <= status < 200 or status == 101:
            return Response(fp, version, status, reason, headers)
    raise ProtocolError(f"more than {MAX_INTERIM} interim (1xx) answers")


def _readline(fp: Any) -> bytes:
    line: bytes = fp.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise ProtocolError("a header line is too long")
    return line


def _status_line(fp: Any) -> tuple[str, int, str]:
    line = _readline(fp)
    if not line:
        raise RemoteDisconnected("Remote end closed connection without response")
    text = line.decode("latin-1").rstrip("\r\n")
    version, _, rest = text.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or len(code) != 3 or not (code.isascii() and code.isdigit()):
        raise ProtocolError(f"not an HTTP/1.x status line: {text[:80]!r}")
    return version, int(code), reason.strip()


def _headers(fp: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    while True:
        line = _readline(fp)
        if line in (b"\r\n", b"\n", b""):
            return out
        if len(out) >= MAX_HEADERS:
            raise ProtocolError("too many headers")
        text = line.decode("latin-1").rstrip("\r\n")
        if text[:1] in (" ", "\t") and out:  # an obsolete folded continuation line
            name, value = out[-1]
            out[-1] = (name, value + " " + text.strip())
            continue
        name, sep, value = text.partition(":")
        if not sep:
            raise ProtocolError(f"not a header line: {text[:80]!r}")
        out.append((name.strip(), value.strip()))


class Response:
    """The answer being read; its body is framed by chunked coding, Content-Length or the connection's end."""

    def __init__(self, fp: Any, version: str, status: int, reason: str, headers: list[tuple[str, str]]) -> None:
        self._fp: IO[bytes] = fp  # the socket's buffered reader
        self.status, self.reason = status, reason
        self._headers = headers
        lowered = {k.lower(): v for k, v in headers}
        connection = lowered.get("connection", "").lower()
        self.chunked = "chunked" in lowered.get("transfer-encoding", "").lower()
        self._left: int | None = None  # bytes of the body still to read (None: up to the connection's end)
        self._chunk_left = 0  # chunked: bytes of the current chunk still to read
        if not self.chunked and "content-length" in lowered:
            length = lowered["content-length"]
            if not (length.isascii() and length.isdigit()):  # int() takes "-1", "+5", "1_0", " ٥"
                raise ProtocolError("a Content-Length that is not a number")
            self._left = int(length)
        if status in (204, 304):
            self._left = 0
        self._done = self._left == 0 and not self.chunked
        self.will_close = ("close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
                           or (not self.chunked and self._left is None))

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._headers)

    def _next_chunk(self) -> bool:
        """Move to the next chunk; False at the last (zero-size) one, whose trailers are read and dropped."""
        line = _readline(self._fp)
        if not line:
            raise ProtocolError("the connection ended inside a chunked body")
        digits = line.split(b";", 1)[0].strip()
        if not digits or len(digits) > 16 or not _HEX.issuperset(digits):  # int() takes "-1", "0x10", "1_0"
            raise ProtocolError("a chunk size that is not hexadecimal")
        size = int(digits, 16)
        if size == 0:
            _headers(self._fp)  # trailers, then the empty line
            self._done = True
            return False
        self._chunk_left = size
        return True

    def _end_chunk_data(self) -> None:
        self._fp.read(2)  # the CRLF after a chunk's data (not checked, as http.client does not)

    def readline(self, limit: int = -1) -> bytes:
        """The next line of the body (with its line end; the last one may have none); b"" at its end.

        With `limit` >= 0, at most `limit` bytes: a longer line comes in pieces (the caller decides when a line
        is too long; a server's line is never held whole before that)."""
        if self._done:
            return b""
        if not self.chunked:
            if self._left is None:
                return self._fp.readline(limit)
            line = self._fp.readline(self._left if limit < 0 else min(limit, self._left))  # never past the body
            if not line:
                raise ProtocolError("the connection ended before the body did")
            self._left -= len(line)
            self._done = self._left == 0
            return line
        parts: list[bytes] = []  # joined once: a line sent in one-byte chunks was copied again per chunk
        size, part = 0, b""
        while not part.endswith(b"\n") and (limit < 0 or size < limit):
            if self._chunk_left == 0 and not self._next_chunk():
                break
            want = self._chunk_left if limit < 0 else min(self._chunk_left, limit - size)
            part = self._fp.readline(want)
            if not part:
                raise ProtocolError("the connection ended inside a chunk")
            self._chunk_left -= len(part)
            if self._chunk_left == 0:
                self._end_chunk_data()
            parts.append(part)
            size += len(part)
        return b"".join(parts)

    def read(self, limit: int = -1) -> bytes:
        """The rest of the body; with `limit` >= 0, at most `limit` bytes of it (the rest stays unread)."""
        parts: list[bytes] = []
        got = 0
        while not self._done and (limit < 0 or got < limit):
            want = PIECE if limit < 0 else min(PIECE, limit - got)
            part = self._read_piece(want)
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def _read_piece(self, want: int) -> bytes:
        """Up to `want` bytes of the body (fewer at a chunk's or the body's end); b"" once it has ended."""
        if not self.chunked:
            if self._left is None:
                data = self._fp.read(want)  # up to the connection's end
                if not data:
                    self._done = True
                return data
            data = self._fp.read(min(want, self._left))
            if len(data) < min(want, self._left):
                raise ProtocolError("the connection ended before the body did")
            self._left -= len(data)
            self._done = self._left == 0
            return data
        if self._chunk_left == 0 and not self._next_chunk():
            return b""
        data = self._fp.read(min(want, self._chunk_left))
        if len(data) < min(want, self._chunk_left):
            raise ProtocolError("the connection ended inside a chunk")
        self._chunk_left -= len(data)
        if self._chunk_left == 0:
            self._end_chunk_data()
        return data


__all__ = ["Connection", "ProtocolError", "RemoteDisconnected", "Response", "TunnelRefused", "open_tcp",
           "read_response"]
