"""The picker's fallback group: sessions found by what was said in them, when their titles do not match.

Typing filters the picker by name, first prompt, branch and id at once (picker.filter_rows). People
also remember a session by its content ("the one where the login test was flaky"), so the sessions
the filter left out are then searched inside — prompts, answers, tool calls and results, summaries,
subagents — with `evo_agent.session.search`, the search behind `evo-agent sessions search`.

Typing stays responsive: the search runs in a daemon thread, one session at a time, newest first;
the next keystroke cancels it (it stops before its next session) and starts another. It is bounded:
at most `MAX_MATCHES` sessions, one hit each, and nothing below `MIN_CHARS` characters is searched
(a one-letter needle matches everything and tests no bytes cheaply). Matches reach the picker
through the event loop (`loop.call_soon_threadsafe`), so all drawing stays in one thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from evo_agent.session import SessionInfo

__all__ = ["ContentMatch", "ContentSearch", "MAX_MATCHES", "MIN_CHARS"]

MIN_CHARS = 3
MAX_MATCHES = 50


@dataclass(frozen=True)
class ContentMatch:
    info: SessionInfo
    kind: str      # prompt, answer, tool call, tool result, thinking, summary, subagent result
    snippet: str   # one line around the first match (not yet terminal-safe)


class ContentSearch:
    """One search at a time: `start()` cancels the one before; results arrive in the loop's thread.

    `on_match(generation, match)` for each session found, then `on_done(generation)`; a caller keeps
    only what carries the current `generation`.
    """

    def __init__(self, on_match: Callable[[int, ContentMatch], None], on_done: Callable[[int], None]) -> None:
        self.on_match = on_match
        self.on_done = on_done
        self.generation = 0
        self.running = False
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()
        self.running = False

    def start(self, needle: str, rows: Sequence[SessionInfo], known_ids: frozenset[str]) -> bool:
        """Search `rows` (newest first) for `needle` off the loop's thread; False when there is nothing to do."""
        self.cancel()
        self.generation += 1
        needle = " ".join(needle.split())
        if len(needle) < MIN_CHARS or not rows:
            return False
        cancel = self._cancel = threading.Event()
        generation, loop = self.generation, asyncio.get_running_loop()
        self.running = True

        def post(fn: Callable[..., None], *args: object) -> None:
            try:
                loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:
                cancel.set()  # the loop closed: the picker has gone

        def work() -> None:
            try:
                for match in _matches(list(rows), needle, known_ids, cancel):
                    post(self.on_match, generation, match)
            finally:
                post(self._finished, generation)

        threading.Thread(target=work, name="picker-search", daemon=True).start()
        return True

    def _finished(self, generation: int) -> None:
        if generation == self.generation:
            self.running = False
        self.on_done(generation)


def _matches(rows: list[SessionInfo], needle: str, known_ids: frozenset[str],
             cancel: threading.Event) -> Iterator[ContentMatch]:
    """Yield the first hit of each session that holds `needle`, until cancelled or `MAX_MATCHES`."""
    from evo_agent.session import search_sessions

    found = 0
    for info in rows:
        if cancel.is_set() or found >= MAX_MATCHES:
            return
        try:
            hit = next(search_sessions([(info.id, info.dir, info.meta.resumed_from)], needle, limit=1,
                                       exists=known_ids.__contains__), None)
        except (OSError, ValueError):
            continue  # an unreadable session is left out, as the listing does
        if hit is not None and not cancel.is_set():
            found += 1
            yield ContentMatch(info, hit.kind, hit.snippet)
