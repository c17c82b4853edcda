"""Connections to MCP servers through the official `mcp` SDK (SPEC §13), for a synchronous agent.

The SDK is asyncio (anyio); everything below `ui` is synchronous threads. So one daemon thread runs one
event loop for the whole process (`_Loop`), started at the first need — the first request of a session
that has servers, never at import, `--help` or launch — and every server is one task on it:

    connect (stdio: spawn; http: POST) → initialize → tools/list → connected … until stopped or it fails

All servers start at once; each has `start_timeout` seconds to be connected (EVO_AGENT_MCP_TIMEOUT,
default 20) and each call `call_timeout` (EVO_AGENT_MCP_TOOL_TIMEOUT, default 120). The agent's thread
waits on a concurrent future, watching the turn's cancel event. A server that fails, dies or never answers
is one line (`ServerStatus.detail`); the rest go on.

A stdio server gets a minimal environment (PATH without relative or in-project entries, HOME, locale,
terminal, proxies, plus its configured env; never the agent's credentials), starts in the home directory
(the user's own servers, which run in every project, trusted or not) or the project (a trusted project's),
gets its own process group, and runs under the bash tool's reaper with a parent-death signal
(tools/reaper.py): a `kill -9` of the agent leaves no server running, even one stuck in a call that would
never notice its stdin closing. The reaper follows the thread that spawned it, which
is why the loop thread lives as long as the process.

The SDK is imported only inside the loop thread, so the agent's start-up never pays for it (SPEC §8).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .mcp_config import Expanded
from .tool_env import is_secret_var

if TYPE_CHECKING:
    from contextlib import AsyncExitStack

    from mcp import ClientSession

DEFAULT_START_TIMEOUT_S = 20.0
DEFAULT_CALL_TIMEOUT_S = 120.0
_POLL_S = 0.05
_STOP_GRACE_S = 5.0
_SETTLE_BACKSTOP_S = 10.0  # how long past the start timeout a wait for the servers gives a stuck event loop
_TRIM_EVERY_S = 2.0  # how often a connected server's stderr file is cut back to its end
MAX_STDERR_BYTES = 1 << 20  # what a server's stderr file may hold before it is cut back to its last 4 KB
_EXIT_GRACE_S = 5.0  # a call in flight when its server exits has this long to read an answer already sent

# What a server inherits from the agent's environment; everything else it must be given in its `env`.
BASE_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
            "TERM", "COLORTERM", "TMPDIR", "TZ", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
            "XDG_CACHE_HOME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
            "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")


class McpCallError(Exception):
    """A call that did not come back with a result; the message is one line for the model and the user."""


def timeout_from(environ: Mapping[str, str], name: str, default: float) -> float:
    """A positive number of seconds from the environment, else `default` (a bad value is the default too)."""
    raw = (environ.get(name) or "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def server_environment(configured: dict[str, str], environ: Mapping[str, str] | None = None, *,
                       project: Path | str | None = None) -> dict[str, str]:
    """BASE_ENV from the agent's environment, then the server's own `env`; never the agent's credentials.

    The inherited PATH keeps only absolute entries outside `project`: a `.` or empty entry (a leading or
    trailing `:`) would find a program the repository committed before the one the user meant.
    """
    from .shell_readonly import safe_search_path

    source = os.environ if environ is None else environ
    env = {k: source[k] for k in BASE_ENV if k in source and not is_secret_var(k)}
    if "PATH" in env:
        root = os.path.realpath(project) if project is not None else "/nonexistent-evo-agent-project"
        env["PATH"] = safe_search_path(env["PATH"], Path(root))
    env.update(configured)
    return env


def server_directory(scope: str, project_dir: Path | str, environ: Mapping[str, str] | None = None,
                     cwd: str = "") -> str:
    """Where a stdio server starts: its entry's `cwd` when it has one (relative: to where it would start
    without one). Else a project's server (the user trusted the project): the project.

    The user's own servers start in every project, trusted or not, so never in it: `python -m pkg` would
    import the clone's `pkg.py`, `npx`/`uvx` would read its local config. They start in the home directory
    (or `/` without one, or when the project holds it).
    """
    if cwd:
        return os.path.join(server_directory(scope, project_dir, environ), os.path.expanduser(cwd))
    if scope == "project":
        return str(project_dir)
    source = os.environ if environ is None else environ
    home = source.get("HOME") or ""
    if not (os.path.isabs(home) and os.path.isdir(home)):
        return "/"
    real_home, root = os.path.realpath(home), os.path.realpath(project_dir)
    inside = real_home == root or real_home.startswith(root.rstrip("/") + "/")
    return "/" if inside else home  # a project that holds the home directory: not there either


@dataclass
class ServerStatus:
    """What `/mcp` shows of one server."""

    name: str
    scope: str
    transport: str
    state: str = "not started"   # not started | starting | connected | failed | stopped
    detail: str = ""             # why it failed, in one line
    tools: list[dict[str, Any]] = field(default_factory=list)  # the server's tools as it listed them (MCP shape)
    read_only_trusted: bool = False


class _Server:
    def __init__(self, expanded: Expanded) -> None:
        config = expanded.config
        self.expanded = expanded
        self.status = ServerStatus(config.name, config.scope, config.transport,
                                   read_only_trusted=config.trust_read_only)
        self.session: ClientSession | None = None
        self.stop: asyncio.Event | None = None
        self.task: asyncio.Task[None] | None = None
        self.settled = threading.Event()  # connected or failed: start() waits on these
        self.stderr: IO[bytes] | None = None
        self.proc = None  # a stdio server's process, spawned before the SDK is imported (mcp_stdio.py)
        self.running: Any = None  # that process once connected: its exit while idle ends the connection
        self.calls = 0  # calls in flight (the loop thread's count)
        self.spawn_error: BaseException | None = None
        self.fault = ""  # why the connection was ended by evo-agent (mcp_stdio: a message too large)


class _Loop:
    """The process's one event loop, in a daemon thread started on first use."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                threading.Thread(target=run, name="evo-agent-mcp", daemon=True).start()
                ready.wait()
                cls._loop = loop
            return cls._loop


def _one_line(exc: BaseException) -> str:
    """The innermost useful message of an exception (anyio wraps failures in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        text = "timed out"
    return text[:300]


class ServerExited(ConnectionError):
    """A stdio server's process ended while the connection was idle (nothing else would notice until a call)."""


async def _hold(server: _Server) -> None:
    """Until the server is told to stop; ServerExited as soon as a stdio server's process exits by itself.

    Without this, a server that died between calls stayed "connected" in `/mcp` until the model's next call
    to it failed.
    """
    assert server.stop is not None
    stop = asyncio.ensure_future(server.stop.wait())
    waits: set[asyncio.Future[Any]] = {stop}
    proc, server.running = server.running, None
    if proc is not None:
        waits.add(asyncio.ensure_future(proc.wait()))
    try:
        done: set[asyncio.Future[Any]] = set()
        while not done:  # its stderr kept short meanwhile: a server may log without end
            done, _ = await asyncio.wait(waits, timeout=_TRIM_EVERY_S, return_when=asyncio.FIRST_COMPLETED)
            _trim_stderr(server.stderr)
    finally:
        for waiting in waits:
            waiting.cancel()
    if stop in done or proc is None:
        return
    if server.calls:  # it died under a call: a failing call says so (_lost), which stops this connection
        stopping = asyncio.ensure_future(server.stop.wait())
        deadline = asyncio.get_running_loop().time() + _EXIT_GRACE_S
        try:  # a call may also end well (answered before the exit) or be cancelled: then it is this one's line
            while server.calls and not stopping.done() and asyncio.get_running_loop().time() < deadline:
                await asyncio.wait({stopping}, timeout=_POLL_S)
        finally:
            stopping.cancel()
        if server.stop.is_set():
            return
        if server.calls:  # a process it left behind holds its stdout open: no end of the stream would come
            raise ServerExited(f"the server exited under a call (exit code {proc.returncode})")
    raise ServerExited(f"the server exited while idle (exit code {proc.returncode})")


class McpManager:
    """The servers of one agent process: start, wait, call, reconnect, stop."""

    def __init__(self, servers: list[Expanded], project_dir: Path | str, *, start_timeout: float | None = None,
                 call_timeout: float | None = None, on_change: Callable[[ServerStatus], None] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.project_dir = Path(project_dir)
        self.start_timeout = start_timeout or timeout_from(env, "EVO_AGENT_MCP_TIMEOUT", DEFAULT_START_TIMEOUT_S)
        self.call_timeout = call_timeout or timeout_from(env, "EVO_AGENT_MCP_TOOL_TIMEOUT", DEFAULT_CALL_TIMEOUT_S)
        self._environ = env
        self._servers = {s.config.name: _Server(s) for s in servers}
        self.on_change = on_change
        self._started = False

    # ---- what the agent reads
    @property
    def names(self) -> list[str]:
        return list(self._servers)

    def statuses(self) -> list[ServerStatus]:
        return [s.status for s in self._servers.values()]

    def status(self, name: str) -> ServerStatus | None:
        server = self._servers.get(name)
        return server.status if server is not None else None

    # ---- starting
    def start(self) -> None:
        """Begin connecting every server at once (returns at once); idempotent."""
        if self._started or not self._servers:
            return
        self._started = True
        loop = _Loop.get()
        servers = list(self._servers.values())
        for server in servers:
            server.status.state = "starting"
        asyncio.run_coroutine_threadsafe(self._launch_all(servers), loop)

    async def _launch_all(self, servers: list[_Server]) -> None:
        """Spawn every stdio server first, then connect them all: the SDK's import overlaps their start."""
        for server in servers:
            await self._spawn(server)
        for server in servers:
            await self._launch(server)

    async def _spawn(self, server: _Server) -> None:
        server.proc, server.spawn_error = None, None
        expanded = server.expanded
        if expanded.config.transport != "stdio":
            return
        from .mcp_stdio import spawn
        from .reaper import with_reaper

        if server.stderr is not None:
            server.stderr.close()
        server.stderr = _stderr_file()  # kept until the next start: why it failed is read from it
        try:
            argv = with_reaper([expanded.command, *expanded.args], self.project_dir, keep_stdin=True)
            server.proc = await spawn(argv,
                                      server_environment(expanded.env, self._environ, project=self.project_dir),
                                      server_directory(expanded.config.scope, self.project_dir, self._environ,
                                                       expanded.cwd),
                                      server.stderr)
        except (OSError, ValueError) as exc:
            server.spawn_error = exc

    def wait(self, timeout: float | None = None, cancel: threading.Event | None = None) -> None:
        """Until every server is connected or failed, at most `timeout` (default: the start timeout) seconds."""
        self.start()
        # Each server settles by its own start timeout; the default bound is a backstop for a stuck loop, so a
        # loaded machine never shows a server as still starting a moment before it is said to have failed.
        deadline = time.monotonic() + (self.start_timeout + _SETTLE_BACKSTOP_S if timeout is None else timeout)
        for server in self._servers.values():
            while not server.settled.is_set():
                left = deadline - time.monotonic()
                if left <= 0 or (cancel is not None and cancel.is_set()):
                    return
                server.settled.wait(min(left, _POLL_S * 4))

    def reconnect(self, name: str) -> bool:
        """Stop `name` (if running) and connect it again; False for an unknown name. Returns at once."""
        server = self._servers.get(name)
        if server is None:
            return False
        self._started = True
        loop = _Loop.get()
        server.settled.clear()
        server.status.state, server.status.detail = "starting", ""
        asyncio.run_coroutine_threadsafe(self._restart(server), loop)
        return True

    async def _restart(self, server: _Server) -> None:
        await self._stop_one(server)
        server.status.state = "starting"
        await self._spawn(server)
        await self._launch(server)

    async def _launch(self, server: _Server) -> None:
        server.stop = asyncio.Event()
        server.task = asyncio.get_running_loop().create_task(self._serve(server))

    def _changed(self, server: _Server) -> None:
        if self.on_change is not None:
            try:
                self.on_change(server.status)
            except Exception:  # noqa: BLE001 - a listener never breaks a connection
                pass

    async def _serve(self, server: _Server) -> None:
        """One server's whole life: connect, initialize, list its tools, then hold it until stopped."""
        from contextlib import AsyncExitStack

        status = server.status
        said = False  # failed at the start and said so: what follows is this attempt's teardown only
        try:
            async with AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self.start_timeout):
                        session = await self._connect(server, stack)
                        status.tools = await _list_tools(session)
                except Exception as exc:
                    # Said before the teardown (the SDK's, then the process's): the first request waits for
                    # this server to settle, and must not go out with it shown as still starting. From here on
                    # the status is a reconnect's (/mcp), which waits for this task to end.
                    self._fail(server, exc)
                    said = True
                    raise
                server.session = session
                status.state, status.detail = "connected", ""
                server.settled.set()
                self._changed(server)
                await _hold(server)
                status.state = "stopped"
        except asyncio.CancelledError:
            if not said:
                status.state = "stopped"
        except BaseException as exc:  # noqa: BLE001 - any way a server fails is one line, never a crash
            if not said:
                self._fail(server, exc)
        finally:
            server.session = None
            if not said:
                server.settled.set()
            if server.stderr is not None and status.state == "stopped":
                server.stderr.close()
                server.stderr = None

    def _fail(self, server: _Server, exc: BaseException) -> None:
        """Mark `server` failed, say why (once), and let whoever waits for it go on."""
        server.status.state = "failed"
        server.status.detail = self._why(server, exc)
        server.settled.set()
        self._changed(server)

    def _why(self, server: _Server, exc: BaseException) -> str:
        if server.fault:
            return server.fault
        line = _one_line(exc)
        if line == "Connection closed":
            line = "it closed the connection before it was ready"
        if line == "timed out":
            line = f"did not start within {self.start_timeout:g} s (EVO_AGENT_MCP_TIMEOUT)"
        last = _last_stderr_line(server.stderr)
        return f"{line} ({last})" if last and last not in line else line

    async def _connect(self, server: _Server, stack: AsyncExitStack) -> ClientSession:
        _quiet_sdk_logs()
        from mcp import ClientSession

        expanded = server.expanded
        if expanded.config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers={"Accept-Encoding": "identity", **expanded.headers})
            client.event_hooks["response"].append(_capped_body)
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(streamable_http_client(expanded.url, http_client=client))
        else:
            from .mcp_stdio import STOP_GRACE_S, process_streams, stop

            proc, server.proc = server.proc, None
            if proc is None:
                raise server.spawn_error or OSError("the server's process could not be started")
            server.running, server.fault = proc, ""
            async def stop_server() -> None:  # also when the SDK's import or the session fails
                # A server that never finished its handshake gets no grace: it is not listening, and the user
                # (and -p's first request) would wait seconds more to be told it failed.
                await stop(proc, STOP_GRACE_S if server.session is not None else 0.0)

            stack.push_async_callback(stop_server)
            read, write = await stack.enter_async_context(
                process_streams(proc, on_fault=lambda why: setattr(server, "fault", why)))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session

    # ---- calling
    def call(self, name: str, tool: str, arguments: dict[str, Any], *, cancel: threading.Event | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        """The server's CallToolResult in its wire shape (`content`, `isError`, …); McpCallError otherwise."""
        server = self._servers.get(name)
        if server is None:
            raise McpCallError(f"the MCP server {name!r} is not configured in this session")
        if server.status.state == "starting":
            self.wait(cancel=cancel)
        if server.session is None:
            state = server.status.state + (f": {server.status.detail}" if server.status.detail else "")
            raise McpCallError(f"the MCP server {name!r} is not connected ({state}); the user can reconnect it "
                               "with /mcp")
        limit = self.call_timeout if timeout is None else timeout
        call = self._call(server, tool, arguments)
        future: Future[dict[str, Any]] = asyncio.run_coroutine_threadsafe(call, _Loop.get())
        deadline = time.monotonic() + limit
        while True:
            try:
                return future.result(timeout=_POLL_S)
            except FutureTimeout:
                pass
            if cancel is not None and cancel.is_set():
                future.cancel()
                raise McpCallError("interrupted by the user (Ctrl+C) before the MCP server answered")
            if time.monotonic() >= deadline:
                future.cancel()
                raise McpCallError(f"the MCP server {name!r} did not answer within {limit:g} s "
                                   "(EVO_AGENT_MCP_TOOL_TIMEOUT)")

    async def _call(self, server: _Server, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED
        from pydantic import ValidationError

        session = server.session
        if session is None:
            raise McpCallError(f"the MCP server {server.status.name!r} is not connected")
        server.calls += 1
        try:
            result = await session.call_tool(tool, arguments)
        except asyncio.CancelledError:
            raise
        except ValidationError as exc:  # an answer, but no tool result: this call fails, the connection holds
            raise McpCallError(f"the MCP server {server.status.name!r} answered with something that is not a tool "
                               f"result ({_first_problem(exc)})") from None
        except BaseException as exc:  # noqa: BLE001 - the connection broke: the server is gone until reconnected
            if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:  # the server answered with an error
                why = " ".join(str(exc.message).split())[:500]  # the server's words: one line, bounded
                raise McpCallError(f"the MCP server {server.status.name!r} refused the call: {why}") from None
            line = server.fault or ("connection closed" if isinstance(exc, MCPError) else _one_line(exc))
            await self._lost(server, line)
            raise McpCallError(f"the MCP server {server.status.name!r} failed during the call ({line}); "
                               "the user can reconnect it with /mcp") from None
        finally:
            server.calls -= 1
            _trim_stderr(server.stderr)
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")

    async def _lost(self, server: _Server, line: str) -> None:
        last = _last_stderr_line(server.stderr)  # before the connection's end closes the file: why it died
        server.session = None
        if server.stop is not None:
            server.stop.set()
        if server.task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(server.task), _STOP_GRACE_S)
            except BaseException:  # noqa: BLE001 - it is going anyway
                pass
        if server.status.state == "failed" and server.status.detail:
            return  # the connection ended first, and said why (_hold: it exited under this call)
        server.status.state = "failed"
        server.status.detail = f"disconnected: {line}"
        if last and not server.fault:
            server.status.detail += f" ({last})"
        self._changed(server)

    # ---- stopping
    async def _stop_one(self, server: _Server) -> None:
        if server.stop is not None:
            server.stop.set()
        task = server.task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), _STOP_GRACE_S)
            except BaseException:  # noqa: BLE001
                task.cancel()

    def close(self, timeout: float = _STOP_GRACE_S) -> None:
        """Stop every server (stdin closed, then SIGTERM to its group); bounded by `timeout` seconds."""
        if not self._started:
            return
        loop = _Loop.get()

        async def stop_all() -> None:
            await asyncio.gather(*(self._stop_one(s) for s in self._servers.values()), return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout=timeout)
        except Exception:  # noqa: BLE001 - leaving never fails; the reaper ends what is left
            pass


async def _capped_body(response: Any) -> None:
    """An HTTP server's answer is read as sent, and at most MAX_MESSAGE_BYTES of it (an event stream: the SDK
    bounds each of its events).

    The SDK reads a JSON answer whole, and httpx decodes a compressed body whatever was asked: a hostile
    server's 300 KB of gzip became 300 MB in memory (a 2 GB one, the process's end). Compression is neither
    asked for nor decoded (a compressed answer fails to parse, one line), and a body past the cap fails.
    """
    import httpx2

    from .mcp_stdio import MAX_MESSAGE_BYTES

    if "content-encoding" in response.headers:
        del response.headers["content-encoding"]
    if response.headers.get("content-type", "").lower().startswith("text/event-stream"):
        return
    inner = response.stream

    class Capped(httpx2.AsyncByteStream):
        async def __aiter__(self) -> Any:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > MAX_MESSAGE_BYTES:
                    raise httpx2.StreamError(f"the server's answer is larger than {MAX_MESSAGE_BYTES >> 20} MB")
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    response.stream = Capped()


def _first_problem(exc: Any) -> str:
    """A pydantic ValidationError's first problem in a few words, without the server's values."""
    try:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(part) for part in first.get("loc", ()))[:100]
        return " ".join(f"{where}: {first.get('msg', '')}".split())[:200]
    except Exception:  # noqa: BLE001 - a description, never a failure of its own
        return "invalid"


def _quiet_sdk_logs() -> None:
    """The SDK's log records go nowhere.

    It logs what a server got wrong (a malformed notification, a line that is not JSON) as warnings with
    the traceback and the server's own values; with no handler configured Python's last resort prints them
    on stderr, where a hostile server's escapes and a traceback would reach the user's terminal (and the
    app's screen). A server's failures reach the user as one line instead (ServerStatus.detail).
    """
    import logging

    for name in ("mcp", "mcp_types", "client"):  # the SDK's ClientSession logs as "client"
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


async def _list_tools(session: ClientSession) -> list[dict[str, Any]]:
    """The server's tools, following its pages (at most 50 of them) while they could still be offered.

    A session offers at most MAX_SERVER_TOOLS of a server's tools and MAX_SERVER_DEFINITIONS characters of
    them (mcp_tools.within_budget); the listing is kept for the connection's life, so paging stops well past
    that (four times either), and a server listing without end cannot fill the memory.
    """
    import json

    from mcp import types

    from .mcp_tools import MAX_SERVER_DEFINITIONS, MAX_SERVER_TOOLS

    tools: list[dict[str, Any]] = []
    size = 0
    cursor = None
    for _ in range(50):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        listed = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
        tools += listed
        size += sum(len(json.dumps(t)) for t in listed)
        cursor = getattr(page, "next_cursor", None)
        if not cursor or len(tools) > 4 * MAX_SERVER_TOOLS or size > 4 * MAX_SERVER_DEFINITIONS:
            break
    return tools


def _stderr_file() -> IO[bytes]:
    """Where a stdio server's stderr goes: a temp file in append mode, so reading its end never moves where the
    server writes (the two share one file offset)."""
    import fcntl

    f = tempfile.TemporaryFile("w+b")  # noqa: SIM115 - closed by the connection's exit stack
    flags = fcntl.fcntl(f.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(f.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
    return f


def _trim_stderr(stream: IO[bytes] | None) -> None:
    """Cut a server's stderr file back to its last 4 KB (all that is ever read of it) once past MAX_STDERR_BYTES.

    The file is in the temporary directory for the server's whole life; a server that logs every request, or
    a hostile one writing without end, filled the disk. The server appends (O_APPEND), so its next line goes
    after the kept end, wherever that now is.
    """
    if stream is None:
        return
    try:
        fd = stream.fileno()
        size = os.fstat(fd).st_size
        if size <= MAX_STDERR_BYTES:
            return
        tail = os.pread(fd, 4096, size - 4096)
        os.ftruncate(fd, 0)
        os.write(fd, tail)
    except (OSError, ValueError):
        pass


def _last_stderr_line(stream: IO[bytes] | None) -> str:
    """The last non-empty line a server wrote to its stderr (why it would not start), at most 200 chars."""
    if stream is None:
        return ""
    try:
        size = os.fstat(stream.fileno()).st_size
        data = os.pread(stream.fileno(), 4096, max(0, size - 4096))
        lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return " ".join(lines[-1].split())[:200] if lines else ""


__all__ = ["DEFAULT_CALL_TIMEOUT_S", "DEFAULT_START_TIMEOUT_S", "McpCallError", "McpManager", "ServerStatus",
           "server_directory", "server_environment", "timeout_from"]
