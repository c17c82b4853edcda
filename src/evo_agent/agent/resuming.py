"""The one resume path (SPEC §4): `--resume ID`, `-c`, the picker, `/resume ID` in the REPL and the app.

`resume_session` resolves the source, refuses a session recorded elsewhere unless the front end's
`confirm` says yes, starts the new session from it (a copy, or its summary over the compaction
threshold: restored.py), switches the agent to it and returns `Resumed`: plain data that every
front end only displays (the restored conversation, `line`, then its warnings and notice).
Why one function: the launch and `/resume` used to restore and announce each in their own way,
so a check added to one was missing from the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .callbacks import resumed_line
from .compaction import resume_window
from .instructions import Instructions
from .restored import settle_restored
from .usage import resumed_usage

if TYPE_CHECKING:
    from evo_agent.session import LoadedSession, SessionStore

    from .loop import Agent

__all__ = ["Confirm", "Resumed", "live_note", "resume_session"]

# Asked when the source was recorded elsewhere: (session id, why it is foreign) -> go ahead. It may raise
# instead of answering no (the command line's own sentence); a front end that cannot ask passes None.
Confirm = Callable[[str, str], bool]


@dataclass(frozen=True)
class Resumed:
    """What a resume did, for a front end to show: the conversation, `line`, `warnings`, then `notice`."""

    source: str  # the session resumed (a full id)
    session_id: str  # the new session holding its history
    restored: int  # messages restored (before any summary)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the restored conversation as it is shown
    warnings: tuple[str, ...] = ()  # for stderr: the source is live elsewhere, lines that did not parse
    notice: str | None = None  # what became of the history: summarised, or kept whole when that failed

    @property
    def line(self) -> str:
        """The one sentence every front end says after a resume (callbacks.resumed_line)."""
        return resumed_line(self.source, self.restored, self.session_id)


def resume_session(agent: Agent, session_id: str, *, confirm: Confirm | None = None,
                   before_turn: int | None = None, load_whole: bool = True) -> Resumed:
    """Continue `agent` in a new session holding the history of `session_id` (an id, unique prefix or name).

    Raises a SessionError (one printable line) for a bad, ambiguous or unknown id or the live session itself, and
    ForeignSession for a session this user did not record here unless `confirm` says yes (the store checks again as
    it copies). `before_turn` (a rewind at launch): the history before that user turn. `load_whole=False`
    (a launch, where nothing was sent yet): a windowed history whose summary fails raises
    WindowedSummaryFailed instead of being loaded whole.
    """
    store = agent.store
    if store is None:
        raise RuntimeError("this agent has no session store")
    from evo_agent.session import ForeignSession, SessionError

    source = store.resolve(session_id)
    if source == agent.session_id:  # copied into a new session, with a warning that the app itself held it
        raise SessionError(f"{source} is the session you are in")
    reason = store.foreign_reason(source)
    if reason and (confirm is None or not confirm(source, reason)):
        raise ForeignSession(source, reason)
    note = live_note(store, source)
    # An oversized history is held only as far as its summary needs (its head and tail: the window).
    resumed = store.resume(source, model=agent.provider.model, provider=agent.provider.name, before_turn=before_turn,
                           allow_foreign=bool(reason), copy=False, window=resume_window(agent.compact_threshold))
    agent.switch_session(resumed.recorder, resumed.loaded.messages, resumed.loaded.compact_count,
                         Instructions.from_fields(resumed.instructions) or Instructions())
    agent.usage = resumed_usage(store, source)
    notice = settle_restored(agent, resumed, load_whole=load_whole)  # a copy, or (over the threshold) a summary
    loaded = resumed.loaded
    warnings = tuple(line for line in (note, loaded.warning) if line)
    return Resumed(source, agent.session_id, loaded.restored_count, _shown(loaded), warnings, notice)


def _shown(loaded: LoadedSession) -> list[dict[str, Any]]:
    """The restored conversation to draw: a windowed one (its middle never loaded) from its gap on."""
    return loaded.messages[loaded.gap_at:] if loaded.windowed else loaded.messages


def live_note(store: SessionStore, session_id: str) -> str | None:
    """One line when `session_id` is live in another process: the resume copies it into a new session."""
    from evo_agent.session import probe_live  # live.py: not loaded until a resume needs it

    live = probe_live(store.sessions_dir / session_id)
    if not live.live:
        return None
    holder = f"pid {live.pid}" if live.pid else "another running evo-agent"
    return f"evo-agent: session {session_id} is in use by {holder}; this resume starts a new session from it"
