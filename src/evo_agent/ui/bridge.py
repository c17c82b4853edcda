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
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

# The one definition of what a turn reports to its front end (`on_event`, and the optional
# `on_approval`) lives with the agent, typed; the app implements it (turn_view.TurnEvents).
from evo_agent.agent.callbacks import TurnCallbacks

if TYPE_CHECKING:
    from evo_agent.agent.instructions import Instructions
    from evo_agent.agent.resuming import Confirm, Resumed
    from evo_agent.agent.usage import Usage
    from evo_agent.session import SessionStore

__all__ = ["AgentLike", "Named", "Transcript", "TurnCallbacks"]


class Named(Protocol):
    """The provider, as the welcome line names it."""

    @property
    def name(self) -> str: ...


class Transcript(Protocol):
    """The live session's transcript, as `/rewind` reads its prompts."""

    @property
    def path(self) -> Path: ...


@runtime_checkable
class AgentLike(Protocol):
    """Everything the app uses of an agent (evo_agent.agent.Agent is one; tests/ui/fakes.FakeAgent another).

    Attributes are read after every turn and command, so they may be plain attributes or properties.
    """

    @property
    def session_id(self) -> str:
        """The live session (the one the exit hint names)."""

    @property
    def name(self) -> str | None:
        """The session's name (`/rename`), None when it has none."""

    @property
    def model(self) -> str:
        """Shown in the status line."""

    @property
    def provider(self) -> Named:
        """Its name is shown in the welcome line."""

    @property
    def total_tokens(self) -> int:
        """Input + output tokens spent so far in this session."""

    @property
    def usage(self) -> Usage:
        """The running totals behind the status line's cost and cache share."""

    @property
    def context_chars(self) -> int:
        """JSON size of the history that the next request would send."""

    @property
    def compact_threshold(self) -> int:
        """`context_chars` at which auto-compaction starts."""

    @property
    def project_dir(self) -> Path:
        """Where `.evo-agent/sessions` lives (the picker lists it)."""

    @property
    def store(self) -> SessionStore | None:
        """Where the sessions are (`/rewind` reads the file changes there)."""

    @property
    def recorder(self) -> Transcript:
        """The live transcript (`/rewind` lists its prompts)."""

    @property
    def messages(self) -> Sequence[dict[str, Any]]:
        """The current history (Anthropic MessageParams), shown after /resume."""

    @property
    def instructions(self) -> Instructions:
        """Which instruction files the model was given (the welcome line)."""

    @property
    def permission_mode(self) -> str:
        """Shown in the status line."""

    @property
    def read_only_backstop(self) -> bool | None:
        """False: commands run unasked without the sandbox (status: "unsandboxed")."""

    @property
    def sandbox(self) -> object | None:
        """--sandbox: bash runs in bubblewrap (status: "sandbox")."""

    def run_turn(self, prompt: str, callbacks: TurnCallbacks, cancel: threading.Event) -> Any:
        """Run one user turn to completion (called in a worker thread); may return an object with `cancelled`."""

    def resume(self, session_id: str, *, confirm: Confirm | None = None) -> Resumed:
        """Switch to a resumed copy of `session_id` (an id, unique prefix or name): the one resume path.

        Returns what to show (agent/resuming.py). Raises with a printable message for a bad, ambiguous or
        missing id, and for a session recorded elsewhere unless `confirm(session_id, reason)` says yes.
        """

    def rewind(self, turn: int) -> Any:
        """Switch to a new session holding the conversation before prompt `turn` (1-based)."""

    def clear(self) -> Any:
        """Start a fresh, empty session (the old one stays resumable)."""

    def holder_session_id(self) -> str | None:
        """The saved session that holds the conversation so far (what `/clear` names), None if none."""

    def compact(self, focus: str | None, cancel: threading.Event | None = None) -> Any:
        """Summarise the history now (`/compact [focus]`); called in a worker thread; `cancel` stops it.

        May return an object with `describe() -> str`, the line the UI shows afterwards.
        """

    def rename(self, name: str) -> str:
        """Name the session (`/rename NAME`); the name as stored. Raises ValueError for an empty one."""

    def mcp_text(self) -> str:
        """The text `/mcp` shows: each MCP server's state and its tools in this session."""

    def mcp_reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: connect the server again; one line saying how it went (blocks: call off the loop)."""

    def cost_text(self) -> str:
        """The text `/cost` shows (tokens, and money where known); may span lines."""

    def permissions_text(self) -> str:
        """The text `/permissions` shows: the mode and the rules in force."""

    def plan_text(self, *, compact: bool = False) -> str:
        """The Session Plan (`/plan`; `compact`: the checklist Ctrl+T shows above the prompt)."""

    def plan_progress(self) -> tuple[int, int] | None:
        """(done, all) steps of the open plan for the status line, None without one."""

    def memory_text(self, name: str = "") -> str:
        """The text `/memory [NAME]` shows."""

    def remember(self, text: str, *, scope: str = "project") -> str:
        """`/remember`: save `text` to the project's (or the user's) memory; the line to show."""
