"""The `edit_file` tool: replace one exact, unique snippet in a file.

Requiring exactly one match makes an edit unambiguous: if the model's
old_string is stale or too short, it gets a clear error instead of a change in
the wrong place. The file is read and written without newline translation so
CRLF files stay CRLF, and non-UTF-8 files are refused rather than corrupted.
"""

from __future__ import annotations

from ._common import display_path, error, guarded, is_binary_file, resolve_path
from .base import Tool, ToolContext, ToolResult
from .confine import in_agent_dir, real


@guarded("edit_file")
def run_edit_file(tool_input: dict, ctx: ToolContext) -> ToolResult:
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

    path = resolve_path(ctx, path_arg)
    shown = display_path(ctx, path)
    if in_agent_dir(ctx.project_dir, real(path)):  # also checked by the permission gate; kept here too
        return error(f"{shown} is in .evo-agent/, the agent's own transcripts and rules; not edited")
    if not path.exists():
        return error(f"file not found: {shown}")
    if not path.is_file():
        return error(f"{shown} is not a regular file")
    if is_binary_file(path):
        return error(f"{shown} looks like a binary file; not edited")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except UnicodeDecodeError:
        return error(f"{shown} is not valid UTF-8; not edited")

    count = text.count(old)
    if count == 0:
        return error(f"old_string not found in {shown}")
    if count > 1:
        return error(f"old_string found {count} times in {shown}; give more context so it matches exactly once")

    start = text.index(old)
    line = text.count("\n", 0, start) + 1
    if ctx.file_history is not None:
        ctx.file_history.before_change(path, ctx.tool_use_id)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(old, new, 1))
    if ctx.file_history is not None:
        ctx.file_history.after_change(path, ctx.tool_use_id)
    removed = old.count("\n") + 1
    added = new.count("\n") + 1
    return ToolResult(f"Edited {shown} at line {line}: replaced {removed} line(s) with {added} line(s)")


EDIT_FILE_TOOL = Tool(
    name="edit_file",
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
)
