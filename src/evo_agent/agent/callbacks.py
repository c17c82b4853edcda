"""What the agent calls on its front end during a turn: the one definition of the callback interface.

The flow is provider → agent → front end: the provider streams text and thinking deltas, the
agent adds tool starts and ends, notices and approval questions, and calls them on whatever
object the front end passed to `Agent.run_turn` (the app's, the REPL's, print mode's). Every
method may be called from the turn's worker thread (and from a subagent's thread).

A front end implements any subset of these methods: `SafeCallbacks` looks each one up, skips
what is missing and swallows what a front end raises, so a display problem never breaks the
turn's records. `evo_agent.ui.bridge` re-exports `TurnCallbacks` for the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

__all__ = ["EXIT_GRACE_S", "Asker", "FrontEnd", "NestedToolCallbacks", "Notify", "SafeCallbacks", "TurnCallbacks",
           "ApprovalCallbacks", "ToolNamedCallbacks", "resumed_line"]

Notify = Callable[[str], None]
Asker = Callable[[ApprovalRequest], ApprovalDecision]

# Leaving mid-turn (a second Ctrl+C, SIGTERM), a front end cancels the turn and waits this long for it
# to record what it was doing (bash kills its group, every tool_use gets its result) before the exit hint.
EXIT_GRACE_S = 5.0


def resumed_line(source: str, restored: int, new_id: str) -> str:
    """What every front end says after a resume: the source, what was restored, the new session."""
    return f"Resumed {source}: {restored} message{'s' if restored != 1 else ''} restored (new session {new_id})"


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
        """A one-line system notice (compaction happened, a write failed, a retry...).

        Retries of the model call arrive as notices containing "retrying" (providers/http_client.py);
        the app shows them in its activity line instead of printing them.
        """


class ApprovalCallbacks(Protocol):
    """Optional (issue #15): a front end that can ask the user whether a tool call may run.

    Called from the worker thread; blocks until the user answers (Esc/Ctrl+C mean "no"). A front
    end without it cannot ask, and the call is refused as in print mode. Kept apart from
    `TurnCallbacks` so that callbacks objects without it still satisfy that runtime-checkable Protocol.
    """

    def on_approval(self, request: ApprovalRequest) -> ApprovalDecision: ...


class ToolNamedCallbacks(Protocol):
    """Optional: the model named a tool (`tool_id` is the tool_use id); its input is still streaming.

    Lets a front end show the call at once instead of after a long input (a whole file for
    write_file) has arrived; `on_tool_start` with the same id follows when the input is complete.
    """

    def on_tool_use_start(self, tool_id: str, name: str) -> None: ...


class NestedToolCallbacks(Protocol):
    """Optional: a subagent's tool calls, shown under the `task` call `parent_id` (subagents.NestedCallbacks)."""

    def on_nested_tool_start(self, parent_id: str, tool_id: str, name: str, input: dict[str, Any]) -> None: ...

    def on_nested_tool_end(self, parent_id: str, tool_id: str, result_text: str, is_error: bool,
                           duration: float) -> None: ...


class SafeCallbacks:
    """Calls the front end's callbacks if it has them; a failing front end never breaks the loop's records."""

    def __init__(self, target: TurnCallbacks | None) -> None:
        self.target = target

    def _call(self, name: str, *args: Any) -> None:
        fn = getattr(self.target, name, None) if self.target is not None else None
        if fn is None:
            return
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - display problems must not corrupt the turn
            pass

    def text(self, text: str) -> None:
        self._call("on_text", text)

    def thinking(self, text: str) -> None:
        self._call("on_thinking", text)

    def tool_named(self, tool_id: str, name: str) -> None:
        self._call("on_tool_use_start", tool_id, name)

    def tool_start(self, tool_id: str, name: str, tool_input: dict[str, Any]) -> None:
        self._call("on_tool_start", tool_id, name, tool_input)

    def tool_end(self, tool_id: str, text: str, is_error: bool, duration: float) -> None:
        self._call("on_tool_end", tool_id, text, is_error, duration)

    def notice(self, text: str) -> None:
        self._call("on_notice", text)

    @property
    def asker(self) -> Asker | None:
        """The front end's `on_approval`, or None when it cannot ask (print mode)."""
        fn = getattr(self.target, "on_approval", None) if self.target is not None else None
        return fn if callable(fn) else None


@dataclass
class FrontEnd:
    """How a turn reaches the user for approvals and notices; a subagent borrows its parent's."""

    ask: Asker | None = None
    notice: Notify | None = None

    def tell(self, text: str) -> None:
        """Show a notice if the front end takes them; a failing front end is ignored."""
        if self.notice is None:
            return
        try:
            self.notice(text)
        except Exception:  # noqa: BLE001 - display problems must not corrupt the turn
            pass


def started_line(agent: Any) -> str:
    """What `/clear` says: the new session, and the one that holds the conversation so far (if any was saved)."""
    holder = getattr(agent, "holder_session_id", None)
    previous = holder() if callable(holder) else None
    line = f"Started new session {agent.session_id}"
    return line + (f" (the previous one: evo-agent --resume {previous})" if previous else "")
