"""Helpers shared by the file tools: path resolution, opening what was checked, binary sniffing, safe wrapping.

Kept in one place so every tool resolves paths the same way (relative to the
directory the user started in, `ctx.work_dir`, never to the agent's own working directory) and fails the same way
(an `is_error` result, never an exception that would end the agent loop).
"""

from __future__ import annotations

import errno
import functools
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from .base import ToolContext, ToolResult
from .confine import in_agent_dir, in_user_config, real, resolve_in
from .safe_open import SymlinkInPath, open_file

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    RunFn = Callable[[dict[str, Any], ToolContext], ToolResult]

# How many leading bytes are inspected to decide whether a file is binary.
_SNIFF_BYTES = 8192


def error(message: str) -> ToolResult:
    """An error result whose text is a single line, as the model sees it."""
    return ToolResult(" ".join(message.split()) or "error", is_error=True)


def guarded(tool_name: str) -> Callable[[RunFn], RunFn]:
    """Turn any unexpected exception from a tool into an `is_error` result.

    A failing tool must never end the agent loop, so even a bug in a tool
    surfaces to the model as a one-line error it can react to.
    KeyboardInterrupt/SystemExit still propagate: they mean the user wants out.
    """

    def wrap(fn: RunFn) -> RunFn:
        @functools.wraps(fn)
        def run(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
            try:
                return fn(tool_input, ctx)
            except Exception as exc:  # noqa: BLE001 - the whole point
                return error(f"{tool_name} failed: {type(exc).__name__}: {exc}")

        return run

    return wrap


def resolve_path(ctx: ToolContext, path: str) -> Path:
    """Resolve a model-given path: `~` expanded, relative paths under the working directory (the start directory)."""
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = ctx.work_dir / p
    return p


class PathChanged(Exception):
    """The path no longer points where it pointed when it was checked; one line for the model."""


def checked_path(ctx: ToolContext, path: str) -> Path:
    """The real path a file tool opens for the model's `path`: the one the permission gate checked.

    Resolved again here; when it no longer matches what the gate checked (a symlink swapped in since),
    the call is refused rather than sent somewhere nobody checked.
    """
    resolved = resolve_in(ctx.work_dir, path)
    if ctx.checked_path is not None and resolved != Path(ctx.checked_path):
        raise PathChanged(f"{path} now points somewhere else than when it was checked (a symlink changed); "
                          "not opened")
    return resolved



def writable_target(ctx: ToolContext, path_arg: str, verb: str) -> tuple[Path, str] | ToolResult:
    """(the checked real path a write or edit opens, the path as shown) or the error result refusing it.

    Refused: a path that resolves differently than when the gate checked it, and anything in
    `.evo-agent/` or the user's evo-agent config (the gate refuses both too; kept here so no caller can skip
    it). `verb`: "written", "edited".
    """
    path = resolve_path(ctx, path_arg)
    shown = display_path(ctx, path)
    try:
        target = checked_path(ctx, path_arg)
    except PathChanged as exc:
        return error(str(exc))
    if in_agent_dir(ctx.project_dir, target):
        return error(f"{shown} is in .evo-agent/, the agent's own transcripts and rules; not {verb}")
    if in_user_config(target):
        return error(f"{shown} is in the user's own evo-agent config; not {verb}")
    return target, shown

def open_checked(ctx: ToolContext, path: Path, flags: int, *, create_dirs: bool = False) -> int:
    """`os.open` of a checked (real) path without following any symlink on the way (tools/safe_open.py)."""
    return open_file(path, flags, root=real(ctx.project_dir), create_dirs=create_dirs)


def overwrite(fd: int, data: bytes) -> None:
    """Make the open regular file hold exactly `data`, in place (its inode, links and owner kept); raises OSError.

    The blocks the new text needs are reserved first, so a full disk refuses it while the file is still as
    it was: truncating and then writing left the user's file empty or cut when the write ran out of space
    (tests/faults/test_file_tools_disk.py). The file only grows by the reservation, and shrinks at the end.
    """
    size = os.fstat(fd).st_size
    reserve = getattr(os, "posix_fallocate", None)  # not on every platform (macOS): written unreserved there
    if len(data) > size and reserve is not None:
        try:
            reserve(fd, 0, len(data))
        except OSError as exc:
            try:
                os.ftruncate(fd, size)  # a fallback that wrote part of the reservation: the old text only
            except OSError:
                pass
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                raise
            # a file system that cannot reserve (EOPNOTSUPP, EINVAL…): written as before, unreserved
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
    os.ftruncate(fd, len(data))


def open_failure(shown: str, exc: OSError) -> str:
    """One line for an open that failed."""
    if isinstance(exc, SymlinkInPath):
        return f"{shown}: a symbolic link appeared in the path after it was checked; not followed"
    if isinstance(exc, FileNotFoundError):
        return f"file not found: {shown}"
    if isinstance(exc, IsADirectoryError):
        return f"{shown} is a directory, not a file"
    return f"{shown}: {exc.strerror or exc}"


def display_path(ctx: ToolContext, path: Path) -> str:
    """The path as shown to the model: relative to the working directory when inside the project (so the
    model can pass it back as it is: `../lib/x.py` from a start in `web/`), else absolute."""
    try:
        path.relative_to(ctx.project_dir)
    except ValueError:
        return str(path)
    return Path(os.path.relpath(path, ctx.work_dir)).as_posix()


def is_binary_file(path: Path) -> bool:
    """Heuristic used by git and grep: a NUL byte near the start means binary (a FIFO or device counts as binary:
    it is never read)."""
    f = open_regular(path)
    if f is None:
        return True
    with f:
        return is_binary_bytes(f.read(_SNIFF_BYTES))


def open_regular(path: Path) -> io.BufferedReader | None:
    """`path` opened for reading when it is a regular file, else None: opened without blocking, so a FIFO (which
    an unpacked archive can put anywhere) is refused, never waited on."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


LINE_KEEP_CHARS = 1 << 20  # characters of one line the file tools hold; the rest of a longer line is counted


def bounded_lines(f: io.TextIOWrapper, keep: int = LINE_KEEP_CHARS) -> Iterator[tuple[str, int]]:
    """Each line of `f` as (its first `keep` characters, its whole length), line break left out.

    `for line in f` holds a whole line: a file committed as one line of gigabytes (git compresses a 3 GB run of
    one letter to a few MB; a clone checks it out whole) took three times its size in the agent's own memory on an
    unasked `grep` or `read_file`, and the kernel killed the agent. The rest of a longer line is read on and
    counted, never kept."""
    while True:
        head = f.readline(keep)
        if not head:
            return
        length, ended = len(head), head.endswith("\n")
        while not ended:
            more = f.readline(keep)
            if not more:
                break
            length, ended = length + len(more), more.endswith("\n")
        yield head.removesuffix("\n"), length - ended


def is_binary_bytes(data: bytes) -> bool:
    """The same heuristic on bytes already read (the start of a file)."""
    return b"\0" in data[:_SNIFF_BYTES]


