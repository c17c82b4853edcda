"""The `memory` tool (SPEC §11): Anthropic's memory tool — its commands, parameter names and answers — over
`session.MemoryStore`, as an ordinary tool every provider can call.

`view` {path, view_range?}, `create` {path, file_text}, `str_replace` {path, old_str, new_str}, `insert`
{path, insert_line, insert_text}, `delete` {path}, `rename` {old_path, new_path}. A model trained on
Anthropic's tool already knows them; the paths are `/memories/project/…` and `/memories/user/…`.

A write is planned before anyone is asked (`precheck`): a bad path, a missing `old_str`, a write aimed at
MEMORY.md or one that would store a secret fails there, with its reason, before a question. What an approval
shows is the planned change's diff (`preview`). The tool knows nothing of the agent: what it needs is a
`MemoryHooks` (the store, and `changed()` to record each change as a `memory_write` record).
"""

from __future__ import annotations

from evo_agent.session import MEMORY_COMMANDS, MemoryChange, MemoryRefused, MemoryStore

from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # a Protocol is the type checker's: at run time a plain base class (typing is ~12 M instructions)
    Protocol = object

MEMORY_TOOL_NAME = "memory"


def memory_path(tool_input: dict[str, Any]) -> object:
    """The path a call acts on: `old_path` for a rename, else `path` (unchecked: the store parses it)."""
    return tool_input.get("old_path") if tool_input.get("command") == "rename" else tool_input.get("path")


def _label(tool_input: dict[str, Any]) -> str:
    """`create /memories/project/testing.md`: the command and the path it acts on."""
    return " ".join(v for v in (tool_input.get("command"), memory_path(tool_input)) if isinstance(v, str) and v)


# Its facts (tools/registry.py): the gate judges each command (view runs, a write asks like an edit).
FACTS = ToolFacts(MEMORY_TOOL_NAME, kind="write", approval="memory", label=_label)

_PATH = {"type": "string", "description": "A path under /memories/project/ (this project's memory, shared with the "
                                          "team) or /memories/user/ (the user's own, every project)."}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "enum": list(MEMORY_COMMANDS)},
        "path": _PATH,
        "view_range": {"type": "array", "items": {"type": "integer"},
                       "description": "view: [start, end] line numbers (end -1: to the end of the file)."},
        "file_text": {"type": "string", "description": "create: the whole file, front matter first."},
        "old_str": {"type": "string", "description": "str_replace: text that occurs exactly once in the file."},
        "new_str": {"type": "string", "description": "str_replace: what replaces it."},
        "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0: at the top)."},
        "insert_text": {"type": "string", "description": "insert: the text to insert."},
        "old_path": {"type": "string", "description": "rename: the file's path now."},
        "new_path": {"type": "string", "description": "rename: its new path (same scope)."},
    },
    "required": ["command"],
}

DESCRIPTION = (
    "Auto Memory that lasts across sessions: view, create, str_replace, insert, delete and rename files under "
    "/memories/project/ (this project, shared with the team through the repository) and /memories/user/ (the "
    "user's own preferences, private, every project). Keep one subject per topic file; each starts with front "
    "matter:\n---\nname: <short title>\ndescription: <one line: what it holds and when it is useful>\ntype: "
    "<user | feedback | project | reference>\n---\n(user: who the user is; feedback: how they want you to work; "
    "project: facts about this project; reference: where to find things). evo-agent keeps each scope's "
    "MEMORY.md index in step with the front matter (you cannot write MEMORY.md); the indexes are in your "
    "instructions, so view a topic file when its entry is relevant. Save what will help in a later session — "
    "a correction, a preference, a non-obvious fact about the project — not what the code or git already "
    "say, and never secrets. Update or delete a memory that turned out wrong."
)


class MemoryHooks(Protocol):
    """What the memory tool needs of whoever runs it."""

    store: MemoryStore

    def changed(self, change: MemoryChange) -> None:
        """A change landed on disk: record it (`memory_write`)."""


def plan_write(store: MemoryStore, tool_input: dict[str, Any]) -> MemoryChange | None:
    """The change a write call would make (None for view); MemoryRefused when it cannot be made."""
    command = tool_input.get("command")
    if command == "view":
        return None
    return store.plan(str(command), tool_input)


def preview(store: MemoryStore, tool_input: dict[str, Any]) -> tuple[str, str]:
    """(one line saying what the call does, the diff it would make): what an approval shows."""
    command = str(tool_input.get("command"))
    try:
        change = plan_write(store, tool_input)
    except (MemoryRefused, OSError) as exc:
        return f"memory {command}", f"(cannot be done: {exc})"
    if change is None:
        return f"memory view {tool_input.get('path')}", ""
    target = f"{change.path} → {change.new_path}" if change.new_path else change.path
    return f"memory {command} {target}", change.diff()


def make_memory_tool(hooks: MemoryHooks) -> Tool:
    """The tool over `hooks`; a refusal is an `is_error` result of one line (or a few), never an exception."""

    def run(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = tool_input.get("command")
        try:
            if command == "view":
                return ToolResult(hooks.store.view(tool_input.get("path"), tool_input.get("view_range")))
            change = plan_write(hooks.store, tool_input)
            assert change is not None
            result = hooks.store.apply(change)
        except MemoryRefused as exc:
            return ToolResult(str(exc), is_error=True)
        except OSError as exc:
            return ToolResult(f"memory {command} failed: {exc.strerror or exc}", is_error=True)
        hooks.changed(change)
        index = hooks.store.index(change.scope)
        files = f"{index.lines} topic file{'s' if index.lines != 1 else ''}"
        note = f"\n/memories/{change.scope}/MEMORY.md now lists {files}."
        if index.truncated:
            note += " It is past its bound: consolidate (merge related topic files, delete stale ones)."
        return ToolResult(result + note)

    def precheck(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult | None:
        """A call that cannot succeed fails before anyone is asked (nothing is written, nothing asked)."""
        if tool_input.get("command") not in MEMORY_COMMANDS:
            return ToolResult(f"command must be one of {', '.join(MEMORY_COMMANDS)}", is_error=True)
        try:
            plan_write(hooks.store, tool_input)
        except MemoryRefused as exc:
            return ToolResult(str(exc), is_error=True)
        return None

    return Tool(MEMORY_TOOL_NAME, DESCRIPTION, SCHEMA, run, precheck=precheck, facts=FACTS)


__all__ = ["FACTS", "MEMORY_TOOL_NAME", "MemoryHooks", "make_memory_tool", "memory_path", "plan_write", "preview"]
