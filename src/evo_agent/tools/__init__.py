"""The agent's tools: what the model may do in the project.

`BASIC_TOOLS` are the six file-and-shell tools; the agent adds `task` and
`compact` itself because they need the agent loop. Call tools through
`run_tool`, which validates the model's input and never raises.
"""

from __future__ import annotations

from .base import Tool, ToolContext, ToolResult
from .bash import BASH_TOOL
from .edit_file import EDIT_FILE_TOOL
from .glob_tool import GLOB_TOOL
from .grep_tool import GREP_TOOL
from .read_file import READ_FILE_TOOL
from .runner import run_tool, validate_input
from .write_file import WRITE_FILE_TOOL

BASIC_TOOLS: list[Tool] = [BASH_TOOL, READ_FILE_TOOL, WRITE_FILE_TOOL, EDIT_FILE_TOOL, GLOB_TOOL, GREP_TOOL]


def tool_by_name(name: str) -> Tool | None:
    """One of BASIC_TOOLS by name, or None."""
    return next((t for t in BASIC_TOOLS if t.name == name), None)


__all__ = [
    "BASIC_TOOLS",
    "Tool",
    "ToolContext",
    "ToolResult",
    "run_tool",
    "tool_by_name",
    "validate_input",
]
