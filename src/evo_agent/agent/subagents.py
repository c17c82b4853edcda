"""The `task` tool: a child agent with a fresh history, recorded in its own sidechain file.

The parent's transcript gets only `subagent_start` (before the child runs)
and `subagent_end` (after it, before the task's tool_result is recorded);
the child's whole run goes to `subagent/<ms>_<name>_<4hex>.jsonl`. The
child has every tool but `task` (no recursion), at most SUBAGENT_MAX_CALLS
model calls, and the parent's provider and model. Its final text is the
tool_result; a child that fails or is interrupted still gets its
`subagent_end`, and the parent an `is_error` result.
"""

from __future__ import annotations

from evo_agent.providers import ProviderError
from evo_agent.session import plain_replace
from evo_agent.tools import Tool, ToolContext, ToolResult
from evo_agent.tools.registry import TASK_FACTS

from .callbacks import SafeCallbacks
from .events import (
    Notice,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolNamed,
    ToolStarted,
    TurnEvent,
    assert_never,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)

if TYPE_CHECKING:
    from typing import Any

    from .callbacks import TurnCallbacks
    from .loop import Agent

SUBAGENT_MAX_CALLS = 30
DEFAULT_SUBAGENT_TYPE = "general-purpose"

TASK_SCHEMA = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "A short (3-6 words) name for the task."},
        "prompt": {"type": "string", "description": "The complete task for the subagent: it sees nothing else."},
        "subagent_type": {"type": "string", "description": f"The kind of agent (default {DEFAULT_SUBAGENT_TYPE})."},
    },
    "required": ["description", "prompt"],
}

TASK_DESCRIPTION = (
    "Launch a subagent for a self-contained task (searching a codebase, investigating a question, "
    "a focused change). The subagent starts with a fresh history, has every tool except task, and "
    "returns one final report as the result. Give it everything it needs in `prompt`. Several task "
    "calls in one response run in parallel."
)

SUBAGENT_NOTE = """
You are a subagent started by another agent for one task. Work on it with your tools, then end with
one final answer: a complete, self-contained report of what you found or did (paths, names, results).
That answer is all the other agent will see of your work; it cannot answer questions back."""


def run_subagent(parent: Agent, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one `task` call to completion; never raises."""
    from .loop import Agent  # the child is an Agent too

    description = str(tool_input.get("description") or "").strip()
    subagent_type = str(tool_input.get("subagent_type") or DEFAULT_SUBAGENT_TYPE).strip() or DEFAULT_SUBAGENT_TYPE
    side = parent.main_recorder.start_subagent(
        description or subagent_type, ctx.tool_use_id,
        model=parent.provider.model, provider=parent.provider.name, subagent_type=subagent_type,
    )
    from evo_agent.tools import BASIC_TOOLS
    from evo_agent.tools.mcp_tools import is_mcp_tool

    child = Agent(
        provider=parent.provider, recorder=side, project_dir=parent.project_dir,
        tools=[*BASIC_TOOLS, *(t for t in parent.tools if is_mcp_tool(t.name))],  # the parent's fixed MCP tools
        allow_subagents=False, max_model_calls=SUBAGENT_MAX_CALLS, max_tokens=parent.max_tokens,
        system_note=SUBAGENT_NOTE, compact_threshold=parent.compact_threshold,
        permissions=parent.permissions, agent_label=description or subagent_type, front_end=parent.front_end,
        sandbox=parent.sandbox,
        file_history=parent.file_history, plan_reason="subagent",
        instructions=parent.instructions,  # the project's instructions and the start directory, as the parent's
    )
    front_end = parent.turn_callbacks
    nested = NestedCallbacks(front_end, ctx.tool_use_id) if front_end is not None else None
    text, is_error = _run_child(child, tool_input["prompt"], ctx, parent.recorder.prompt_id, nested)
    parent.add_usage(child.usage)
    parent.main_recorder.end_subagent(side, ctx.tool_use_id, text, **({"is_error": True} if is_error else {}))
    return ToolResult(text, is_error)


class NestedCallbacks:
    """A subagent's front end: its events reach the parent's, its tool calls nested under the task call.

    A tool started or finished goes up one level deeper (`depth` + 1) under `parent_id`, the task
    call's id; notices and retries go up as they are, and so does `on_approval` when the front end
    has it. The child's streamed text, thinking and named tools are not shown: its final answer is
    the task's result.
    """

    def __init__(self, parent: TurnCallbacks, parent_tool_id: str) -> None:
        self._parent = parent
        self._up = SafeCallbacks(parent)
        self._parent_tool_id = parent_tool_id

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case ToolStarted() | ToolFinished():
                self._up.emit(plain_replace(event, depth=event.depth + 1,
                                            parent_id=event.parent_id or self._parent_tool_id))
            case Notice() | Retrying():
                self._up.emit(event)
            case TextDelta() | ThinkingDelta() | ToolNamed():
                pass
            case _:
                assert_never(event)  # a new kind of event: mypy (and tests/agent/test_events.py) say where

    def __getattr__(self, name: str) -> Any:
        if name == "on_approval" and self._parent is not None:
            return getattr(self._parent, name)  # AttributeError when the front end cannot ask
        raise AttributeError(name)


def _run_child(child: Agent, prompt: str, ctx: ToolContext, prompt_id: str | None,
               callbacks: NestedCallbacks | None = None) -> tuple[str, bool]:
    """(final text, is_error) of the child's run."""
    try:
        result = child.run_turn(prompt, callbacks, ctx.cancel, prompt_id=prompt_id)
    except ProviderError as exc:
        return f"The subagent failed: {exc}", True
    except Exception as exc:  # noqa: BLE001 - a child's bug must not take the parent down
        return f"The subagent failed: {type(exc).__name__}: {exc}", True
    text = result.text.strip()
    if result.cancelled:
        note = "The subagent was interrupted (Ctrl+C) before it finished."
        return f"{note}\n\nIts last words:\n{text}" if text else note, True
    if result.status == "limit":
        note = f"[The subagent stopped after {SUBAGENT_MAX_CALLS} model calls before it finished.]"
        return f"{text}\n\n{note}" if text else note, True
    return text or "(the subagent finished without a final answer)", False


def task_tool(agent: Agent) -> Tool:
    return Tool(TASK_FACTS.name, TASK_DESCRIPTION, TASK_SCHEMA,
                lambda tool_input, ctx: run_subagent(agent, tool_input, ctx), facts=TASK_FACTS)


__all__ = ["NestedCallbacks", "DEFAULT_SUBAGENT_TYPE", "SUBAGENT_MAX_CALLS", "run_subagent", "task_tool"]
