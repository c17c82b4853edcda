"""Which tools there are: one row each, its facts (`ToolFacts`, tools/base.py) declared beside the tool.

A row is a ready `Tool` (it needs nothing of the agent: the file-and-shell tools, `BASIC_TOOLS`) or the
`ToolFacts` of a tool the agent builds because it needs the agent (`compact`, `task`, the plan tools over
the plan's hooks, `memory` over the store's). An MCP server's tools are known only at run time: a family
named by its prefix makes their facts for each name (`FAMILIES`).

Everything that used to keep its own table of tool names — the permission gate's classes, the rule kinds,
the paths a compaction lists, the calls run in parallel, the labels of both front ends — asks `facts_of`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from . import memory_tool, plan_tools
from .base import MCP_PREFIX, Tool, ToolFacts
from .bash import BASH_TOOL
from .edit_file import EDIT_FILE_TOOL
from .glob_tool import GLOB_TOOL
from .grep_tool import GREP_TOOL
from .read_file import READ_FILE_TOOL
from .write_file import WRITE_FILE_TOOL

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

# The two tools built inside the agent (agent/compaction_state.py, agent/subagents.py): a tools module
# cannot import the agent, so their facts are written here.
COMPACT_FACTS = ToolFacts("compact", kind="internal", approval="none", label_arg="focus")
TASK_FACTS = ToolFacts("task", kind="internal", approval="none", label_arg="description", result_lines=1,
                       parallel=True)

REGISTRY: tuple[Tool | ToolFacts, ...] = (
    BASH_TOOL,
    READ_FILE_TOOL,
    WRITE_FILE_TOOL,
    EDIT_FILE_TOOL,
    GLOB_TOOL,
    GREP_TOOL,
    COMPACT_FACTS,
    TASK_FACTS,
    *plan_tools.FACTS,
    memory_tool.FACTS,
)



def _mcp_facts(name: str) -> ToolFacts:
    """mcp_tools.mcp_facts, its module imported at the first MCP name (not before -p's first request, issue #30)."""
    from .mcp_tools import mcp_facts

    return mcp_facts(name)


# Tools named by a prefix, whose facts are made for each name.
FAMILIES: tuple[tuple[str, Callable[[str], ToolFacts]], ...] = ((MCP_PREFIX, _mcp_facts),)

# The rows that are ready to run, in order: what every agent (and subagent) starts with.
BASIC_TOOLS: list[Tool] = [row for row in REGISTRY if isinstance(row, Tool)]


def _facts(row: Tool | ToolFacts) -> ToolFacts:
    if isinstance(row, ToolFacts):
        return row
    if row.facts is None:
        raise TypeError(f"the tool {row.name} in the registry declares no facts")
    return row.facts


TOOL_FACTS: tuple[ToolFacts, ...] = tuple(_facts(row) for row in REGISTRY)
_BY_NAME = {facts.name: facts for facts in TOOL_FACTS}


def facts_of(name: str) -> ToolFacts:
    """The facts of the tool `name`: its row, its family's, else those of a tool nothing is known of (it asks)."""
    facts = _BY_NAME.get(name)
    if facts is not None:
        return facts
    for prefix, make in FAMILIES:
        if name.startswith(prefix):
            return make(name)
    return ToolFacts(name, kind="exec", approval="ask")


def tool_by_name(name: str) -> Tool | None:
    """One of BASIC_TOOLS by name, or None."""
    return next((t for t in BASIC_TOOLS if t.name == name), None)


# A call of a tool without a label field shows the first of these it has, else its input as JSON.
LABEL_FALLBACK_KEYS = ("command", "path", "pattern", "description", "focus")


def call_argument(name: str, tool_input: Any) -> str:
    """What a one-line view of a call shows in its parentheses (raw: the front end makes it safe and cuts it):
    `ls -la` for bash, `"def main" in src` for grep, `create /memories/project/x.md` for memory."""
    if not isinstance(tool_input, dict):
        return str(tool_input) if tool_input else ""
    facts = facts_of(name)
    if facts.label is not None:
        label = facts.label(tool_input)
        if label is not None:
            return label
    value = tool_input.get(facts.label_arg) if facts.label_arg else None
    if isinstance(value, str) and value:
        return value
    for key in LABEL_FALLBACK_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return json.dumps(tool_input, ensure_ascii=False) if tool_input else ""


def call_path(name: str, tool_input: dict[str, Any]) -> str:
    """The path a `read`/`edit` call reaches, as the model wrote it ("." when it names none): what the gate judges."""
    facts = facts_of(name)
    if facts.path_of is not None:
        return facts.path_of(tool_input)
    value = tool_input.get(facts.path_arg) if facts.path_arg else None
    return value if isinstance(value, str) and value else "."


__all__ = ["BASIC_TOOLS", "COMPACT_FACTS", "FAMILIES", "LABEL_FALLBACK_KEYS", "REGISTRY", "TASK_FACTS", "TOOL_FACTS",
           "call_argument", "call_path", "facts_of", "tool_by_name"]
