"""The narrow interface between the TUI and the agent loop.

The TUI never imports the agent: it drives any object that looks like
`AgentLike`. `run_turn` runs in a worker thread and reports what happens
through `TurnCallbacks`, whose methods are safe to call from that thread
(the TUI forwards each call to its event loop). A turn ends when `run_turn`
returns; it should return soon after `cancel` is set (the user pressed
Ctrl+C), leaving the history valid.

Errors: `resume`, `clear`, `compact` and `run_turn` may raise; the TUI shows
`str(exc)` as one notice line (a `SessionError` message is already printable),
never a traceback, and the conversation goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["AgentLike", "TurnCallbacks"]


@runtime_checkable
class TurnCallbacks(Protocol):
    """What a turn reports, in order. All methods may be called from any thread."""

    def on_text(self, text: str) -> None:
        """A fragment of the model's visible text (stream deltas, or a whole block at once)."""

    def on_thinking(self, text: str) -> None:
        """A fragment of the model's thinking, when it sends any."""

    def on_tool_start(self, tool_id: str, name: str, input: dict[str, Any]) -> None:
        """A tool call is about to run (`tool_id` is the tool_use id)."""

    def on_tool_end(self, tool_id: str, result_text: str, is_error: bool, duration: float) -> None:
        """The tool call `tool_id` finished after `duration` seconds."""

    def on_notice(self, text: str) -> None:
        """A one-line system notice (compaction happened, a write failed, a retry...)."""

    # Optional: `on_nested_tool_start(parent_id, tool_id, name, input)` and
    # `on_nested_tool_end(parent_id, tool_id, result_text, is_error, duration)`: a subagent's tool calls
    # (agent/subagents.py NestedCallbacks), shown under the `task` call `parent_id`. Retries of the model
    # call arrive as `on_notice` texts containing "retrying" (providers/http_client.py); the app shows them
    # in its activity line instead of printing them.
    #
    # Optional (issue #15): `on_approval(request: ApprovalRequest) -> ApprovalDecision`, from
    # `evo_agent.tools.approval`. Called from the worker thread when a tool call needs the user's
    # approval; blocks until the user answers (Esc/Ctrl+C mean "no"). A front end without it
    # cannot ask, and the call is refused as in print mode. Not declared here so that existing
    # callbacks objects keep satisfying the runtime-checkable Protocol.


@runtime_checkable
class AgentLike(Protocol):
    """What the TUI needs from an agent.

    Attributes are read after every turn and command, so they may be plain
    attributes or properties.
    """

    session_id: str            # the live session (the one the exit hint names)
    model: str                 # shown in the status line
    total_tokens: int          # input + output tokens spent so far in this session
    context_chars: int         # JSON size of the history that the next request would send
    compact_threshold: int     # context_chars at which auto-compaction starts
    project_dir: Path          # where `.evo-agent/sessions` lives (the picker lists it)
    messages: Sequence[dict[str, Any]]   # the current history (Anthropic MessageParams), shown after /resume

    def run_turn(self, prompt: str, callbacks: TurnCallbacks, cancel: threading.Event) -> None:
        """Run one user turn to completion (called in a worker thread)."""

    def resume(self, session_id: str) -> None:
        """Switch to a resumed copy of `session_id` (a full id or unique prefix).

        Afterwards `session_id` names the new session and `messages` the restored history.
        Raises with a printable message for a bad, ambiguous or missing id.
        """

    def clear(self) -> None:
        """Start a fresh, empty session (the old one stays resumable)."""

    def compact(self, focus: str | None, cancel: threading.Event | None = None) -> Any:
        """Summarise the history now (`/compact [focus]`); called in a worker thread; `cancel` stops it.

        May return an object with `describe() -> str`, the line the UI shows afterwards.
        """

    def cost_text(self) -> str:
        """The text `/cost` shows (tokens, and money where known); may span lines."""
