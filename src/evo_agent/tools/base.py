"""The shape of a tool: a JSON schema for the model, a function that runs it, and its facts.

A tool's facts (`ToolFacts`) are what the rest of evo-agent needs to know about it besides running it: how
the permission gate judges a call, which argument is the path it touches, how a front end labels a call,
whether several calls run at once. They are declared once, beside the tool, and looked up by name through
`tools/registry.py` (a name is all a transcript, a front end or the gate has of a call).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from evo_agent.session import plain_dataclass as dataclass
from evo_agent.session import plain_field as field

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Literal

# The names of MCP servers' tools start with it (tools/mcp_tools.py builds them; the registry knows the family by it).
MCP_PREFIX = "mcp__"

# What a call does to the world, as read-only mode judges it.
_KINDS = ("read", "write", "exec", "internal")
# How the permission gate (agent/permissions.py) decides a call:
#   read   — runs inside the project, asks outside it; `Read(…)` rules
#   edit   — asks (accept-edits runs it inside the project), never in .evo-agent/; `Edit(…)` rules
#   bash   — the shell allowlist runs read-only commands, the rest asks; `Bash(…)` rules
#   plan   — the Session Plan: runs unasked; its writes are refused in read-only mode
#   memory — Auto Memory: view runs, a write asks like an edit (the user's memory even in accept-edits)
#   mcp    — an MCP server's tool: asks like bash; `mcp__server__tool` rules; a trusted readOnlyHint runs
#   none   — no side effect of its own (compact; a subagent's calls are gated one by one): never asked
#   ask    — a tool nothing is known of: asks, refused in read-only mode
_APPROVALS = ("read", "edit", "bash", "plan", "memory", "mcp", "none", "ask")
if TYPE_CHECKING:  # the same values as Literal types, for the type checker
    Kind = Literal["read", "write", "exec", "internal"]
    Approval = Literal["read", "edit", "bash", "plan", "memory", "mcp", "none", "ask"]


def __getattr__(name: str) -> Any:
    """`Kind` and `Approval` at run time (tests read their values), made when first asked for: typing
    (~12 M instructions) is not loaded before `-p`'s first request (issue #30)."""
    values = {"Kind": _KINDS, "Approval": _APPROVALS}.get(name)
    if values is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Literal

    return Literal[values]


@dataclass(frozen=True)
class ToolFacts:
    """What evo-agent knows of a tool besides its schema: declared once, beside the tool (tools/registry.py)."""

    name: str
    kind: Kind
    approval: Approval
    # The input field a call's one-line label shows (`bash(ls -la)`), and Ctrl+O shows whole.
    label_arg: str | None = None
    # A label one field cannot give (`grep("x" in src)`, `memory(create /memories/…)`); None from it: the default.
    label: Callable[[dict[str, Any]], str | None] | None = None
    # The input field naming the path a `read`/`edit` call touches: the gate resolves and judges it.
    path_arg: str | None = None
    # Where a call reaches when no field says it plainly (glob: the literal directory its pattern starts from).
    path_of: Callable[[dict[str, Any]], str] | None = None
    # The call names one file, which the tool opens exactly as the gate checked it (ctx.checked_path);
    # a compaction's summary lists it among the files the agent touched.
    opens_path: bool = False
    # What an approval says the call does to its path ("write", "edit").
    verb: str = ""
    # The change a call makes, as (old text, new text) — old None: the whole file is replaced — for the
    # diff an approval and the transcript show; None when the input does not say.
    change_of: Callable[[dict[str, Any]], tuple[str | None, str] | None] | None = None
    # How many lines of a result the transcript previews (None: the front end's default).
    result_lines: int | None = None
    # Several calls of one response run at once, each in its own thread (subagents).
    parallel: bool = False


@dataclass
class ToolContext:
    """What a running tool may know about the world around it."""

    project_dir: Path
    cancel: threading.Event = field(default_factory=threading.Event)
    tool_use_id: str = ""  # the id of the call being run (the task tool names its sidechain by it)
    sandbox: Any = None  # a tools.sandbox.Sandbox when bash must run inside bubblewrap (--sandbox)
    # A tools.shell_readonly.ReadOnlyPlan when the permission gate let this bash call run unasked: the
    # bash tool then runs the plan's command (not the model's text), in the read-only sandbox.
    read_only: Any = None
    # The command a user's rule approved, as it runs instead of the model's text: a read-only git subcommand with
    # unasked git's protection (shell_readonly.plan_ruled_git). None: the model's command runs as written.
    ruled_command: str | None = None
    # Keeps what the file tools change, for rewinds (`before_change(path, tool_use_id)`/`after_change`);
    # a `evo_agent.session.file_history.FileHistory`, or None when nothing is recorded.
    file_history: Any = None
    # The real path the permission gate checked for a file tool's `path` (None: nothing was checked, as
    # when a tool runs outside the agent loop). The tool opens exactly this, or refuses (tools/safe_open.py).
    checked_path: Path | None = None
    # The directory the user started in (inside the project): where bash runs and relative paths point.
    # None: the project directory. Confinement stays the project's (confine.py), whatever this says.
    cwd: Path | None = None

    @property
    def work_dir(self) -> Path:
        """Where relative paths are resolved and commands run: the start directory when it lies inside the
        project (the permission checks judge from the same place), else the project."""
        if self.cwd is None:
            return Path(self.project_dir)
        from .confine import inside_project, real

        return Path(self.cwd) if inside_project(self.project_dir, real(self.cwd)) else Path(self.project_dir)


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    # Blocks the API takes besides text (an MCP tool's images), sent after `content` in the tool_result.
    blocks: list[dict[str, Any]] | None = None
    # One line for the user (the agent loop tells the front end): what the call did that they must know of.
    notice: str | None = None


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any], ToolContext], ToolResult]
    # Run before the call is asked about: an error result here fails the call without a question
    # (an edit whose old_string is not in the file); None means it may go on to the permission gate.
    precheck: Callable[[dict[str, Any], ToolContext], ToolResult | None] | None = None
    # Its facts (ToolFacts above), the same object the registry answers for its name.
    facts: ToolFacts | None = None

    def api_spec(self) -> dict[str, Any]:
        """The tool as the Anthropic Messages API wants it in `tools`."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}
