"""What the agent calls on its front end during a turn: one method for every event, one for approval.

The flow is provider → agent → front end: every event of a turn (events.py: text and thinking
deltas, a tool named, started and finished, notices, retries) is handed to the front end's
`on_event(event)`; a question the turn waits on is `on_approval(request)`. Both may be called
from the turn's worker thread (and from a subagent's thread).

A front end dispatches with `match` on the event's class and ignores what it does not show.
`SafeCallbacks` stands between the agent and it: a front end without `on_event` gets nothing, and
what a front end raises is swallowed, so a display problem never breaks the turn's records.
`evo_agent.ui.bridge` re-exports `TurnCallbacks` for the app.
"""

from __future__ import annotations

from collections.abc import Callable

from evo_agent.session import plain_dataclass as dataclass
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from .events import Notice, TurnEvent

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Protocol, runtime_checkable
else:  # typing (~12 M instructions) is the type checker's: at run time the Protocols are abc classes, and
    # isinstance(x, TurnCallbacks) is its __subclasshook__'s answer, as runtime_checkable would give it
    from abc import ABCMeta

    class Protocol(metaclass=ABCMeta):  # noqa: B024 - a stand-in for typing.Protocol
        """The base of the Protocols below at run time."""

    def runtime_checkable(cls: type) -> type:
        return cls

__all__ = ["EXIT_GRACE_S", "ApprovalCallbacks", "Asker", "Emit", "FrontEnd", "SafeCallbacks", "TurnCallbacks",
           "resumed_line"]

Emit = Callable[[TurnEvent], None]
Asker = Callable[[ApprovalRequest], ApprovalDecision]

# Leaving mid-turn (a second Ctrl+C, SIGTERM), a front end cancels the turn and waits this long for it
# to record what it was doing (bash kills its group, every tool_use gets its result) before the exit hint.
EXIT_GRACE_S = 5.0


def resumed_line(source: str, restored: int, new_id: str) -> str:
    """What every front end says after a resume: the source, what was restored, the new session."""
    return f"Resumed {source}: {restored} message{'s' if restored != 1 else ''} restored (new session {new_id})"


@runtime_checkable
class TurnCallbacks(Protocol):
    """What a turn reports, in order, as events (events.TurnEvent); may be called from any thread."""

    def on_event(self, event: TurnEvent) -> None:
        """One event of the turn; a front end shows what it shows and ignores the rest."""

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        """isinstance(x, TurnCallbacks) at run time: x has an `on_event` (what runtime_checkable checks)."""
        return callable(getattr(other, "on_event", None)) or NotImplemented


class ApprovalCallbacks(Protocol):
    """Optional (issue #15): a front end that can ask the user whether a tool call may run.

    Called from the worker thread; blocks until the user answers (Esc/Ctrl+C mean "no"). A front
    end without it cannot ask, and the call is refused as in print mode. Kept apart from
    `TurnCallbacks` so that callbacks objects without it still satisfy that runtime-checkable Protocol.
    """

    def on_approval(self, request: ApprovalRequest) -> ApprovalDecision: ...


class SafeCallbacks:
    """Hands events to the front end if it takes them; a failing front end never breaks the loop's records."""

    def __init__(self, target: object | None) -> None:
        self.target = target

    def emit(self, event: TurnEvent) -> None:
        on_event = getattr(self.target, "on_event", None) if self.target is not None else None
        if on_event is None:
            return
        try:
            on_event(event)
        except Exception:  # noqa: BLE001 - display problems must not corrupt the turn
            pass

    def notice(self, text: str) -> None:
        """A `Notice` event: the one line said most often."""
        self.emit(Notice(text))

    @property
    def asker(self) -> Asker | None:
        """The front end's `on_approval`, or None when it cannot ask (print mode)."""
        fn = getattr(self.target, "on_approval", None) if self.target is not None else None
        return fn if callable(fn) else None


@dataclass
class FrontEnd:
    """How a turn reaches the user for approvals and notices; a subagent borrows its parent's."""

    ask: Asker | None = None
    emit: Emit | None = None

    def tell(self, text: str) -> None:
        """Show a notice if the front end takes events; a failing front end is ignored."""
        if self.emit is None:
            return
        try:
            self.emit(Notice(text))
        except Exception:  # noqa: BLE001 - display problems must not corrupt the turn
            pass


def started_line(agent: Any) -> tuple[str, str | None]:
    """What `/clear` says: the new session, and the command that resumes the one holding the conversation so
    far (None when none was saved), for a line of its own that only the terminal wraps (Screen.notice_command)."""
    previous = agent.holder_session_id()
    if not previous:
        return f"Started new session {agent.session_id}", None
    return f"Started new session {agent.session_id}; the previous one resumes with:", f"evo-agent --resume {previous}"
