"""`evo-agent sessions list` and the numbered session list of the plain REPL."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionInfo, SessionStore, Worktree, git_worktrees

from ..trust import json_safe_dumps
from .common import fmt_ms, short

PICKER_ROWS = 20
IMPORTED_FROM = ("claude-code", "codex")  # session_start's provider of an imported session


def title(row: SessionInfo, limit: int = 60) -> str:
    """A session's name in brackets when it has one, else its first prompt: one terminal-safe line."""
    origin = f"(from {row.meta.provider}) " if row.meta.provider in IMPORTED_FROM else ""
    if row.meta.name:
        return terminal_safe(origin + f"[{short(row.meta.name, limit - 2)}]")
    return terminal_safe(origin + short(row.meta.first_prompt, limit)) or "-"


def row_json(row: SessionInfo) -> dict:
    data = row.meta.to_json()
    data.pop("messages_bytes", None)
    data["total_tokens"] = row.meta.total_tokens
    data["dir"] = row.dir
    data["foreign"] = row.foreign  # why this user did not record it here, or null
    return data


def foreign_mark(row: SessionInfo) -> str:
    """`[recorded elsewhere: tracked by git] ` before a foreign session's prompt; nothing for one of ours."""
    return f"[recorded elsewhere: {terminal_safe(row.foreign, keep_newlines=False)}] " if row.foreign else ""


def sessions_list(
    store: SessionStore, out: TextIO, *, as_json: bool = False, include_all: bool = False, limit: int | None = None,
    worktrees: Sequence[Worktree] = (),
) -> int:
    """The table (or JSON array) of sessions, most recently updated first; at most `limit` rows.

    `worktrees`: the repository's other worktrees, whose sessions follow, one table each (in JSON, every
    row says its `worktree`); resuming one of them takes `--project-dir` with that path.
    """
    rows = _rows(store, include_all, limit)
    others = [(tree, _rows(SessionStore(tree.path, write_back=False), include_all, limit)) for tree in worktrees]
    if as_json:
        data = [row_json(r) for r in (rows[:limit] if limit else rows)]
        for tree, tree_rows in others:
            data += [{**row_json(r), "worktree": str(tree.path)} for r in (tree_rows[:limit] if limit else tree_rows)]
        out.write(json_safe_dumps(data, indent=2) + "\n")
        return 0
    if not rows and not any(tree_rows for _, tree_rows in others):
        out.write(f"No sessions in {store.sessions_dir}\n")
        return 0
    _write_table(rows, out, limit)
    for tree, tree_rows in others:
        if tree_rows:
            branch = f" ({terminal_safe(tree.branch)})" if tree.branch else ""
            out.write(f"\nWorktree {terminal_safe(str(tree.path))}{branch} — resume with "
                      f"--project-dir {terminal_safe(shlex.quote(str(tree.path)))}:\n")
            _write_table(tree_rows, out, limit)
    return 0


def _rows(store: SessionStore, include_all: bool, limit: int | None) -> list[SessionInfo]:
    """Every row, or with `limit` the newest limit + 1 (`newest`: about that many metas read, not all of them;
    the one beyond says that more exist)."""
    if limit:
        return store.newest(limit + 1, include_empty=include_all)
    return store.list(include_empty=include_all)


def _write_table(rows: list[SessionInfo], out: TextIO, limit: int | None) -> None:
    hidden = bool(limit) and len(rows) > limit
    if hidden:
        rows = rows[:limit]
    if not rows:
        return
    header = ("ID", "CREATED", "UPDATED", "MESSAGES", "TOKENS", "BRANCH", "NAME OR FIRST PROMPT")
    table = [header] + [
        (
            r.id,
            fmt_ms(r.meta.created_ms),
            fmt_ms(r.meta.updated_ms),
            str(r.meta.message_count),
            f"{r.meta.total_tokens:,}",
            terminal_safe(r.meta.git_branch or "-"),
            foreign_mark(r) + title(r),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    right = {3, 4}
    for row in table:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells + [row[-1]]).rstrip() + "\n")
    foreign = sum(1 for r in rows if r.foreign)
    if foreign:
        were = "s were" if foreign != 1 else " was"
        out.write(f"{foreign:,} session{were} recorded elsewhere: never continued by -c; "
                  "resuming asks first (evo-agent sessions adopt ID takes one on)\n")
    if hidden:
        out.write(f"… older sessions not shown (--limit {limit})\n")


def other_worktrees(project_dir: Path) -> list[Worktree]:
    """The repository's worktrees other than the one `project_dir` is in (`git worktree list --porcelain`)."""
    here = os.path.realpath(project_dir)
    return [tree for tree in git_worktrees(project_dir)
            if os.path.realpath(tree.path) != here and not here.startswith(os.path.realpath(tree.path) + os.sep)]


def picker_line(n: int, row: SessionInfo) -> str:
    when, tokens = fmt_ms(row.meta.updated_ms), row.meta.total_tokens
    return f"{n:>3}. {when}  tokens={tokens:,}  {foreign_mark(row)}{title(row)}  {row.id}"


def pick_session(
    rows: list[SessionInfo],
    write: Callable[[str], None],
    read: Callable[[str], str | None],
) -> str | None:
    """Show a numbered list, read a number; the chosen id, or None (empty answer, EOF, bad number)."""
    shown = rows[:PICKER_ROWS]
    write("Sessions (most recent first):")
    for i, row in enumerate(shown, 1):
        write(picker_line(i, row))
    if len(rows) > len(shown):
        write(f"     … {len(rows) - len(shown)} older (evo-agent sessions list shows all; /resume ID takes any)")
    answer = read(f"Resume which session? [1-{len(shown)}, Enter to cancel] ")
    if answer is None:
        return None
    answer = answer.strip()
    if not answer:
        return None
    if answer.isdigit() and 1 <= int(answer) <= len(shown):
        return shown[int(answer) - 1].id
    # An id or prefix typed instead of a number: let the caller resolve it.
    return answer
