"""A model API that misbehaves on purpose: raw bytes on a loopback socket, no HTTP library in between.

    with HostileEndpoint(answer) as endpoint:      # or the `hostile_endpoint` fixture (tests/plugins/servers.py)
        endpoint.url                               # http://127.0.0.1:PORT
        endpoint.requests                          # each request's bytes (head and body), in arrival order

`answer(conn, request)` writes whatever it likes on the connected socket (`conn.sendall(...)`), as slowly or as
much as it likes, then returns; the connection is closed after it. A `bytes` answer is sent as it is. A test stops
an endless answer by bounding it (a count, a size) or by `endpoint.stopped`, which is set when the endpoint closes.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Self

Answer = Callable[[socket.socket, bytes], None] | bytes


class HostileEndpoint:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.stopped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def start(self) -> Self:
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()
        return self

    def stop(self) -> None:
        """Stop accepting, and only then free the port's descriptor: closing the listener under a thread blocked
        in `accept()` left the thread waiting on it for the rest of the run, and a thread about to call `accept()`
        on its number could take the next test's server's connections (answered with this test's hostile bytes:
        another test's request hung or read "nested more than 110 deep")."""
        self.stopped.set()
        shut_listener(self._listener, getattr(self, "_acceptor", None))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                request = _read_request(conn)
                self.requests.append(request)
                if isinstance(self.answer, bytes):
                    conn.sendall(self.answer)
                else:
                    self.answer(conn, request)
            except OSError:
                pass  # the client hung up: what a test wants from a hostile answer


def _read_request(conn: socket.socket) -> bytes:
    """The request's head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return data
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return head + b"\r\n\r\n" + body


def http_answer(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    """One HTTP/1.1 answer's bytes, with Content-Length and Connection: close unless `headers` say otherwise."""
    fields = {"Content-Length": str(len(body)), "Connection": "close", **headers}
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return head.encode("latin-1") + body


def shut_listener(listener: socket.socket, acceptor: threading.Thread | None) -> None:
    """Wake the thread blocked in `listener.accept()` (shutdown makes it fail at once on Linux), wait for it to
    leave, then close the listener: its descriptor's number is never reused under a thread still accepting."""
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    if acceptor is not None and acceptor is not threading.current_thread():
        acceptor.join(5)
    listener.close()
