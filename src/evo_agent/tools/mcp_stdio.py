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
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

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


async def stop(proc: Any) -> None:
    """Close its stdin, then end its process group if it does not exit on its own."""
    import anyio

    with suppress(Exception):
        await proc.stdin.aclose()
    if not await _exited(proc, STOP_GRACE_S):
        _signal_group(proc, signal.SIGTERM)
        if not await _exited(proc, KILL_GRACE_S):
            _signal_group(proc, signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE_S), suppress(Exception):
        await proc.aclose()


@asynccontextmanager
async def process_streams(proc: Any) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) of SessionMessages over `proc`'s stdout and stdin; the process is stopped
    when the context ends."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    read_writer: MemoryObjectSendStream[SessionMessage | Exception]
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception]
    write_stream: MemoryObjectSendStream[SessionMessage]
    write_reader: MemoryObjectReceiveStream[SessionMessage]
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)

    async def stdout_reader() -> None:
        buffer = b""
        try:
            async with read_writer:
                async for chunk in proc.stdout:
                    lines = (buffer + chunk).split(b"\n")
                    buffer = lines.pop()
                    for line in lines:
                        if not line.strip():
                            continue
                        try:
                            message: Any = SessionMessage(
                                mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except ValueError as exc:
                            message = exc
                        await read_writer.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            pass

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
