"""The `write_file` tool: create or overwrite a file with exact content.

Content is written verbatim (no newline translation) as UTF-8, and missing
parent directories are created, so the model can scaffold files in one call.
"""

from __future__ import annotations

import errno
import os
import stat

from ._common import error, guarded, open_checked, open_failure, overwrite, resolve_path, writable_target
from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any


@guarded("write_file")
def run_write_file(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path_arg = tool_input.get("path")
    content = tool_input.get("content")
    if not isinstance(path_arg, str) or not path_arg:
        return error("path must be a non-empty string")
    if not isinstance(content, str):
        return error("content must be a string")

    path = resolve_path(ctx, path_arg)  # as named: what the file history records
    checked = writable_target(ctx, path_arg, "written")
    if isinstance(checked, ToolResult):
        return checked
    target, shown = checked
    try:
        mode: int | None = os.lstat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        return error(f"{shown} is a directory; cannot write a file there")
    if mode is not None and not stat.S_ISREG(mode):
        # A FIFO (an unpacked archive keeps them) would hold the open until some reader came, forever.
        return error(f"{shown} is not a regular file; not written")
    existed = mode is not None
    data = content.encode("utf-8")
    if ctx.file_history is not None:
        ctx.file_history.before_change(path, ctx.tool_use_id)
    try:
        # The checked path itself: parents made and the file opened without following any symlink; without
        # blocking, so a FIFO put there since the check fails (ENXIO) or is refused below, never waited on.
        fd = open_checked(ctx, target, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, create_dirs=True)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return error(f"{shown} is not a regular file; not written")
        return error(f"not written: {open_failure(shown, exc)}")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return error(f"{shown} is not a regular file; not written")
    try:
        overwrite(fd, data)  # not O_TRUNC: a full disk must find the old text still there
    except OSError as exc:
        if not existed:
            _unlink_quietly(target)
        return error(f"{shown} was not written: {exc.strerror or exc}; "
                     + ("the file is as it was" if existed else "nothing was created"))
    finally:
        os.close(fd)
    if ctx.file_history is not None:
        ctx.file_history.after_change(path, ctx.tool_use_id)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    verb = "Overwrote" if existed else "Created"
    return ToolResult(f"{verb} {shown}: {len(data)} bytes, {lines} line{'s' if lines != 1 else ''}")


def _change(tool_input: dict[str, Any]) -> tuple[str | None, str] | None:
    """The whole file replaced by `content`."""
    content = tool_input.get("content")
    return (None, content) if isinstance(content, str) else None


FACTS = ToolFacts("write_file", kind="write", approval="edit", label_arg="path", path_arg="path", opens_path=True,
                  verb="write", change_of=_change)

WRITE_FILE_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Write a file with exactly the given content, replacing it if it exists. "
        "Parent directories are created. Relative paths are resolved against the working directory."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to write."},
            "content": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "content"],
    },
    run=run_write_file,
)


def _unlink_quietly(path: Any) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
