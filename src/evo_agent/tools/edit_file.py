"""The `edit_file` tool: replace one exact, unique snippet in a file.

Requiring exactly one match makes an edit unambiguous: if the model's
old_string is stale or too short, it gets a clear error instead of a change in
the wrong place. The file is read and written without newline translation so
CRLF files stay CRLF, and non-UTF-8 files are refused rather than corrupted.
"""

from __future__ import annotations

import os
import stat

from ._common import (
    error,
    guarded,
    is_binary_bytes,
    open_checked,
    open_failure,
    overwrite,
    resolve_path,
    writable_target,
)
from .base import Tool, ToolContext, ToolFacts, ToolResult
from .confine import inside_project, resolve_in

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any


def _arguments(tool_input: dict[str, Any]) -> tuple[str, str, str] | ToolResult:
    path_arg = tool_input.get("path")
    old = tool_input.get("old_string")
    new = tool_input.get("new_string")
    if not isinstance(path_arg, str) or not path_arg:
        return error("path must be a non-empty string")
    if not isinstance(old, str) or not isinstance(new, str):
        return error("old_string and new_string must be strings")
    if old == "":
        return error("old_string is empty; use write_file to create or replace a whole file")
    if old == new:
        return error("old_string and new_string are identical; nothing to change")
    return path_arg, old, new


def _read(fd: int, shown: str) -> str | ToolResult:
    """The file's text (no newline translation, so CRLF stays CRLF), or why it cannot be edited."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return error(f"{shown} is not a regular file")
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    data = b"".join(chunks)
    if is_binary_bytes(data):
        return error(f"{shown} looks like a binary file; not edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return error(f"{shown} is not valid UTF-8; not edited")


def _applies(text: str, old: str, shown: str) -> ToolResult | None:
    count = text.count(old)
    if count == 0:
        return error(f"old_string not found in {shown}")
    if count > 1:
        return error(f"old_string found {count} times in {shown}; give more context so it matches exactly once")
    return None


def _open(ctx: ToolContext, path_arg: str, flags: int) -> tuple[int, str] | ToolResult:
    checked = writable_target(ctx, path_arg, "edited")
    if isinstance(checked, ToolResult):
        return checked
    target, shown = checked
    try:
        return open_checked(ctx, target, flags | os.O_NONBLOCK), shown
    except OSError as exc:
        return error(open_failure(shown, exc))


def precheck_edit_file(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
    """Before the user is asked: an edit that cannot apply fails now, not after a "yes".

    Only inside the project, where reads need nobody's approval: outside it, saying whether a string
    occurs in a file would let the model read, unasked, a file that reading needs approval for.
    """
    args = _arguments(tool_input)
    if isinstance(args, ToolResult):
        return args
    path_arg, old, _ = args
    if not inside_project(ctx.project_dir, resolve_in(ctx.work_dir, path_arg)):
        return None
    opened = _open(ctx, path_arg, os.O_RDONLY)
    if isinstance(opened, ToolResult):
        return opened
    fd, shown = opened
    try:
        text = _read(fd, shown)
    finally:
        os.close(fd)
    return text if isinstance(text, ToolResult) else _applies(text, old, shown)


@guarded("edit_file")
def run_edit_file(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    args = _arguments(tool_input)
    if isinstance(args, ToolResult):
        return args
    path_arg, old, new = args
    opened = _open(ctx, path_arg, os.O_RDWR)
    if isinstance(opened, ToolResult):
        return opened
    fd, shown = opened
    try:
        text = _read(fd, shown)
        if isinstance(text, ToolResult):
            return text
        failed = _applies(text, old, shown)
        if failed is not None:
            return failed
        start = text.index(old)
        line = text.count("\n", 0, start) + 1
        path = resolve_path(ctx, path_arg)
        if ctx.file_history is not None:
            ctx.file_history.before_change(path, ctx.tool_use_id)
        data = text.replace(old, new, 1).encode("utf-8")
        try:
            overwrite(fd, data)
        except OSError as exc:
            return error(f"{shown} was not edited: {exc.strerror or exc}; the file is as it was")
    finally:
        os.close(fd)
    if ctx.file_history is not None:
        ctx.file_history.after_change(path, ctx.tool_use_id)
    removed = old.count("\n") + 1
    added = new.count("\n") + 1
    return ToolResult(f"Edited {shown} at line {line}: replaced {removed} line(s) with {added} line(s)")


def _change(tool_input: dict[str, Any]) -> tuple[str | None, str] | None:
    """old_string becoming new_string (where in the file, the tool's result says: "at line N")."""
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    return (old, new) if isinstance(old, str) and isinstance(new, str) else None


FACTS = ToolFacts("edit_file", kind="write", approval="edit", label_arg="path", path_arg="path", opens_path=True,
                  verb="edit", change_of=_change)

EDIT_FILE_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Replace old_string with new_string in a file. old_string must match the file's "
        "text exactly (including whitespace) and occur exactly once; include surrounding "
        "lines to make it unique."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to edit."},
            "old_string": {"type": "string", "description": "Exact text to replace; must be unique."},
            "new_string": {"type": "string", "description": "Replacement text."},
        },
        "required": ["path", "old_string", "new_string"],
    },
    run=run_edit_file,
    precheck=precheck_edit_file,
)
