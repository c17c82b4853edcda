"""The agent loop: one conversation with a model, its tools, and the session that records it.

    from evo_agent.agent import Agent
    agent = Agent(provider=provider, recorder=store.create(...), project_dir=root, store=store)
    result = agent.run_turn("fix the failing test", callbacks, cancel_event)

See loop.py for the write points, cancellation and error semantics,
compaction.py for compaction and subagents.py for the `task` tool.
"""

from .compaction import history_chars, history_exceeds, micro_compact, summary_request
from .loop import (
    INTERRUPTED_MARKER,
    MAX_MODEL_CALLS,
    TOOL_INTERRUPTED_TEXT,
    Agent,
    CompactionFailed,
    CompactResult,
    TurnResult,
    Usage,
    default_compact_threshold,
    text_of,
    tool_result_block,
)
from .prompt import build_system_prompt

__all__ = [
    "Agent",
    "default_compact_threshold",
    "CompactResult",
    "CompactionFailed",
    "history_chars",
    "history_exceeds",
    "micro_compact",
    "summary_request",
    "INTERRUPTED_MARKER",
    "MAX_MODEL_CALLS",
    "TOOL_INTERRUPTED_TEXT",
    "TurnResult",
    "Usage",
    "build_system_prompt",
    "text_of",
    "tool_result_block",
]
