"""`evo-agent sessions list` and the numbered session list of the plain REPL."""

from __future__ import annotations

import os
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

from evo_agent.safe_text import terminal_line, terminal_safe
from evo_agent.session import (
    SessionInfo,
    SessionsDirRefused,
    SessionStore,
    Worktree,
    check_sessions_dir,
    git_worktrees,
)

from .common import fmt_ms, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import TextIO

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
    return f"[recorded elsewhere: {terminal_line(row.foreign)}] " if row.foreign else ""


def sessions_list(
    store: SessionStore, out: TextIO, *, as_json: bool = False, include_all: bool = False, limit: int | None = None,
    worktrees: Sequence[Worktree] = (), wide: bool = False,
) -> int:
    """The table (or JSON array) of sessions, most recently updated first; at most `limit` rows.

    `worktrees`: the repository's other worktrees, whose sessions follow, one table each (in JSON, every
    row says its `worktree`); resuming one of them takes `--project-dir` with that path.
    The table fits the terminal (id, age, messages, the title cut with …) unless `wide` or it fits whole.
    """
    rows = _rows(store, include_all, limit)
    others = [(tree, _worktree_rows(tree, include_all, limit)) for tree in worktrees]
    if as_json:
        data = [row_json(r) for r in (rows[:limit] if limit else rows)]
        for tree, tree_rows in others:
            data += [{**row_json(r), "worktree": str(tree.path)} for r in (tree_rows[:limit] if limit else tree_rows)]
        from ..trust import json_safe_dumps  # here: the table, the common case, needs neither json nor its escapes

        out.write(json_safe_dumps(data, indent=2) + "\n")
        return 0
    if not rows and not any(tree_rows for _, tree_rows in others):
        out.write(f"No sessions in {terminal_line(store.sessions_dir)}\n")
        return 0
    _write_table(rows, out, limit, wide)
    for tree, tree_rows in others:
        if tree_rows:
            import shlex  # here: only another worktree's table quotes a path

            branch = f" ({terminal_line(tree.branch)})" if tree.branch else ""
            path = terminal_line(tree.path)
            quoted = terminal_line(shlex.quote(str(tree.path)))
            out.write(f"\nWorktree {path}{branch} — resume with --project-dir {quoted}:\n")
            _write_table(tree_rows, out, limit, wide)
    return 0


def _rows(store: SessionStore, include_all: bool, limit: int | None) -> list[SessionInfo]:
    """Every row, or with `limit` the newest limit + 1 (`newest`: about that many metas read, not all of them;
    the one beyond says that more exist)."""
    if limit:
        return store.newest(limit + 1, include_empty=include_all)
    return store.list(include_empty=include_all)


def table_width(out: TextIO) -> int | None:
    """The width a table must fit: $COLUMNS when set, else the terminal's; None (no limit) for a pipe."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(out.fileno()).columns if out.isatty() else None
    except (AttributeError, OSError, ValueError):
        return None


def cells(text: str) -> int:
    """Terminal columns `text` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def fit(text: str, width: int) -> str:
    """`text` cut to `width` terminal columns, with … where it was cut."""
    if cells(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:
        used += cells(ch)
        if used > width - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


def age(ms: int, now_ms: int) -> str:
    """How long ago, as a person says it at a glance: `just now`, `5m ago`, `3h ago`, `2d ago`, else the date."""
    seconds = max(0, (now_ms - ms) // 1000)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    if seconds < 30 * 86400:
        return f"{seconds // 86400}d ago"
    return fmt_ms(ms)[:10]


def _write_table(rows: list[SessionInfo], out: TextIO, limit: int | None, wide: bool = False) -> None:
    hidden = limit is not None and 0 < limit < len(rows)
    if hidden:
        rows = rows[:limit]
    if not rows:
        return
    width = None if wide else table_width(out)
    header = ("ID", "CREATED", "UPDATED", "MESSAGES", "TOKENS", "BRANCH", "NAME OR FIRST PROMPT")
    table = [header] + [
        (
            r.id,
            fmt_ms(r.meta.created_ms),
            fmt_ms(r.meta.updated_ms),
            str(r.meta.message_count),
            f"{r.meta.total_tokens:,}",
            terminal_line(r.meta.git_branch or "-"),
            foreign_mark(r) + title(r),
        )
        for r in rows
    ]
    lines = _aligned(table, right={3, 4})
    if width is not None and max(cells(line) for line in lines) > width:
        now_ms = int(time.time() * 1000)
        narrow = [("ID", "UPDATED", "MSGS", "NAME OR FIRST PROMPT")] + [
            (r.id, age(r.meta.updated_ms, now_ms), str(r.meta.message_count), foreign_mark(r) + title(r, 200))
            for r in rows
        ]
        lines = [fit(line, width) for line in _aligned(narrow, right={2})]
    for line in lines:
        out.write(line + "\n")
    foreign = sum(1 for r in rows if r.foreign)
    if foreign:
        were = "s were" if foreign != 1 else " was"
        out.write(f"{foreign:,} session{were} recorded elsewhere: never continued by -c; "
                  "resuming asks first (evo-agent sessions adopt ID takes one on)\n")
    if hidden:
        out.write(f"… older sessions not shown (--limit {limit})\n")


def _aligned(table: Sequence[tuple[str, ...]], right: set[int]) -> list[str]:
    """The rows of `table` as lines, columns padded to one width; the last column as it is."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    return ["  ".join([c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
                      + [row[-1]]).rstrip() for row in table]


def _worktree_rows(tree: Worktree, include_all: bool, limit: int | None) -> list[SessionInfo]:
    """Another worktree's sessions, read only; none (and one line on stderr) when its sessions directory is refused
    (a link, another owner, something that is not a session), as for this project's own."""
    store = SessionStore(tree.path, write_back=False)
    try:
        check_sessions_dir(store.project_dir, store.sessions_dir, repair=False)
    except SessionsDirRefused as exc:
        print(terminal_line(f"evo-agent: {exc}"), file=sys.stderr)  # it may quote a link's target: anyone's text
        return []
    return _rows(store, include_all, limit)


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
