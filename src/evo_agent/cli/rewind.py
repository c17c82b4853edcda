"""Putting files back after a rewind (`--at N --restore-files`, `/rewind`): shared by the CLI and the REPL.

Only changes made by evo-agent's own file tools can be restored; a file that someone (or a bash
command) changed after evo-agent last wrote it is left alone unless the user says otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionStore
from evo_agent.session.file_history import FileChange, restore_change
from evo_agent.session.rewind import changes_since

BASH_NOTE = "Changes made through bash cannot be restored."


def pending_changes(store: SessionStore, session_id: str, turn: int) -> list[FileChange]:
    """The files to put back for a rewind of `session_id` to before `turn` (nothing already as it was)."""
    return [c for c in changes_since(store.sessions_dir, session_id, turn) if c.state() != "unchanged"]


def restore_files(changes: list[FileChange], write: Callable[[str], None],
                  ask: Callable[[str], bool] | None) -> int:
    """Restore what can be restored; ask (when `ask` is given) before overwriting a file changed since.

    Returns how many files were restored. Each file is replaced atomically, so a kill in the middle
    leaves every file either as it was or as restored, and running the restore again finishes it.
    """
    restored = 0
    for change in changes:
        shown = terminal_safe(change.path, keep_newlines=False)
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
