"""The agent's tools: what the model may do in the project.

Which tools there are is `registry.py` (one row each, with its facts); `BASIC_TOOLS` are the six
file-and-shell tools, ready to run; the agent builds the ones that need it (`task`, `compact`, the plan
and memory tools). Call tools through `run_tool`, which validates the model's input and never raises.
"""

from __future__ import annotations

from .base import Tool, ToolContext, ToolFacts, ToolResult
from .registry import BASIC_TOOLS, call_argument, facts_of, tool_by_name
from .runner import run_tool, validate_input

__all__ = [
    "BASIC_TOOLS",
    "Tool",
    "ToolContext",
    "ToolFacts",
    "ToolResult",
    "call_argument",
    "facts_of",
    "run_tool",
    "tool_by_name",
    "validate_input",
]
