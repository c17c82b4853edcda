"""A small HTTP client on the standard library: POST JSON, read JSON or server-sent events, retry.

Why not the SDKs: `import anthropic` costs 1.5–3 s on a 2-core machine and `import openai`
about 1.1 s, most of a `-p` run. Why not httpx: it costs ~100 ms to import; `http.client`
~25 ms (it imports the `email` package and `ssl` even for plain HTTP), so the HTTP/1.1
exchange itself is wire.py's, on a socket, and `ssl` is imported only when the URL is https.
Both model APIs need only one POST with a JSON body and a streamed answer, so this module
keeps what the SDKs gave:

- retries with backoff on 408/409/429/5xx/529 and on connection failures (not on a
  certificate that does not verify), honouring `retry-after-ms`, `retry-after` (up to
  60 s) and `x-should-retry`; each retry is reported to `on_retry` before the wait;
- timeouts (connect 10 s; the answer's status and headers within `timeout` seconds of the request, then each
  streamed event but a ping within `timeout` of the one before, a whole JSON body within `timeout`);
- HTTPS with the system's CA store (SSL_CERT_FILE / SSL_CERT_DIR honoured), HTTP(S)_PROXY / NO_PROXY;
- one idle keep-alive connection per host reused by the next request (a turn with
  tools makes several), with a silent second try when a reused connection had closed;
- `Response.close()` from another thread stops a blocked read at once (cancel);
- bounds on what one answer may hold (a streamed line 32 MB, a body 512 MB, an error body's first 1 MB
  read, 32 interim 1xx answers; sizes and status codes in plain ASCII digits only): past them the answer is
  refused (TooLarge) and the rest never read (tests/providers/test_hostile_answers.py).

Failures are typed (StatusError, ConnectError, Timeout, StreamBroken); the providers turn
them into one line for the user (see providers/errors.py).
"""

from __future__ import annotations

import _socket  # socket's C half: the `socket` module is for TLS only (providers/wire.py)
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

from evo_agent import __version__
from evo_agent.session import plain_dataclass as dataclass

from .wire import Connection, ProtocolError, RemoteDisconnected, TunnelRefused
from .wire import Response as WireResponse

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

CONNECT_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 600.0
MAX_RETRY_AFTER = 60.0  # a longer retry-after is not waited for: backoff instead
MAX_BACKOFF = 8.0
DEFAULT_MAX_RETRIES = 4  # after the first try: five attempts in all
USER_AGENT = f"evo-agent/{__version__}"
# What one answer may hold (a hostile or broken server must not fill the memory): a streamed event's line, the
# whole body (a 128k-token answer with its SSE framing is tens of MB), an error answer's body (its message).
MAX_LINE_BYTES = 32 << 20
MAX_BODY_BYTES = 512 << 20
MAX_ERROR_BYTES = 1 << 20


class HTTPFailure(Exception):
    """Anything that kept a request from getting its answer."""


class StatusError(HTTPFailure):
    """The server answered with a status >= 300 (a redirect is not followed); `body` is the parsed JSON or the text."""

    def __init__(self, status: int, reason: str, headers: dict[str, str], body: Any) -> None:
        super().__init__(f"HTTP {status} {reason}")
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body


class ConnectError(HTTPFailure):
    """No connection (refused, unknown host, TLS failure): `reason` is short, `tls` says which kind."""

    def __init__(self, reason: str, *, tls: bool = False, retryable: bool = True, proxy: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tls = tls
        self.retryable = retryable
        self.proxy = proxy  # the proxy setting is what to change


class Timeout(HTTPFailure):
    """The server did not answer (or stopped sending) within the timeout."""


class StreamBroken(HTTPFailure):
    """The connection broke after the answer had started."""


class TooLarge(HTTPFailure):
    """The answer went past what one answer may hold (MAX_LINE_BYTES, MAX_BODY_BYTES); its text completes
    "the <API> at <url> ..."; the rest was not read."""


@dataclass
class Retry:
    """One retry about to happen: what failed, the wait, and which attempt comes next."""

    failure: HTTPFailure
    delay: float
    attempt: int  # the attempt about to start, 2 for the first retry
    attempts: int  # 1 + max_retries


def _short_os_reason(exc: BaseException) -> str:
    """'connection refused', 'name or service not known', ... from an OSError chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, _socket.gaierror):
            text = current.strerror or str(current)
            return f"cannot resolve the host name ({text[0].lower() + text[1:] if text else 'unknown host'})"
        if isinstance(current, OSError) and current.strerror:
            return current.strerror[0].lower() + current.strerror[1:]
        current = current.__cause__ or current.__context__
    text = str(exc) or type(exc).__name__
    return text.split("]", 1)[1].strip() if text.startswith("[Errno") and "]" in text else text


def _tls_failure(exc: BaseException) -> ConnectError | None:
    """A ConnectError for an ssl failure (None for anything else); imports ssl only when it was in use."""
    ssl = sys.modules.get("ssl")
    if ssl is None or not isinstance(exc, ssl.SSLError):
        return None
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = exc.verify_message or exc.reason or "certificate verify failed"
        return ConnectError(f"TLS certificate not trusted ({detail})", tls=True, retryable=False)
    return ConnectError(f"TLS handshake failed ({exc.reason or exc})", tls=True)


def retry_delay(headers: dict[str, str], attempt: int) -> float:
    """Seconds to wait before `attempt` (2 = first retry): the server's retry-after, else backoff."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = (headers.get(name) or "").strip()
        if not raw:
            continue
        value: float | None
        try:
            value = float(raw) * scale
        except ValueError:
            value = _seconds_until_http_date(raw) if name == "retry-after" else None
        if value is not None and 0 <= value <= MAX_RETRY_AFTER:
            return value
    backoff: float = min(0.5 * 2 ** (attempt - 2), MAX_BACKOFF)
    import random  # at the first retry: not before a launch's first request

    return backoff * (1 - 0.25 * random.random())


def _seconds_until_http_date(raw: str) -> float | None:
    from email.utils import parsedate_to_datetime  # rare: only for a retry-after given as a date

    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when is not None else None


def should_retry(failure: HTTPFailure) -> bool:
    if isinstance(failure, StatusError):
        hint = failure.headers.get("x-should-retry", "").lower()
        if hint in ("true", "false"):
            return hint == "true"
        return failure.status in (408, 409, 429) or failure.status >= 500
    if isinstance(failure, ConnectError):
        return failure.retryable
    return isinstance(failure, Timeout)


def _shown(url: str) -> str:
    """`url` with its password (if any) as `***`: what a failure line may say of a proxy."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, slashes, user = head.rpartition("//")
    return f"{scheme}{slashes}{user.split(':', 1)[0]}:***@{tail}"


def _proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL from HTTP(S)_PROXY / ALL_PROXY unless NO_PROXY exempts `host` (urllib's rules)."""
    if not any(k.lower() in ("http_proxy", "https_proxy", "all_proxy") for k in os.environ):
        return None
    import urllib.request  # only when a proxy is configured: it imports a lot

    if urllib.request.proxy_bypass(host):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(scheme) or proxies.get("all")


class Response:
    """A response being read: `json()`, `lines()` or `events()`; `close()` works from any thread."""

    def __init__(self, client: Client, key: tuple[Any, ...], conn: Connection,
                 raw: WireResponse) -> None:
        self._client, self._key, self._conn, self._raw = client, key, conn, raw
        self.status = raw.status
        self.headers = {k.lower(): v for k, v in raw.getheaders()}
        self._closed = False
        self._seen = 0  # bytes of the body read so far

    def read(self) -> bytes:
        """The whole body (at most the client's max_body bytes: TooLarge past that), within the timeout."""
        limit = self._client.max_body
        self._progress()
        try:
            data = self._raw.read(limit + 1)
        except Exception as exc:
            if self._closed:  # close() from another thread
                return b""
            self.close()
            if isinstance(exc, TimeoutError):  # socket.timeout
                raise Timeout("read timed out") from exc
            if isinstance(exc, (OSError, ValueError, ProtocolError)):
                raise StreamBroken(_short_os_reason(exc)) from exc
            raise
        if len(data) > limit:
            self.close()
            raise TooLarge(f"sent an answer of more than {_size(limit)}; the rest was not read")
        self._release()
        return data

    def json(self) -> Any:
        return load_json(self.read() or b"null")

    def lines(self) -> Iterator[str]:
        """Decoded lines without their line ending, as they arrive; ends at the end of the body."""
        raw, max_line, max_body = self._raw, self._client.max_line, self._client.max_body
        while True:
            try:
                line = raw.readline(max_line + 1)
            except Exception as exc:
                if self._closed:  # close() from another thread (cancel): a read fails in many ways
                    return
                self.close()
                if isinstance(exc, TimeoutError):  # socket.timeout
                    raise Timeout("no data within the read timeout") from exc
                if isinstance(exc, (OSError, ValueError, ProtocolError)):
                    raise StreamBroken(_short_os_reason(exc)) from exc
                raise
            if not line:
                self._release()
                return
            self._seen += len(line)
            if len(line) > max_line or self._seen > max_body:
                self.close()
                what = f"a line of more than {_size(max_line)}" if len(line) > max_line else \
                    f"more than {_size(max_body)}"
                raise TooLarge(f"sent {what}; the rest was not read")
            yield line.decode("utf-8", "replace").rstrip("\r\n")

    def events(self) -> Iterator[tuple[str, str]]:
        """Server-sent events as (event name, data); the name is "message" when none was given.

        Each event but a ping must come within the client's timeout of the one before: keep-alives (`: ping`
        comments, `ping` events) or bytes trickled into a line that never ends keep each read within its
        timeout, and held a request for as long as the server liked."""
        name = ""
        data: list[str] = []
        size = 0  # the event's data so far: one event holds no more than one line may (max_line)
        self._progress()
        for line in self.lines():
            if not line:
                if data:
                    if name != "ping":
                        self._progress()
                    yield name or "message", "\n".join(data)
                name, data, size = "", [], 0
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    name = value
                elif field == "data":
                    data.append(value)
                    size += len(value) + 1
                    if size > self._client.max_line:
                        self.close()
                        raise TooLarge(f"sent an event of more than {_size(self._client.max_line)}; "
                                       "the rest was not read")
        if data:
            yield name or "message", "\n".join(data)

    def _progress(self) -> None:
        """The next event is due within the timeout from now (see events)."""
        self._conn.read_deadline(time.monotonic() + self._client.timeout)

    def _release(self) -> None:
        """The body was read to its end: the connection may serve the next request."""
        if self._closed:
            return
        self._closed = True
        self._conn.read_deadline(None)
        if self._raw.will_close:
            self._conn.close()
        else:
            self._client._put_idle(self._key, self._conn)

    def close(self) -> None:
        """Stop reading now (another thread may be blocked in a read): the connection is dropped."""
        if self._closed:
            return
        self._closed = True
        sock = self._conn.sock
        if sock is not None:
            try:
                sock.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


class Client:
    """POSTs to one base URL; thread safe (subagents call from their own threads)."""

    def __init__(self, base_url: str, *, timeout: float | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
                 headers: dict[str, str] | None = None, max_line: int = MAX_LINE_BYTES,
                 max_body: int = MAX_BODY_BYTES) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the base URL {_shown(base_url)!r} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = max(0, max_retries)
        self.max_line, self.max_body = max_line, max_body
        self.headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **(headers or {})}
        self._idle: dict[tuple[Any, ...], list[Connection]] = {}
        self._lock = threading.Lock()
        self._tls_context: Any = None

    # ---- connections
    def _context(self) -> Any:
        if self._tls_context is None:
            import ssl  # only for https: ~15 ms

            self._tls_context = ssl.create_default_context()
        return self._tls_context

    def _new_connection(self) -> tuple[Connection, bool]:
        """(connection, whether requests must name the absolute URL: plain HTTP through a proxy)."""
        connect_timeout = min(CONNECT_TIMEOUT, self.timeout)
        proxy = _proxy_for(self.scheme, self.host)
        if proxy:
            p = urlsplit(proxy if "://" in proxy else "http://" + proxy)
            if p.scheme != "http":  # https:// (TLS to the proxy), socks5://: CONNECT in clear text would show
                raise ConnectError(f"the proxy {_shown(proxy)} is {p.scheme}://, which evo-agent does not speak: "
                                   "only an http:// proxy (it carries https inside its tunnel)", retryable=False,
                                   proxy=True)
            if not p.hostname:  # e.g. "http://:3128": a Connection to None would fail with a traceback
                raise ConnectError(f"the proxy {_shown(proxy)!r} names no host", retryable=False, proxy=True)
            if self.scheme == "https":
                tunnel_headers = {}
                if p.username:
                    import base64
                    from urllib.parse import unquote

                    token = f"{unquote(p.username)}:{unquote(p.password or '')}".encode()
                    tunnel_headers["Proxy-Authorization"] = "Basic " + base64.b64encode(token).decode()
                return Connection(p.hostname, p.port or 80, timeout=connect_timeout, tls=self._context(),
                                  tunnel=(self.host, self.port, tunnel_headers)), False
            return Connection(p.hostname, p.port or 80, timeout=connect_timeout), True
        if self.scheme == "https":
            return Connection(self.host, self.port, timeout=connect_timeout, tls=self._context()), False
        return Connection(self.host, self.port, timeout=connect_timeout), False

    def _take_idle(self, key: tuple[Any, ...]) -> Connection | None:
        with self._lock:
            pool = self._idle.get(key)
            return pool.pop() if pool else None

    def _put_idle(self, key: tuple[Any, ...], conn: Connection) -> None:
        with self._lock:
            pool = self._idle.setdefault(key, [])
            if len(pool) < 4:
                pool.append(conn)
                return
        conn.close()

    def warm(self) -> None:
        """Open a connection (TCP and TLS) in the background, for the first request to find ready.

        Start-up overlaps the handshake (a round trip or two to a remote API) with loading the
        session; a failure here is silent: the request itself reports it.
        """
        def connect() -> None:
            try:
                conn, absolute = self._new_connection()
                if absolute:  # plain HTTP through a proxy: requests name the URL, keep it simple
                    return
                conn.connect()
                if conn.sock is not None:
                    conn.sock.settimeout(self.timeout)
            except Exception:  # noqa: BLE001 - best effort
                return
            self._put_idle((self.scheme, self.host, self.port), conn)

        threading.Thread(target=connect, name="evo-agent-connect", daemon=True).start()

    # ---- requests
    def post(self, path: str, body: bytes, *, headers: dict[str, str] | None = None,
             stop: threading.Event | None = None, on_retry: Callable[[Retry], None] | None = None) -> Response:
        """POST `body` to base path + `path`; a 2xx Response, or raise after the retries are spent.

        `stop` set during a wait between retries ends the wait and raises Timeout("cancelled").
        """
        attempts = 1 + self.max_retries
        for attempt in range(1, attempts + 1):
            try:
                return self._send_once(path, body, headers or {})
            except HTTPFailure as failure:
                if attempt >= attempts or not should_retry(failure):
                    raise
                headers_seen = failure.headers if isinstance(failure, StatusError) else {}
                delay = retry_delay(headers_seen, attempt + 1)
                if on_retry is not None:
                    on_retry(Retry(failure, delay, attempt + 1, attempts))
                if stop is not None:
                    if stop.wait(delay):
                        raise Timeout("cancelled") from None
                else:
                    time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send_once(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        key = (self.scheme, self.host, self.port)
        reused = self._take_idle(key)
        if reused is not None:
            try:
                return self._exchange(reused, False, key, path, body, headers)
            except _StaleConnection:
                pass  # the server closed the idle connection meanwhile: one fresh try, not a retry
        conn, absolute = self._new_connection()
        try:
            return self._exchange(conn, absolute, key, path, body, headers, fresh=True)
        except _StaleConnection as exc:
            raise StreamBroken(str(exc.__cause__ or "the server closed the connection")) from exc

    def _exchange(self, conn: Connection, absolute: bool, key: tuple[Any, ...], path: str, body: bytes,
                  headers: dict[str, str], *, fresh: bool = False) -> Response:
        target = self.base_path + path
        if absolute:
            target = f"{self.scheme}://{self.host}:{self.port}{target}"
        all_headers = {**self.headers, **headers, "Content-Type": "application/json",
                       "Content-Length": str(len(body))}
        try:
            if fresh:
                conn.connect()
                if conn.sock is not None:
                    conn.sock.settimeout(self.timeout)
            conn.request("POST", target, body=body, headers=all_headers)
            _after_send()
            raw = conn.getresponse(deadline=time.monotonic() + self.timeout)  # the head within one timeout
        except TimeoutError as exc:
            conn.close()
            raise Timeout("timed out") from exc
        except (RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
            conn.close()
            if not fresh:
                raise _StaleConnection() from exc
            raise ConnectError(_short_os_reason(exc)) from exc
        except (OSError, ProtocolError) as exc:
            conn.close()
            tls = _tls_failure(exc)
            if tls is not None:
                raise tls from exc
            refused = isinstance(exc, TunnelRefused) and 400 <= exc.status < 500  # 407: the same again fails
            raise ConnectError(_short_os_reason(exc), retryable=not refused) from exc
        response = Response(self, key, conn, raw)
        if raw.status >= 300:  # a redirect is never followed: the key and the body go only where the user said
            text = b""
            try:
                conn.read_deadline(time.monotonic() + self.timeout)  # not a byte at a time for ever either
                text = raw.read(MAX_ERROR_BYTES)  # the message is at its start; the rest is not waited for
            except (OSError, ProtocolError):
                pass
            conn.close()
            raise StatusError(raw.status, raw.reason or "", response.headers, _parse_body(text))
        return response


class _StaleConnection(Exception):
    """A reused keep-alive connection turned out to be closed."""


def _size(count: int) -> str:
    return f"{count >> 20} MB" if count >= 1 << 20 else f"{count} bytes"


def _parse_body(data: bytes) -> Any:
    text = data.decode("utf-8", "replace")
    if not text.strip():
        return None
    try:
        return load_json(text)
    except ValueError:
        return text


MAX_JSON_DEPTH = 100  # the deepest tool input kept as it came (the session writes records 200 deep: session/jsonio.py)
ENVELOPE_DEPTH = 10  # what an event, a chunk or a body adds around the values it carries


def load_json(data: str | bytes, limit: int = MAX_JSON_DEPTH + ENVELOPE_DEPTH) -> Any:
    """`json.loads` for what a server sent: ValueError, never RecursionError, for `[[[[…` nested past `limit`.

    A hundred thousand `[` raised the parser's RecursionError (a crash, as for a bug); six hundred parsed, and
    the session could not write the record holding them (tests/security/test_hostile_endpoint_deep_json.py).
    """
    import json

    try:
        value = json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if text.count("[") + text.count("{") > limit and not within_depth(value, limit):  # fewer cannot nest deeper
        raise ValueError(f"nested more than {limit} deep")
    return value


def within_depth(value: Any, limit: int) -> bool:
    """Whether no list or object in `value` lies more than `limit` levels deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return True


_sent = False


def _after_send() -> None:
    """Once the first request is on the wire: load what reading answers and records needs (orjson),
    while the model takes its time to the first byte (start-up, SPEC §8)."""
    global _sent
    if not _sent:
        _sent = True
        from evo_agent.session import orjson_after_send

        orjson_after_send()


def encode_json(body: dict[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON (orjson's bytes: a large history encodes ~10× faster).

    Before orjson is loaded the stdlib writes those same bytes (session/jsonio.py), so the first
    request of a launch does not wait for orjson's import: it is imported once that request is sent.
    """
    from evo_agent.session import dumps_compact

    try:
        return dumps_compact(body)
    except (ImportError, TypeError):  # lone surrogates, huge ints: the stdlib escapes them
        import json

        return json.dumps(body, separators=(",", ":")).encode("ascii")
