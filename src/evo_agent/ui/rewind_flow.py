"""`/rewind N` on any screen: a new session from before prompt N, then the files put back if the user says so.

The history goes back at once (like every resume, the old session stays as it was). The files the
file tools changed since are listed and the user answers y/n; a yes restores them with the very code
`--resume ID --at N --restore-files` uses (agent/file_restore.py), which asks again, y/n, before
overwriting a file someone changed after evo-agent wrote it. Changes made through bash cannot be
restored, and the screen says so. Written once against the `Screen` (ui/screen.py) for the app and
the REPL alike; it runs as the screen's work (`Screen.run_work`), where questions may block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evo_agent.session import one_line

if TYPE_CHECKING:
    from .bridge import AgentLike
    from .screen import Screen

__all__ = ["rewind_and_restore", "turn_list", "LISTED_TURNS", "LISTED_FILES"]

LISTED_TURNS = 20   # the newest prompts `/rewind` lists
LISTED_FILES = 20   # the files named before the question (the rest are counted)


def turn_list(turns: Sequence[Any]) -> str:
    """`/rewind` without N: the question and this session's prompts, newest first, numbered."""
    lines = [f"{t.number:>4}. {one_line(t.text, 70)}" for t in reversed(turns[-LISTED_TURNS:])]
    return ("Go back to before which prompt? /rewind N (a new session starts there; this one stays "
            "resumable; files changed since can be restored. Changes made through bash cannot be restored.)\n"
            + "\n".join(lines))


def rewind_and_restore(screen: Screen, agent: AgentLike, number: int, source: str, prompt: str = "") -> None:
    """Rewind `agent` to before prompt `number` of `source`, then offer the plan and the files
    (`screen.ask_yes_no` blocks until the user answers); `prompt` (that prompt's text) is then offered to be
    edited and sent again."""
    from evo_agent.agent.file_restore import (
        pending_changes,
        pending_plan_updates,
    )

    store = agent.store
    changes = pending_changes(store, source, number) if store is not None else []  # before: it reads `source`
    plan_updates = pending_plan_updates(store, source, number) if store is not None else []
    agent.rewind(number)
    messages = list(agent.messages)
    screen.show_history(messages)
    screen.notice_command(f"Rewound to before turn {number}: new session {agent.session_id} "
                          f"({len(messages)} messages); the previous one resumes with:", f"evo-agent --resume {source}")
    _offer_plan(screen, agent, plan_updates, number)
    _offer_files(screen, agent, changes, number)
    if prompt:  # last: a question asked with text in the app's prompt box leaves the keyboard on the box
        screen.edit_prompt(prompt)


def _offer_files(screen: Screen, agent: AgentLike, changes: list[Any], number: int) -> None:
    """The files evo-agent's tools changed since turn `number`: named, then restored if the user says yes."""
    from evo_agent.agent.file_restore import BASH_NOTE, restore_files, shown_path

    if not changes:
        screen.notice(f"No file to restore: evo-agent's file tools changed none since. {BASH_NOTE}")
        return
    root = agent.project_dir
    shown = "\n".join(f"  {shown_path(c.path, root)}" for c in changes[:LISTED_FILES])
    more = f"\n  … and {len(changes) - LISTED_FILES} more" if len(changes) > LISTED_FILES else ""
    screen.notice(f"Changed by evo-agent since turn {number}:\n{shown}{more}")
    count = f"{len(changes)} file{'s' if len(changes) != 1 else ''}"
    if screen.ask_yes_no(f"Restore {count} to how they were before turn {number}?"):
        restore_files(changes, screen.notice,
                      lambda question: screen.ask_yes_no(question.strip().removesuffix("[y/N]").strip()),
                      relative_to=root)
    else:
        screen.notice(f"Files left as they are. {BASH_NOTE}")


def _offer_plan(screen: Screen, agent: AgentLike, updates: list[dict], number: int) -> None:
    """The Session Plan changed since turn `number`: ask whether to put it back as it was then."""
    if not updates:
        return
    from evo_agent.agent.file_restore import restore_plan

    count = f"{len(updates)} change{'s' if len(updates) != 1 else ''}"
    if screen.ask_yes_no(f"Put the Session Plan back as it was before turn {number} ({count} since)?"):
        restore_plan(agent.project_dir, updates, screen.notice)
    else:
        screen.notice("The Session Plan is left as it is.")
