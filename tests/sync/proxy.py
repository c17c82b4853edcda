"""A loopback TCP proxy the test controls: each connection forwards, then — after so many bytes — goes silent.

Silent means what a dead network path or a stopped server looks like from the client: the sockets stay
open (no reset, no FIN), nothing more is read or forwarded in either direction. Each connection counts
its own bytes; `rearm()` gives the connections made from then on new limits (a silent one stays silent),
`heal()` lets every connection flow again (a client's, by then closed, then ends its server side too).
"""

from __future__ import annotations

import socket
import threading
import time

from tests.hostile_endpoint import shut_listener


class _Link:
    def __init__(self, limits: dict[str, int | None]) -> None:
        self.limits = dict(limits)
        self.sent = {"up": 0, "down": 0}
        self.silent = False


class SilentProxy:
    def __init__(self, upstream_port: int, *, silent_after_up: int | None = None,
                 silent_after_down: int | None = None) -> None:
        self.upstream_port = upstream_port
        self.limits: dict[str, int | None] = {"up": silent_after_up, "down": silent_after_down}
        self.went_silent = threading.Event()
        self._healed = False
        self._lock = threading.Lock()
        self._closing = False
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = [self._listener]
        self.links: list[_Link] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def url(self, url: str) -> str:
        """`url` (to the real server's port) rewritten to go through the proxy."""
        return url.replace(f":{self.upstream_port}/", f":{self.port}/")

    def rearm(self, **limits: int) -> None:
        """Connections made from now on go silent after so many bytes (silent_after_up/down)."""
        with self._lock:
            self.limits = {"up": limits.get("silent_after_up"), "down": limits.get("silent_after_down")}
            self.went_silent.clear()

    def bytes_down(self) -> int:
        """Bytes the server sent to clients through this proxy so far (all connections)."""
        with self._lock:
            return sum(link.sent["down"] for link in self.links)

    def heal(self) -> None:
        with self._lock:
            self.limits = {"up": None, "down": None}
            self._healed = True

    def close(self) -> None:
        self._closing = True
        self.heal()
        shut_listener(self._listener, self._acceptor)  # before any number is freed (tests/hostile_endpoint.py)
        for s in self._sockets:
            try:
                s.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            self._sockets += [client, upstream]
            with self._lock:
                link = _Link(self.limits)
                self.links.append(link)
            for src, dst, way in ((client, upstream, "up"), (upstream, client, "down")):
                threading.Thread(target=self._pump, args=(link, src, dst, way), daemon=True).start()

    def _pump(self, link: _Link, src: socket.socket, dst: socket.socket, way: str) -> None:
        src.settimeout(0.05)
        while not self._closing:
            if link.silent and not self._healed:
                time.sleep(0.05)
                continue
            data = self._next(src, dst)
            if data is None:
                return
            if not data:
                continue
            with self._lock:
                limit = None if self._healed else link.limits[way]
                link.sent[way] += len(data)
                if limit is not None and link.sent[way] >= limit:
                    data = data[:max(0, len(data) - (link.sent[way] - limit))]  # the rest is held back
                    link.silent = True
                    self.went_silent.set()
            if not self._send(dst, data):
                return

    @staticmethod
    def _next(src: socket.socket, dst: socket.socket) -> bytes | None:
        """The next bytes from `src` (b"": none within its short timeout); None once `src` ended, `dst`'s writing
        side then shut, as the end travels on."""
        try:
            data = src.recv(16384)
        except TimeoutError:
            return b""
        except OSError:
            data = b""
        if data:
            return data
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        return None

    def _send(self, dst: socket.socket, data: bytes) -> bool:
        """Everything of `data` to `dst`, however long the other side takes to read it; False once it is gone."""
        view = memoryview(data)
        while view and not self._closing:
            try:
                view = view[dst.send(view):]
            except TimeoutError:  # the socket's short timeout (set for recv) also applies here: keep going
                continue
            except OSError:
                return False
        return True


class TrickleProxy(SilentProxy):
    """Forwards as SilentProxy does, except that after `fast` bytes from the server each connection hands the
    client one byte every `every` seconds: a server (or a path) that answers, but slowly enough never to be idle."""

    def __init__(self, upstream_port: int, *, fast: int, every: float = 0.25) -> None:
        super().__init__(upstream_port)
        self.fast, self.every = fast, every

    def _pump(self, link: _Link, src: socket.socket, dst: socket.socket, way: str) -> None:
        if way == "up":
            return super()._pump(link, src, dst, way)
        src.settimeout(0.05)
        while not self._closing:
            data = self._next(src, dst)
            if data is None:
                return
            while data and not self._closing:
                with self._lock:
                    slow = not self._healed and link.sent["down"] >= self.fast
                    n = 1 if slow else len(data)
                    link.sent["down"] += n
                if slow:
                    self.went_silent.set()
                    time.sleep(self.every)
                if not self._send(dst, data[:n]):
                    return
                data = data[n:]


class SlowLinkProxy(SilentProxy):
    """Forwards as SilentProxy does, the server's bytes at most `rate` bytes a second per connection: a slow but
    steady link (a hotel's, a tunnel's), never idle."""

    def __init__(self, upstream_port: int, *, rate: int) -> None:
        super().__init__(upstream_port)
        self.rate = rate

    def _pump(self, link: _Link, src: socket.socket, dst: socket.socket, way: str) -> None:
        if way == "up":
            return super()._pump(link, src, dst, way)
        src.settimeout(0.05)
        started, sent = time.monotonic(), 0
        while not self._closing:
            data = self._next(src, dst)
            if data is None:
                return
            for piece in (data[i:i + 4096] for i in range(0, len(data), 4096)):
                ahead = started + sent / self.rate - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)
                elif ahead < -0.5:  # idle for a while: no burst to make up for it
                    started, sent = time.monotonic(), 0
                with self._lock:
                    link.sent["down"] += len(piece)
                sent += len(piece)
                if not self._send(dst, piece):
                    return
