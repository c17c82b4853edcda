"""The agent loop: one conversation with a model, its tools, and the session that records it.

    from evo_agent.agent import Agent
    agent = Agent(provider=provider, recorder=store.create(...), project_dir=root, store=store)
    result = agent.run_turn("fix the failing test", callbacks, cancel_event)

See loop.py for the write points, cancellation and error semantics, events.py and callbacks.py
for what a turn reports to its front end (`on_event`) and asks it (`on_approval`), compaction.py
and compaction_state.py for compaction, usage.py for tokens and dollars, subagents.py for the
`task` tool and permissions.py for what may run unasked.
"""

from .callbacks import TurnCallbacks
from .compaction import history_chars, history_exceeds, micro_compact, summary_request
from .compaction_state import CompactionFailed, CompactResult, default_compact_threshold
from .loop import (
    INTERRUPTED_MARKER,
    MAX_MODEL_CALLS,
    TOOL_INTERRUPTED_TEXT,
    Agent,
    TurnResult,
)
from .prompt import build_system_prompt
from .usage import Usage, resumed_usage

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
    "TurnCallbacks",
    "TurnResult",
    "Usage",
    "resumed_usage",
    "build_system_prompt",
]
