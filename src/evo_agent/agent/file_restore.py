"""Putting files (and the Session Plan) back after a rewind (`--at N --restore-files`, `/rewind`): shared by the CLI,
the REPL and the app.

It lives below the front ends (cli and ui both import it), so the three restore the same way. Only
changes made by evo-agent's own file tools can be restored; a file that someone (or a bash command)
changed after evo-agent last wrote it is left alone unless the user says otherwise.

A restore writes where a transcript says, and a transcript can be planted (then adopted) or edited, so
every path goes through the file tools' confinement (tools/confine.py), resolved as the kernel will
resolve it: inside the project it is restored; outside the project or inside `.git/` it is restored only
when a person says yes (never in print mode); inside `.evo-agent/`, which the file tools never write,
it is never restored. The write goes to the resolved path that was checked.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evo_agent.safe_text import terminal_safe
from evo_agent.session import (
    FileChange,
    PlanError,
    PlanStore,
    SessionStore,
    changes_since,
    permission_bits,
    plain_replace,
    plan_updates_since,
    read_backup,
    replace_file,
)
from evo_agent.tools.confine import in_agent_dir, in_sensitive_dir, in_user_config, inside_project, resolve_in
from evo_agent.tools.safe_open import open_dir

BASH_NOTE = "Changes made through bash cannot be restored."


def pending_changes(store: SessionStore, session_id: str, turn: int) -> list[FileChange]:
    """The files to put back for a rewind of `session_id` to before `turn` (nothing already as it was)."""
    return [c for c in changes_since(store.sessions_dir, session_id, turn) if c.state() != "unchanged"]


def pending_plan_updates(store: SessionStore, session_id: str, turn: int) -> list[dict[str, Any]]:
    """The Session Plan's changes since `turn` of `session_id` (its `plan_update` records), for a rewind to undo."""
    try:
        return plan_updates_since(store.sessions_dir, session_id, turn)
    except OSError:
        return []


def restore_plan(
    project_dir: Path | str, updates: list[dict[str, Any]], write: Callable[[str], None]
) -> None:
    """Put the Session Plan back as it was before `updates` (PlanStore.undo), one line per change."""
    try:
        lines = PlanStore(project_dir).undo(updates)
    except (OSError, PlanError) as exc:
        write(f"The Session Plan was not put back: {getattr(exc, 'strerror', None) or exc}")
        return
    for line in lines:
        write(f"  {terminal_safe(line, keep_newlines=False)}")
    write("The Session Plan is back as it was before that turn (evo-agent plan show).")


def shown_path(path: str, relative_to: Path | str | None = None) -> str:
    """`path` for a terminal: relative to `relative_to` (the project) when inside it, controls made visible."""
    if relative_to is not None:
        root = str(relative_to).rstrip(os.sep)
        if root and path.startswith(root + os.sep):
            path = path[len(root) + 1:]
    return terminal_safe(path, keep_newlines=False)


def confinement(project_dir: Path | str, path: str) -> tuple[Path, str | None, bool]:
    """(the real path a restore of `path` would write, why it is not simply inside the project, whether it
    may be written at all): (p, None, True) inside; (p, "outside the project", True) asks; `.evo-agent/`: never."""
    resolved = resolve_in(project_dir, path)
    if in_agent_dir(project_dir, resolved):
        return resolved, "inside .evo-agent/, which evo-agent's file tools never write", False
    if in_user_config(resolved):
        return resolved, "inside your own evo-agent config, which evo-agent's file tools never write", False
    if not inside_project(project_dir, resolved):
        return resolved, f"outside the project ({terminal_safe(str(resolved), keep_newlines=False)})", True
    if in_sensitive_dir(project_dir, resolved):
        return resolved, "inside .git/, where a file can make git run code", True
    return resolved, None, True


def restore_files(changes: list[FileChange], write: Callable[[str], None],
                  ask: Callable[[str], bool] | None, *, relative_to: Path | str | None = None,
                  project_dir: Path | str | None = None) -> int:
    """Restore what can be restored; ask (when `ask` is given) before overwriting a file changed since,
    and before writing anywhere but inside `project_dir` (default `relative_to`; see the module docstring).

    Returns how many files were restored. Each file is replaced atomically, so a kill in the middle
    leaves every file either as it was or as restored, and running the restore again finishes it.
    Paths are shown in full, or relative to `relative_to` when they are inside it (the app's view).
    """
    root = project_dir if project_dir is not None else relative_to
    if root is None:
        raise ValueError("restore_files needs the project directory: a restore writes only inside it unasked")
    restored = 0
    for change in changes:
        shown = shown_path(change.path, relative_to)
        if change.not_kept:
            write(f"  not restored: {shown} ({change.not_kept})")
            continue
        resolved, outside, allowed = confinement(root, change.path)
        if not allowed:
            write(f"  not restored: {shown} ({outside})")
            continue
        if outside is not None:
            question = f"  {shown} is {outside}; restore it there anyway? [y/N] "
            if ask is None:
                write(f"  not restored: {shown} ({outside}; only restored when you confirm it interactively)")
                continue
            if not ask(question):
                write(f"  left alone: {shown} ({outside})")
                continue
        change = plain_replace(change, path=str(resolved))  # write where was checked, not through a link
        if change.state() == "changed-since":
            question = f"  {shown} was changed after evo-agent last wrote it; restore it anyway? [y/N] "
            if ask is None or not ask(question):
                write(f"  left alone: {shown} (changed since evo-agent wrote it)")
                continue
        try:
            restore_opened(change)
        except OSError as exc:
            write(f"  not restored: {shown} ({exc.strerror or exc})")
            continue
        restored += 1
        write(f"  {'restored' if change.existed else 'removed'}: {shown}")
    write(f"Restored {restored} of {len(changes)} file{'s' if len(changes) != 1 else ''}. {BASH_NOTE}")
    return restored


def restore_opened(change: FileChange) -> None:
    """Put one file back (atomic: temp file + rename), inside its directory opened without following a symlink.

    `change.path` is the real path that was checked (and asked about): its directory is opened as it is, one
    step at a time with O_NOFOLLOW (tools/safe_open.py), never resolved again, so a directory swapped for a
    symlink meanwhile (a `git pull` while the question waited) fails the restore instead of redirecting it;
    the file itself is replaced by a rename, which never follows a symlink. Raises OSError.
    """
    parent = os.path.dirname(change.path)
    name = os.path.basename(change.path)
    if not change.existed:
        try:
            dir_fd = open_dir(parent)
        except FileNotFoundError:
            return
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        finally:
            os.close(dir_fd)
        return
    if change.backup is None:
        raise OSError(0, change.not_kept or "no backup")
    data = read_backup(change.backup)
    dir_fd = open_dir(parent, create=True)
    try:  # the file's own permissions back, under the umask as when it was made
        replace_file(name, data, dir_fd=dir_fd, mode=permission_bits(change.mode), exact_mode=False)
    finally:
        os.close(dir_fd)


