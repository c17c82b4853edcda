"""The session picker (SPEC §5): choose a session of this project to resume, newest update first.

Two ways in, one screen (drawn by `picker_view`, prompt_toolkit, below the cursor, erased on exit):

    run_picker(project_dir)              # standalone: `evo-agent --resume` without an id
    await pick_session(project_dir)      # inside a running asyncio loop: `/resume` in the app

Both return the chosen session id, or None (Esc, Ctrl+C, or no session at all), and raise
`SignalExit` (129 for a closed terminal, 143 for SIGTERM) when the terminal goes away: the picker
never outlives its terminal.

This module holds what the screen shows, as pure functions (row text, filtering, the preview of a
session's last exchange, read from the transcript's tail). It imports nothing heavy: prompt_toolkit
is imported only when a picker is drawn, so `evo-agent --resume` pays for it once, when it needs it.
Every string that comes from a session passes through `terminal_safe` before it is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from evo_agent.safe_text import terminal_safe
from evo_agent.session import (
    INTERRUPTED_MARKER,
    MESSAGES_NAME,
    SessionInfo,
    SessionMeta,
    one_line,
    prompt_text,
    text_of,
)

from .signals import SignalExit

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from evo_agent.session import SessionStore

__all__ = ["run_picker", "pick_session", "format_row", "format_updated", "format_tokens", "truncate_cells",
           "matches", "filter_rows", "excerpt", "Exchange", "read_last_exchange", "session_name",
           "TAIL_BYTES", "SignalExit", "plan_heights", "wrap_cells", "first_screen_rows", "TeamSource", "team_row",
           "team_member"]

ELLIPSIS = "…"
NO_PROMPT = "(no prompt)"
TAIL_BYTES = 64 * 1024  # how much of a transcript the preview reads, from its end
LARGE_TAIL_BYTES = 1024 * 1024  # read once more, when the last record alone is longer than that
BRANCH_CELLS = 12


# Text widths ------------------------------------------------------------------------------------


def _cell_width(char: str) -> int:
    from prompt_toolkit.utils import get_cwidth  # what the renderer counts, so rows fit exactly

    return max(get_cwidth(char), 0)


def cell_len(text: str) -> int:
    """Terminal cells `text` takes (wide CJK characters count two)."""
    if text.isascii():
        return len(text)
    return sum(_cell_width(ch) for ch in text)


def truncate_cells(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells, ending in … when cut."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    budget = width - 1  # room for the ellipsis
    used = 0
    out = []
    for ch in text:
        size = _cell_width(ch)
        if used + size > budget:
            break
        out.append(ch)
        used += size
    return "".join(out) + ELLIPSIS


def pad_cells(text: str, width: int) -> str:
    """`text` cut or padded with spaces to exactly `width` cells."""
    text = truncate_cells(text, width)
    return text + " " * (width - cell_len(text))


# Sizes ------------------------------------------------------------------------------------------


def plan_heights(term_rows: int, count: int) -> tuple[int, int]:
    """(list rows, preview rows) for a terminal `term_rows` high showing `count` sessions.

    Four lines of chrome (title, filter, column titles, status) and one spare line; the list gets
    what is left, the preview (a detail line, the prompt, 2–6 lines of answer) only when the list
    still shows at least five rows (or all of them).
    """
    avail = max(term_rows - 5, 1)
    want = max(count, 1)
    answer_lines = min(max((term_rows - 20) // 4, 2), 6)
    preview = 2 + answer_lines
    if avail - preview >= min(want, 5):
        return min(want, avail - preview), preview
    return min(want, avail), 0


def first_screen_rows(term_rows: int) -> int:
    """How many sessions to read before the first paint: the rows a terminal this high shows.

    The rest (typing-to-filter needs every session) is read after the first paint.
    """
    return plan_heights(term_rows, 1 << 30)[0]


def wrap_cells(body: str, width: int, max_lines: int) -> list[str]:
    """`body` wrapped to `width` cells, at most `max_lines` lines (the last ends in … when cut)."""
    if width <= 0 or max_lines <= 0:
        return []
    out: list[str] = []
    for para in body.splitlines() or [""]:
        line = ""
        for word in para.split(" "):
            candidate = f"{line} {word}" if line else word
            if cell_len(candidate) <= width:
                line = candidate
                continue
            if line:
                out.append(line)
            while cell_len(word) > width:  # a word longer than the line: hard cut
                head = truncate_cells(word, width + 1)[:-1] if width > 0 else ""
                head = head or word[:1]
                out.append(head)
                word = word[len(head):]
            line = word
        out.append(line)
        if len(out) > max_lines:
            break
    while out and not out[-1].strip() and len(out) > 1:
        out.pop()
    if len(out) > max_lines:
        out = out[:max_lines]
        out[-1] = truncate_cells(out[-1], max(width - 1, 0)).rstrip(" " + ELLIPSIS) + ELLIPSIS
    return out



# One row ----------------------------------------------------------------------------------------


def safe_line(text: str | None) -> str:
    """A session's string made safe for a terminal and squeezed onto one line."""
    return one_line(terminal_safe(text, keep_newlines=False).replace("^J", " ")) if text else ""


def session_name(info: SessionInfo) -> str:
    """The session's name, when it has one (meta `name`, from the names feature), else ''."""
    name = getattr(info.meta, "name", None) or getattr(info, "name", None)
    if not name and isinstance(getattr(info.meta, "extra", None), dict):
        name = info.meta.extra.get("name")
    return safe_line(name) if isinstance(name, str) else ""


def format_updated(updated_ms: int) -> str:
    """Local time of the last update, `2026-05-31 19:58` (the rows are sorted by it)."""
    try:
        return datetime.fromtimestamp(updated_ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "????-??-?? ??:??"


def format_tokens(tokens: int) -> str:
    """Compact token count: 950, 12.4k, 3.1M."""
    if tokens < 1000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1000:.1f}k" if tokens < 100_000 else f"{tokens // 1000}k"
    return f"{tokens / 1_000_000:.1f}M"


def show_branch(width: int) -> bool:
    """The branch column is dropped on narrow terminals (the preview still names it)."""
    return width >= 72


def header_row(width: int) -> str:
    """The column titles above the rows, aligned with `format_row`."""
    head = f"{'Updated':<16}  {'Msgs':>4}  {'Tokens':>6}  "
    if show_branch(width):
        head += f"{'Branch':<{BRANCH_CELLS}}  "
    return truncate_cells(head + "Name / first prompt", width)


def excerpt(snippet: str, needle: str, room: int) -> str:
    """`snippet` on one line, starting a few characters before `needle` so the match shows in `room` cells."""
    line = safe_line(snippet)
    at = line.lower().find(needle.lower()) if needle else -1
    lead = max(min(room // 4, 12), 1)
    if at > lead:
        line = ELLIPSIS + line[at - lead + 1:].lstrip(ELLIPSIS)
    return line


def format_row(info: SessionInfo, width: int = 100, *, content: str | None = None, needle: str = "") -> str:
    """One picker row, exactly `width` cells at most:

    `2026-05-31 19:58    12   12.4k  main                "fix the flaky upload test"`

    Last update time, message count, total tokens, branch (when there is room), the name when the
    session has one, and the first prompt in plain quotes, cut with … to fit. A session found by its
    content (`content`: the words around the match of `needle`) shows `content: "…"` instead of the
    first prompt, starting just before the match.
    """
    meta = info.meta
    row = f"{format_updated(meta.updated_ms)}  {meta.message_count:>4}  {format_tokens(meta.total_tokens):>6}  "
    if show_branch(width):
        row += pad_cells(safe_line(meta.git_branch) or "-", BRANCH_CELLS) + "  "
    who = team_member(info)
    if who:  # the team view: whose session it is
        row += f"{who} "
    foreign = getattr(info, "foreign", None)
    if foreign:  # recorded elsewhere (session/trust.py): marked, and resuming it asks first
        row += f"[elsewhere: {safe_line(foreign)}] "
    name = session_name(info)
    if name:
        row += f"{name}: "
    prompt = safe_line(meta.first_prompt) or NO_PROMPT
    if content is not None:
        row += "content: "
    room = width - cell_len(row) - 2  # the two quotes
    if content is not None:
        prompt = excerpt(content, needle, room)
    if room < 4:
        return truncate_cells(row.rstrip(), width)
    return f'{row}"{truncate_cells(prompt, room)}"'


# Filtering --------------------------------------------------------------------------------------


def normalise_filter(text: str) -> str:
    return " ".join(text.split()).lower()


def matches(info: SessionInfo, needle: str) -> bool:
    """Does a (normalised) filter match this session's first prompt, name, branch, id or (team view) author?"""
    meta = info.meta
    if needle in meta.id:
        return True
    for text in (meta.first_prompt, session_name(info), meta.git_branch, team_member(info)):
        if text and needle in " ".join(text.split()).lower():
            return True
    return False


def filter_rows(rows: Sequence[SessionInfo], text: str) -> Sequence[SessionInfo]:
    """The rows matching `text` (case-insensitive substring), in their order; all rows for ''."""
    needle = normalise_filter(text)
    if not needle:
        return rows
    return [row for row in rows if matches(row, needle)]


# The preview: the last exchange, from the transcript's tail --------------------------------------


@dataclass(frozen=True)
class Exchange:
    """The last thing the user asked and the start of what came back (both terminal-safe)."""

    prompt: str | None  # None: the prompt is further back than the tail that was read
    answer: str


def _decode(line: bytes) -> dict | None:
    from evo_agent.session import decode

    try:
        record = decode(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _human_prompt(message: object) -> str | None:
    text = prompt_text(message)
    if text is None or text == INTERRUPTED_MARKER:
        return None
    return text


def tail_lines(path: str | os.PathLike, limit: int = TAIL_BYTES) -> list[bytes]:
    """The complete lines among the last `limit` bytes of a file (one read, never the whole file)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        start = max(0, size - limit)
        f.seek(start)
        data = f.read(limit)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first one began before the tail
    return [line for line in lines if line.strip()]


def read_last_exchange(session_dir: str | os.PathLike, limit: int = TAIL_BYTES,
                       answer_chars: int = 600) -> Exchange | None:
    """The last human prompt of a session and the start of the answer to it, from the last
    `limit` bytes of its transcript (`LARGE_TAIL_BYTES` when those hold not one whole message,
    e.g. a single huge answer); None when the tail holds neither (or cannot be read)."""
    path = os.path.join(session_dir, MESSAGES_NAME)
    try:
        found = _exchange_in(tail_lines(path, limit), answer_chars)
        if found is None and limit < LARGE_TAIL_BYTES and os.path.getsize(path) > limit:
            found = _exchange_in(tail_lines(path, LARGE_TAIL_BYTES), answer_chars)
    except OSError:
        return None
    return found


def _exchange_in(lines: list[bytes], answer_chars: int) -> Exchange | None:
    answers: list[str] = []  # assistant texts after the prompt, newest first
    prompt = None
    for line in reversed(lines):
        record = _decode(line)
        if record is None:
            continue
        kind = record.get("type")
        if kind == "assistant":
            text = text_of(record.get("message"), "\n")
            if text.strip():
                answers.append(text)
        elif kind == "user":
            prompt = _human_prompt(record.get("message"))
            if prompt is not None:
                break
        elif kind == "compact_boundary" and answers:
            break
    answer = "\n".join(reversed(answers)).strip()
    if prompt is None and not answer:
        return None
    answer = terminal_safe(answer[:answer_chars]).replace("\t", "    ")
    return Exchange(safe_line(prompt) if prompt is not None else None, answer)


# The team view: sessions in the team store (EVO_AGENT_SYNC_URL) ---------------------------------------

# What the caller hands the picker when a team store is configured (cli: `sync.hooks.team_sessions`, which
# ui may not import): () -> (rows, error line or None), never raising. Rows are duck-typed: id, who, user, host,
# branch, created_ms, updated_ms, message_count, first_prompt, name.
TeamSource = Callable[[], tuple[Sequence[object], "str | None"]]


def team_row(remote: object) -> SessionInfo:
    """A team-store row as a picker row: no directory here (it is fetched when chosen), its author kept.

    The author is `who`: the database role when the store vouches for it, else the user@host the client
    claimed. Never the claim where the store knows better: any teammate's client may say `alice@her-laptop`."""
    get = lambda name, default=None: getattr(remote, name, default)  # noqa: E731
    who = get("who")
    if not isinstance(who, str) or not who:
        who = f"{get('user', '?')}@{get('host', '?')}"
    meta = SessionMeta(id=str(get("id")), created_ms=int(get("created_ms", 0) or 0),
                       updated_ms=int(get("updated_ms", 0) or 0), git_branch=get("branch"),
                       first_prompt=get("first_prompt"), name=get("name"),
                       message_count=int(get("message_count", 0) or 0), extra={"team_member": who})
    return SessionInfo(meta, "")


def team_member(info: SessionInfo) -> str:
    """`user@host` of a team-store row, '' for a session of this machine."""
    extra = getattr(info.meta, "extra", None)
    who = extra.get("team_member") if isinstance(extra, dict) else None
    return safe_line(who) if isinstance(who, str) else ""


# Running it ---------------------------------------------------------------------------------------


async def pick_session(project_dir: Path | str, *, exclude: Iterable[str] = (), store: SessionStore | None = None,
                       input=None, output=None,  # noqa: A002 - prompt_toolkit's names
                       team: TeamSource | None = None, on_empty: Callable[[], None] | None = None) -> str | None:
    """Show the picker in the running asyncio loop (e.g. while the app's prompt is suspended).

    Returns the chosen id, or None (Esc/Ctrl+C, or no session to show: then nothing is drawn).
    Sessions in `exclude` (the live one) are not offered. Raises `SignalExit` when SIGHUP or
    SIGTERM arrives or the terminal is gone (reads hit EOF or EIO); the loop's own SIGHUP/SIGTERM
    handlers are put back afterwards. `input`/`output` are prompt_toolkit objects (tests, benchmarks).
    With `team` (a team store is configured), Tab switches to the team's sessions; choosing one returns
    its id, which the caller resolves as always (the remote-aware store fetches it first). `on_empty` is called
    when there is no session to show (so the caller can say so: the app's `/resume` otherwise did nothing).
    """
    from .picker_view import PickerView

    view = PickerView.for_project(project_dir, exclude=exclude, store=store, input=input, output=output, team=team)
    if view is None:
        if on_empty is not None:
            on_empty()
        return None
    return await view.run()


def run_picker(project_dir: Path | str, **kwargs: Any) -> str | None:
    """The picker on its own (no loop running yet): `evo-agent --resume` without an id.

    With no session at all it returns None without drawing anything. Raises `SignalExit` when the
    terminal goes away or SIGTERM arrives (the terminal is restored first, where there is one).
    """
    import asyncio

    return asyncio.run(pick_session(project_dir, **kwargs))
