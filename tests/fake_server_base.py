"""The scaffolding both loopback fake APIs share: a threaded HTTP server, a script, a request log, SSE.

`tests/fake_model_server.py` (Anthropic Messages) and `tests/fake_openai_server.py` (OpenAI Chat
Completions) are dialects on top of this module: each brings its script items, its request
validation and its answer format; everything about serving, scripting, recording and failing is here
once, so a fix to (say) client disconnects or `wait_for_requests` reaches both.

    class MyFake(ScriptedServer):
        handler_class = MyHandler      # a ScriptedHandler subclass with `_post`
        base_path = "/v1"              # what base_url ends in
        env_vars = ...                 # def env_vars(self) -> {"X_BASE_URL": ..., ...}
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Self

# Variables a fake server's environment removes, so a subprocess never reaches a real API.
PROVIDER_ENV_PREFIXES = ("ANTHROPIC_", "OPENAI_", "EVO_AGENT_")


class ClientGone(Exception):
    """The client went away (a closed socket) while the server was writing."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # socketserver's 5 can overflow when a loaded machine is slow to accept
    fake: ScriptedServer


class ScriptedServer:
    """A loopback HTTP server answering each request with the next scripted item (then `default`).

    Every request that reaches a route is recorded in `log` (body, validity, error, status, what
    answered it) and, when its body is a JSON object, in `requests` (with its lower-cased headers in
    `headers`, same index). Subclasses set `handler_class`, `base_path`, `name` and `env_vars()`.
    """

    handler_class: ClassVar[type[BaseHTTPRequestHandler]]
    base_path: ClassVar[str] = ""
    name: ClassVar[str] = "the fake API"

    def __init__(self) -> None:
        self.default: Any = None  # the dialect sets its own "ok" answer
        self.api_key: str | None = None  # when set, requests must carry exactly this key
        self.requests: list[dict] = []  # every body that parsed as a JSON object, valid or not
        self.headers: list[dict] = []  # the request headers (lower-cased names) of each entry of `requests`
        self.log: list[dict] = []  # per request: body, stream, valid, error, answer (kind), usage, status
        self.hanging = threading.Event()
        self._script: list[Any] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None

    # ---- lifecycle
    def start(self) -> Self:
        httpd = _HTTPServer(("127.0.0.1", 0), self.handler_class)
        httpd.fake = self
        self._httpd = httpd
        # stop() waits for the serving loop to look at its flag: every poll_interval. At 0.05 s that was a
        # whole 50 ms at the end of each of ~750 tests; a 5 ms wake-up costs a fraction of a percent of a core.
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def env_vars(self) -> dict[str, str]:
        """The variables that point the agent at this server (the dialect's base URL, key, provider)."""
        raise NotImplementedError

    def env(self, base: dict | None = None, **extra: str) -> dict[str, str]:
        """An environment for a subprocess that talks to this server (and to no real API)."""
        env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(PROVIDER_ENV_PREFIXES)}
        env.update(self.env_vars())
        env.update(extra)
        return env

    # ---- scripting
    def script(self, *items: Any) -> Self:
        with self._lock:
            self._script.extend(items)
        return self

    @property
    def pending(self) -> int:
        """Scripted items not yet used."""
        with self._lock:
            return len(self._script)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.headers.clear()
            self.log.clear()
        self.hanging.clear()

    # ---- inspection
    @property
    def valid_requests(self) -> list[dict]:
        with self._lock:
            return [entry["body"] for entry in self.log if entry["valid"]]

    @property
    def invalid(self) -> list[tuple[Any, str]]:
        with self._lock:
            return [(entry["body"], entry["error"]) for entry in self.log if not entry["valid"]]

    def assert_all_valid(self) -> None:
        bad = self.invalid
        assert not bad, f"{self.name} refused {len(bad)} request(s); first: {bad[0][1]}"

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[dict]:
        """Block until at least `count` requests arrived (valid or not); return the bodies."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} request(s) within {timeout}s, got {len(self.requests)}")
                self._changed.wait(left)
            return list(self.requests)

    def dump(self, path: str | os.PathLike) -> Path:
        """Write the request log as JSON lines (one {"body", "valid", "error", "usage", ...} per line)."""
        path = Path(path)
        with self._lock:
            lines = [json.dumps(entry, ensure_ascii=False) + "\n" for entry in self.log]
        path.write_text("".join(lines), encoding="utf-8")
        return path

    # ---- used by the handlers
    def record(self, entry: dict, headers: dict | None = None) -> dict:
        with self._changed:
            if isinstance(entry.get("body"), dict):
                self.requests.append(entry["body"])
                self.headers.append(headers or {})
            self.log.append(entry)
            self._changed.notify_all()
        return entry

    def next_item(self, body: Any) -> Any:
        """The next scripted item (or `default`), callables evaluated with the request body."""
        with self._lock:
            item = self._script.pop(0) if self._script else self.default
        while callable(item) and not isinstance(item, type):
            item = item(body)
        return item

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, cut short by `stop()`."""
        self._stopping.wait(seconds)

    def hang_for(self, seconds: float) -> None:
        """Sleep with `hanging` set, so a test can strike while an answer is held open."""
        self.hanging.set()
        self.sleep(seconds)
        self.hanging.clear()

    def new_id(self) -> int:
        return next(self._ids)


def as_reply(item: Any, reply_type: type, make_reply: Callable[..., Any]) -> Any:
    """A scripted item as the dialect's reply: itself, or `make_reply` of a str, a block, or a list of them."""
    if isinstance(item, reply_type):
        return item
    if isinstance(item, (str, dict)):
        return make_reply(item)
    if isinstance(item, (list, tuple)):
        return make_reply(*item)
    raise TypeError(f"cannot answer with a scripted {type(item).__name__}: {item!r}")


def chunks(value: str, parts: int = 3) -> list[str]:
    """Split into up to `parts` non-empty pieces (so streaming tests see several deltas)."""
    if len(value) <= 1:
        return [value] if value else []
    size = max(1, -(-len(value) // max(1, parts)))
    return [value[i : i + size] for i in range(0, len(value), size)]


def default_prompt_size(body: Any) -> int:
    """A deterministic stand-in for the token count of a request: its messages' JSON size / 4."""
    size = len(json.dumps(body.get("messages"), ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    return max(1, size // 4)


class ScriptedHandler(BaseHTTPRequestHandler):
    """Request plumbing: reading the body, JSON and SSE writing, disconnects turned into ClientGone.

    A dialect implements `_post()` and `_send_not_found()` (its error body); GET always answers 404.
    """

    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    request_id_header: ClassVar[str] = "request-id"
    stream_request_id: ClassVar[bool] = True  # whether an SSE response carries the request id header

    @property
    def fake(self) -> Any:
        return self.server.fake

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    # ---- reading
    def read_raw(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    # ---- writing
    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError as exc:  # BrokenPipe, ConnectionReset, ConnectionAborted…
            raise ClientGone() from exc

    def _request_id(self) -> str:
        return f"req_fake_{self.fake.new_id():06d}"

    def _send_json(self, status: int, payload: Any, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header(self.request_id_header, self._request_id())
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
        except OSError as exc:
            raise ClientGone() from exc
        self._write(data)

    def _start_stream(self) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            if self.stream_request_id:
                self.send_header(self.request_id_header, self._request_id())
            self.end_headers()
        except OSError as exc:
            raise ClientGone() from exc
        self.close_connection = True  # the body ends when the connection does

    def _sse(self, payload: Any, event: str | None = None) -> None:
        """One server-sent event: `event: name` (when given) and `data: json`."""
        head = f"event: {event}\n" if event else ""
        self._write(f"{head}data: {json.dumps(payload)}\n\n".encode())

    # ---- routing (a dialect implements `_post` and `_send_not_found`)
    def _post(self) -> None:
        raise NotImplementedError

    def _send_not_found(self, message: str) -> None:
        raise NotImplementedError

    def do_GET(self) -> None:  # noqa: N802
        self._safely(lambda: self._send_not_found(f"no route GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        self._safely(self._post)

    def _safely(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except ClientGone:
            self.close_connection = True
