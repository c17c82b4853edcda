"""The shape of a tool: a JSON schema for the model and a function that runs it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any], ToolContext], ToolResult]
    # Run before the call is asked about: an error result here fails the call without a question
    # (an edit whose old_string is not in the file); None means it may go on to the permission gate.
    precheck: Callable[[dict[str, Any], ToolContext], ToolResult | None] | None = None

    def api_spec(self) -> dict[str, Any]:
        """The tool as the Anthropic Messages API wants it in `tools`."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}
