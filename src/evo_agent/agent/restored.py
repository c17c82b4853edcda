"""What a resumed session starts with: a copy of the restored history, or its summary (SPEC §8).

A history over the compaction threshold is summarised before its first request, whichever way
it was resumed (`--resume`, `-c`, the picker, `/resume ID`), and the new session then stores
what is sent (the summary) instead of a re-redacted copy of everything. A history too large to
load whole comes windowed (`LoadedSession.windowed`: its head and tail, see session/resume.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .compaction import restored_oversized

if TYPE_CHECKING:
    from evo_agent.session import LoadedSession, ResumedSession

    from .compaction_state import CompactResult
    from .loop import Agent

MiB = 1 << 20


class WindowedSummaryFailed(Exception):
    """A history too large to load whole whose summary failed, where it may not be loaded whole."""


def settle_restored(agent: Agent, resumed: ResumedSession, *, load_whole: bool = True) -> str | None:
    """Copy the restored history into the staged new session, or summarise it first; publish it.

    `agent` already holds `resumed` (switch_session). Returns a line for the user when the history
    was summarised or could not be. Should the summary fail, the history is copied as any other
    and the agent retries at its first turn; a windowed one is first loaded whole — or, with
    `load_whole=False` (a launch: nothing sent yet, the user can retry), WindowedSummaryFailed.
    """
    from .compaction_state import CompactionFailed

    loaded = resumed.loaded
    if not restored_oversized(loaded, agent.compact_threshold):
        resumed.copy_history()
        return None
    try:
        result = agent.compact(trigger="auto")
    except CompactionFailed as exc:
        if loaded.windowed and not load_whole:
            raise WindowedSummaryFailed(windowed_failure(loaded, exc)) from None
        if loaded.windowed:
            whole = agent.store.load(loaded.session_id)  # type: ignore[union-attr]  # a resumed agent has its store
            resumed.loaded = whole
            usage = agent.usage
            agent.switch_session(resumed.recorder, whole.messages, whole.compact_count)
            agent.usage = usage
        resumed.copy_history()
        return f"evo-agent: the restored history could not be compacted ({exc}); it is kept whole"
    resumed.publish()
    return windowed_description(result, loaded) if loaded.windowed else result.describe()


def windowed_description(result: CompactResult, loaded: LoadedSession) -> str:
    """The compaction line of a history whose middle was never loaded: its real size, not the window's."""
    return (f"Compacted {loaded.restored_count:,} messages ({loaded.file_size / MiB:,.1f} MiB of transcript; "
            f"the summary read its first and last {len(loaded.messages) - 1:,}) into a summary of "
            f"{result.chars_after:,} characters (compaction #{result.compact_count}, {result.trigger})")


def windowed_failure(loaded: LoadedSession, exc: Exception) -> str:
    """Why a windowed history (too large to send whole) could not be resumed: its summary failed."""
    return (f"session {loaded.session_id} holds {loaded.restored_count:,} messages "
            f"({loaded.file_size / MiB:,.1f} MiB), too many to send without a summary, and the summary failed: {exc}")
