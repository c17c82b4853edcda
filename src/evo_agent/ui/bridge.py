"""The narrow interface between the TUI and the agent loop.

The TUI does not depend on the `Agent` class: it drives any object that looks
like `AgentLike`. `run_turn` runs in a worker thread and reports what happens
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

# The one definition of what a turn calls on its front end (and the optional on_approval,
# on_nested_tool_start/end) lives with the agent, typed; the app implements it.
from evo_agent.agent.callbacks import TurnCallbacks

__all__ = ["AgentLike", "TurnCallbacks"]


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

    def resume(self, session_id: str, *, allow_foreign: bool = False) -> object:
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

    def mcp_text(self) -> str:
        """The text `/mcp` shows: each MCP server's state and its tools in this session."""

    def mcp_reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: connect the server again; one line saying how it went (blocks: call off the loop)."""

    def cost_text(self) -> str:
        """The text `/cost` shows (tokens, and money where known); may span lines."""
