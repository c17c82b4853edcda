"""The `read_file` tool: a window of a text file, numbered like `cat -n`.

Line numbers let the model cite and edit precisely; offset/limit let it page
through big files without pulling them whole into its context.
"""

from __future__ import annotations

import io
import os
import stat

from ._common import (
    PathChanged,
    bounded_lines,
    checked_path,
    display_path,
    error,
    guarded,
    is_binary_bytes,
    open_checked,
    open_failure,
    resolve_path,
)
from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# A safety net on top of `limit`: 2000 lines of 2000 characters would be 4 MB.
MAX_OUTPUT_CHARS = 100_000


def _positive_int(tool_input: dict[str, Any], key: str, default: int) -> int | str:
    raw = tool_input.get(key)
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        return f"{key} must be an integer"
    if raw < 1:
        return f"{key} must be at least 1"
    return raw


@guarded("read_file")
def run_read_file(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path_arg = tool_input.get("path")
    if not isinstance(path_arg, str) or not path_arg:
        return error("path must be a non-empty string")
    offset = _positive_int(tool_input, "offset", 1)
    limit = _positive_int(tool_input, "limit", DEFAULT_LIMIT)
    if isinstance(offset, str):
        return error(offset)
    if isinstance(limit, str):
        return error(limit)

    path = resolve_path(ctx, path_arg)
    shown = display_path(ctx, path)
    try:
        # The checked path itself, with no symlink followed on the way (O_NONBLOCK: a FIFO never blocks).
        fd = open_checked(ctx, checked_path(ctx, path_arg), os.O_RDONLY | os.O_NONBLOCK)
    except PathChanged as exc:
        return error(str(exc))
    except OSError as exc:
        return error(open_failure(shown, exc))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            return error(f"{shown} is a directory, not a file (use glob to list it)")
        return error(f"{shown} is not a regular file")
    with os.fdopen(fd, "rb") as raw:
        if is_binary_bytes(raw.read(8192)):
            return error(f"{shown} looks like a binary file; not shown")
        raw.seek(0)
        out, total, last_shown, stopped_for_size = _window(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"),
                                                           offset, limit)

    if total == 0:
        return ToolResult(f"({shown} is empty)")
    if offset > total:
        return error(f"offset {offset} is past the end of {shown}, which has {total} lines")
    text = "\n".join(out)
    if last_shown < total:
        why = f" (output capped at {MAX_OUTPUT_CHARS} characters)" if stopped_for_size else ""
        text += (
            f"\n[showing lines {offset}-{last_shown} of {total}{why}; "
            f"use offset={last_shown + 1} to read more]"
        )
    return ToolResult(text)


def _window(f: io.TextIOWrapper, offset: int, limit: int) -> tuple[list[str], int, int, bool]:
    """The numbered lines offset..offset+limit-1 of `f`, the file's line count, the last line shown, and
    whether the output stopped at MAX_OUTPUT_CHARS."""
    out: list[str] = []
    size = total = last_shown = 0
    stopped_for_size = False
    for n, (line, length) in enumerate(bounded_lines(f), start=1):
        total = n
        if n < offset or n >= offset + limit or stopped_for_size:
            continue
        line = line.rstrip("\r")
        if length > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... line truncated, {length} characters in all]"
        entry = f"{n:>6}\t{line}"
        if size + len(entry) + 1 > MAX_OUTPUT_CHARS and out:
            stopped_for_size = True
            continue
        out.append(entry)
        size += len(entry) + 1
        last_shown = n
    return out, total, last_shown, stopped_for_size


FACTS = ToolFacts("read_file", kind="read", approval="read", label_arg="path", path_arg="path", opens_path=True,
                  result_lines=1)

READ_FILE_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Read a text file, with line numbers like `cat -n`. Relative paths are resolved "
        "against the working directory. offset is the 1-based first line (default 1); "
        "limit is the number of lines (default 2000). Lines over 2000 characters are truncated."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read."},
            "offset": {"type": "integer", "description": "1-based line to start at."},
            "limit": {"type": "integer", "description": "How many lines to read (default 2000)."},
        },
        "required": ["path"],
    },
    run=run_read_file,
)
