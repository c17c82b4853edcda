"""Putting files (and the Session Plan) back after a rewind (`--at N --restore-files`, `/rewind`): shared by the CLI,
the REPL and the app.

It lives below the front ends (cli and ui both import it), so the three restore the same way. Only
changes made by evo-agent's own file tools can be restored; a file that someone (or a bash command)
changed after evo-agent last wrote it is left alone unless the user says otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from evo_agent.safe_text import terminal_safe
from evo_agent.session import (
    FileChange,
    PlanError,
    PlanStore,
    SessionStore,
    changes_since,
    plan_updates_since,
    restore_change,
)

BASH_NOTE = "Changes made through bash cannot be restored."


def pending_changes(store: SessionStore, session_id: str, turn: int) -> list[FileChange]:
    """The files to put back for a rewind of `session_id` to before `turn` (nothing already as it was)."""
    return [c for c in changes_since(store.sessions_dir, session_id, turn) if c.state() != "unchanged"]


def pending_plan_updates(store: SessionStore, session_id: str, turn: int) -> list[dict]:
    """The Session Plan's changes since `turn` of `session_id` (its `plan_update` records), for a rewind to undo."""
    try:
        return plan_updates_since(store.sessions_dir, session_id, turn)
    except OSError:
        return []


def restore_plan(project_dir: str | os.PathLike, updates: list[dict], write: Callable[[str], None]) -> None:
    """Put the Session Plan back as it was before `updates` (PlanStore.undo), one line per change."""
    try:
        lines = PlanStore(project_dir).undo(updates)
    except (OSError, PlanError) as exc:
        write(f"The Session Plan was not put back: {getattr(exc, 'strerror', None) or exc}")
        return
    for line in lines:
        write(f"  {terminal_safe(line, keep_newlines=False)}")
    write("The Session Plan is back as it was before that turn (evo-agent plan show).")


def shown_path(path: str, relative_to: str | os.PathLike | None = None) -> str:
    """`path` for a terminal: relative to `relative_to` (the project) when inside it, controls made visible."""
    if relative_to is not None:
        root = str(relative_to).rstrip(os.sep)
        if root and path.startswith(root + os.sep):
            path = path[len(root) + 1:]
    return terminal_safe(path, keep_newlines=False)


def restore_files(changes: list[FileChange], write: Callable[[str], None],
                  ask: Callable[[str], bool] | None, *, relative_to: str | os.PathLike | None = None) -> int:
    """Restore what can be restored; ask (when `ask` is given) before overwriting a file changed since.

    Returns how many files were restored. Each file is replaced atomically, so a kill in the middle
    leaves every file either as it was or as restored, and running the restore again finishes it.
    Paths are shown in full, or relative to `relative_to` when they are inside it (the app's view).
    """
    restored = 0
    for change in changes:
        shown = shown_path(change.path, relative_to)
        if change.not_kept:
            write(f"  not restored: {shown} ({change.not_kept})")
            continue
        if change.state() == "changed-since":
            question = f"  {shown} was changed after evo-agent last wrote it; restore it anyway? [y/N] "
            if ask is None or not ask(question):
                write(f"  left alone: {shown} (changed since evo-agent wrote it)")
                continue
        try:
            restore_change(change)
        except OSError as exc:
            write(f"  not restored: {shown} ({exc.strerror or exc})")
            continue
        restored += 1
        write(f"  {'restored' if change.existed else 'removed'}: {shown}")
    write(f"Restored {restored} of {len(changes)} file{'s' if len(changes) != 1 else ''}. {BASH_NOTE}")
    return restored
