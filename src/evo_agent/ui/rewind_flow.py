"""`/rewind N` in the app: a new session from before prompt N, then the files put back if the user says so.

The history goes back at once (like every resume, the old session stays as it was). The files the
file tools changed since are listed and the user answers y/n in the app; a yes restores them with
the very code `--resume ID --at N --restore-files` uses (agent/file_restore.py), which asks again,
y/n, before overwriting a file someone changed after evo-agent wrote it. Changes made through bash
cannot be restored, and the app says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType

from evo_agent.session import one_line

from . import render
from .transcript_view import history_renderables

__all__ = ["rewind_and_restore", "turn_list", "LISTED_TURNS", "LISTED_FILES"]

LISTED_TURNS = 20   # the newest prompts `/rewind` lists
LISTED_FILES = 20   # the files named before the question (the rest are counted)


def turn_list(turns: Sequence[Any]) -> str:
    """`/rewind` without N: the question and this session's prompts, newest first, numbered."""
    lines = [f"{t.number:>4}. {one_line(t.text, 70)}" for t in reversed(turns[-LISTED_TURNS:])]
    return ("Go back to before which prompt? /rewind N (a new session starts there; this one stays "
            "resumable; files changed since can be restored. Changes made through bash cannot be restored.)\n"
            + "\n".join(lines))


def rewind_and_restore(app: Any, turn: int, number: int, source: str) -> None:
    """In the app's worker thread: rewind `app.agent` to before prompt `number` of `source`, then offer
    the files (`app.ask_yes_no` blocks this thread until the user answers)."""
    from evo_agent.agent.file_restore import (
        BASH_NOTE,
        pending_changes,
        pending_plan_updates,
        restore_files,
        shown_path,
    )

    agent = app.agent
    store = agent.store or app.store
    changes = pending_changes(store, source, number) if store is not None else []  # before: it reads `source`
    plan_updates = pending_plan_updates(store, source, number) if store is not None else []
    agent.rewind(number)

    def say(*items: RenderableType) -> None:
        app.call_in_loop(turn, app.emit, *items)

    messages = list(agent.messages)
    say(*history_renderables(messages, width=app.width()))
    say(render.notice(f"Rewound to before turn {number}: new session {agent.session_id} "
                      f"({len(messages)} messages; the previous one: evo-agent --resume {source})."))
    _offer_plan(app, say, plan_updates, number)
    if not changes:
        say(render.notice(f"No file to restore: evo-agent's file tools changed none since. {BASH_NOTE}"))
        return
    root = agent.project_dir
    shown = "\n".join(f"  {shown_path(c.path, root)}" for c in changes[:LISTED_FILES])
    more = f"\n  … and {len(changes) - LISTED_FILES} more" if len(changes) > LISTED_FILES else ""
    say(render.notice(f"Changed by evo-agent since turn {number}:\n{shown}{more}"))
    count = f"{len(changes)} file{'s' if len(changes) != 1 else ''}"
    if app.ask_yes_no(f"Restore {count} to how they were before turn {number}?"):
        restore_files(changes, lambda line: say(render.notice(line)),
                      lambda question: app.ask_yes_no(question.strip().removesuffix("[y/N]").strip()),
                      relative_to=root)
    else:
        say(render.notice(f"Files left as they are. {BASH_NOTE}"))


def _offer_plan(app: Any, say: Any, updates: list[dict], number: int) -> None:
    """The Session Plan changed since turn `number`: ask whether to put it back as it was then."""
    if not updates:
        return
    from evo_agent.agent.file_restore import restore_plan

    count = f"{len(updates)} change{'s' if len(updates) != 1 else ''}"
    if app.ask_yes_no(f"Put the Session Plan back as it was before turn {number} ({count} since)?"):
        restore_plan(app.agent.project_dir, updates, lambda line: say(render.notice(line)))
    else:
        say(render.notice("The Session Plan is left as it is."))
