"""The stdio transport of an MCP server whose process was spawned before the SDK was imported.

Importing the `mcp` SDK takes 1.5–3 s on the 2-core machine, and so does starting a Python server; the
SDK's own `stdio_client` spawns only once it is imported, so the two waits would add up before the first
request. Here the process is spawned first (anyio only, ~0.1 s to import), the SDK imported while the
server starts, and then these streams join the two, as `stdio_client` would: one JSON-RPC message per
line each way, a line the SDK cannot parse handed to the session as an error. Closing follows the SDK's
policy (MCP lifecycle, "shutdown"): stdin closed, a grace period, SIGTERM to the process group, SIGKILL.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

MAX_MESSAGE_BYTES = 64 << 20  # one JSON-RPC line; a result is cut to 50,000 characters and 20 images anyway
STOP_GRACE_S = 2.0  # a server told to stop has this long to exit before it is killed
KILL_GRACE_S = 2.0
_POLL_S = 0.01


async def spawn(argv: list[str], env: dict[str, str], cwd: str, stderr: Any) -> Any:
    """The server's process (an anyio Process) in a session and process group of its own."""
    import anyio

    return await anyio.open_process(argv, env=env, cwd=cwd, stderr=stderr, start_new_session=True)


async def _exited(proc: Any, timeout: float) -> bool:
    import anyio

    with anyio.move_on_after(timeout):
        while proc.returncode is None:
            await anyio.sleep(_POLL_S)
    return proc.returncode is not None


def _signal_group(proc: Any, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def stop(proc: Any, grace: float = STOP_GRACE_S) -> None:
    """Close its stdin, then end its process group if it does not exit on its own within `grace` seconds."""
    import anyio

    with suppress(Exception):
        await proc.stdin.aclose()
    if not await _exited(proc, grace):
        _signal_group(proc, signal.SIGTERM)
        if not await _exited(proc, KILL_GRACE_S):
            _signal_group(proc, signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE_S), suppress(Exception):
        await proc.aclose()


_ANSWER_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')


def unreadable_answer(line: bytes) -> Any:
    """The error answer (a SessionMessage) of the request a line names when no parser takes that line, else None.

    An answer nested past the parser's limit, not UTF-8 or with a trailing comma was handed to the session as
    an unreadable line, and the call it answers waited out its whole timeout. Its id is found by its key (the
    first `"id": …` of a line that has a result or an error); a wrong guess fails a call of this server only.
    """
    import json

    import mcp_types
    from mcp.shared.message import SessionMessage

    if b'"result"' not in line and b'"error"' not in line:
        return None
    found = _ANSWER_ID.search(line)
    if found is None:
        return None
    try:
        request_id = json.loads(found.group(1))
    except ValueError:
        return None
    error = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message="the server's answer could not be read "
                                "(not JSON, not UTF-8, or nested too deep)")
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@asynccontextmanager
async def process_streams(proc: Any, on_fault: Callable[[str], None] | None = None
                          ) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) of SessionMessages over `proc`'s stdout and stdin; the process is stopped
    when the context ends. A message longer than MAX_MESSAGE_BYTES ends the connection: `on_fault` is told
    why, the process killed, the read stream closed (a call in flight fails at once)."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    read_writer: MemoryObjectSendStream[SessionMessage | Exception]
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception]
    write_stream: MemoryObjectSendStream[SessionMessage]
    write_reader: MemoryObjectReceiveStream[SessionMessage]
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)

    async def deliver(line: bytes) -> None:
        if not line.strip():
            return
        try:
            message: Any = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            message = unreadable_answer(line) or exc
        await read_writer.send(message)

    async def stdout_reader() -> None:
        pending: list[bytes] = []  # the line so far, in pieces: joined once, never copied chunk by chunk
        size = 0
        try:
            async with read_writer:
                async for chunk in proc.stdout:
                    start, end = 0, chunk.find(b"\n")
                    while end >= 0 and size + end - start <= MAX_MESSAGE_BYTES:
                        line = b"".join([*pending, chunk[start:end]]) if pending else chunk[start:end]
                        pending, size, start = [], 0, end + 1
                        await deliver(line)
                        end = chunk.find(b"\n", start)
                    if end < 0 and start < len(chunk):  # the rest is the start of the next line
                        pending.append(chunk[start:])
                        size += len(chunk) - start
                    if end >= 0 or size > MAX_MESSAGE_BYTES:  # a line past the cap, ended or not
                        too_large()
                        return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass

    def too_large() -> None:
        """A message past MAX_MESSAGE_BYTES: the server is broken or hostile; it is ended, and says why."""
        if on_fault is not None:
            on_fault(f"it sent a message larger than {MAX_MESSAGE_BYTES >> 20} MB")
        _signal_group(proc, signal.SIGKILL)

    async def stdin_writer() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await proc.stdin.send(data.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the end instead of waiting for an answer

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                write_stream.close()
                await stop(proc)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    with suppress(Exception):
                        await stream.aclose()
            tg.cancel_scope.cancel()


__all__ = ["process_streams", "spawn", "stop"]
