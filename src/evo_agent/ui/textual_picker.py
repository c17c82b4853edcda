"""The Textual /resume picker of the Textual app (legacy).

Kept only while src/evo_agent/ui/app.py is a Textual app (it pushes `SessionPicker` as a
screen); the picker itself is evo_agent.ui.picker (prompt_toolkit). Delete this module when the
app rewrite lands.

It reads meta.json only, and only what the first screen needs before it is
drawn: `SessionStore.newest()` orders the sessions by their transcripts'
mtimes (one stat each) and reads the metas of the newest; the whole list
(`SessionStore.list()`, which typing-to-filter needs) is loaded in a worker
thread after the first paint and swapped in without moving the highlight.
`SessionList` is a Line-API widget that formats just the rows on screen, so
10,000 sessions cost one list and a sort, not 10,000 widgets.

    screen = SessionPicker(store)          # push_screen(screen, callback) → id | None
    run_picker(project_dir)                # standalone, for `evo-agent --resume` without an id
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Iterable, Sequence

from rich.cells import cell_len, get_character_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from evo_agent.session import SessionInfo, SessionStore

from .signals import SignalExit, exit_on_signals

__all__ = ["SessionList", "SessionPicker", "PickerApp", "run_picker", "format_row", "truncate_cells",
           "FIRST_SCREEN_ROWS"]

ELLIPSIS = "…"
NO_PROMPT = "(no prompt)"
FIRST_SCREEN_ROWS = 100  # more than a terminal shows; the rest arrives after the first paint


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
        size = get_character_cell_size(ch)
        if used + size > budget:
            break
        out.append(ch)
        used += size
    return "".join(out) + ELLIPSIS


def format_created(created_ms: int) -> str:
    """Local creation time, `2026-05-31 19:58`."""
    try:
        return datetime.fromtimestamp(created_ms / 1000).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "????-??-?? ??:??"


def format_row(info: SessionInfo, width: int | None = None) -> str:
    """One picker row: `2026-05-31 19:58  tokens=12,450  「fix the flaky upload test…」`.

    With `width`, the first prompt is truncated (with …) so the row fits in that many cells.
    """
    meta = info.meta
    prefix = f"{format_created(meta.created_ms)}  tokens={meta.total_tokens:,}  "
    prompt = " ".join((meta.first_prompt or NO_PROMPT).split()) or NO_PROMPT
    if width is not None:
        room = width - cell_len(prefix) - 4  # 「 and 」 are two cells each
        prompt = truncate_cells(prompt, max(room, 1))
    return f"{prefix}「{prompt}」"


class SessionList(ScrollView, can_focus=True):
    """A virtual list of sessions: only the visible rows are ever formatted."""

    COMPONENT_CLASSES = {"session-list--highlight", "session-list--empty"}

    DEFAULT_CSS = """
    SessionList {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    SessionList > .session-list--highlight {
        background: $accent 40%;
        text-style: bold;
    }
    SessionList:focus > .session-list--highlight {
        background: $accent;
    }
    SessionList > .session-list--empty {
        color: $text-muted;
        text-style: italic;
    }
    """

    BINDINGS = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "select", "Resume", show=False),
    ]

    highlighted: reactive[int] = reactive(0, always_update=True, repaint=True)

    class Selected(Message):
        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    def __init__(self, rows: Sequence[SessionInfo] = (), *, empty_text: str = "no sessions",
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[SessionInfo] = list(rows)
        self.empty_text = empty_text
        self._cache: dict[tuple[int, int], str] = {}

    # Data -----------------------------------------------------------------

    def set_rows(self, rows: Iterable[SessionInfo], *, keep: str | None = None) -> None:
        """Show `rows`; the highlight goes to the session `keep` when it is among them, else to the top."""
        self.rows = list(rows)
        self._cache.clear()
        self.virtual_size = Size(0, max(len(self.rows), 1))
        index = next((i for i, row in enumerate(self.rows) if row.id == keep), None) if keep else None
        if index is None:
            self.highlighted = 0
            self.scroll_to(y=0, animate=False)
        else:
            self.highlighted = index
        self.refresh()

    @property
    def highlighted_info(self) -> SessionInfo | None:
        if 0 <= self.highlighted < len(self.rows):
            return self.rows[self.highlighted]
        return None

    def on_mount(self) -> None:
        self.virtual_size = Size(0, max(len(self.rows), 1))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(len(self.rows), 1)

    # Drawing --------------------------------------------------------------

    def _row_text(self, index: int, width: int) -> str:
        key = (index, width)
        text = self._cache.get(key)
        if text is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            text = self._cache[key] = format_row(self.rows[index], width)
        return text

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = round(self.scroll_y) + y
        base = self.rich_style
        if not self.rows:
            if y == 0:
                style = self.get_component_rich_style("session-list--empty")
                return Strip([Segment(truncate_cells(self.empty_text, width), style)]).extend_cell_length(width, base)
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        text = self._row_text(index, width)
        style: Style = self.get_component_rich_style("session-list--highlight") if index == self.highlighted else base
        return Strip([Segment(text, style)]).extend_cell_length(width, style).crop(0, width)

    # Moving ---------------------------------------------------------------

    def validate_highlighted(self, value: int) -> int:
        if not self.rows:
            return 0
        return max(0, min(value, len(self.rows) - 1))

    def watch_highlighted(self, value: int) -> None:
        self._keep_visible(value)

    def _keep_visible(self, index: int) -> None:
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = round(self.scroll_y)
        if index < top:
            self.scroll_to(y=index, animate=False)
        elif index >= top + height:
            self.scroll_to(y=index - height + 1, animate=False)

    def action_cursor_up(self) -> None:
        self.highlighted -= 1

    def action_cursor_down(self) -> None:
        self.highlighted += 1

    def action_page_up(self) -> None:
        self.highlighted -= max(self.scrollable_content_region.height - 1, 1)

    def action_page_down(self) -> None:
        self.highlighted += max(self.scrollable_content_region.height - 1, 1)

    def action_first(self) -> None:
        self.highlighted = 0

    def action_last(self) -> None:
        self.highlighted = len(self.rows) - 1

    def action_select(self) -> None:
        info = self.highlighted_info
        if info is not None:
            self.post_message(self.Selected(info.id))

    def on_click(self, event: events.Click) -> None:
        index = round(self.scroll_y) + event.y
        if 0 <= index < len(self.rows):
            if index == self.highlighted and event.chain >= 2:
                self.action_select()
            self.highlighted = index


def matches(info: SessionInfo, needle: str) -> bool:
    """Does a (lowercased) filter match this session's first prompt or id?"""
    if needle in info.meta.id:
        return True
    prompt = info.meta.first_prompt
    return prompt is not None and needle in prompt.lower()


class SessionPicker(Screen[str | None]):
    """Choose a session to resume: dismisses with its id, or None on Esc.

    Give it a `SessionStore` (listed when the screen is built) or the rows
    themselves (`rows=`), e.g. when the caller has listed already.
    """

    DEFAULT_CSS = """
    SessionPicker {
        layout: vertical;
    }
    SessionPicker:inline {
        height: auto;
    }
    SessionPicker #picker-title {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    SessionPicker #picker-filter {
        border: none;
        height: 1;
        padding: 0 1;
        margin: 0 0 1 0;
    }
    SessionPicker SessionList {
        height: 1fr;
        padding: 0 1;
    }
    SessionPicker:inline SessionList {
        height: auto;
        max-height: 15;
    }
    SessionPicker #picker-count {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("up", "move(-1)", "Up", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("ctrl+home", "edge(0)", "First", show=False, priority=True),
        Binding("ctrl+end", "edge(1)", "Last", show=False, priority=True),
    ]

    class RestLoaded(Message):
        """The whole list, from the worker thread."""

        def __init__(self, rows: list[SessionInfo]) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self, store: SessionStore | None = None, *, rows: Sequence[SessionInfo] | None = None,
                 load_rest: bool | None = None, exclude: Iterable[str] = (),
                 title: str = "Resume a session  (↑/↓ move · Enter resume · Esc cancel · type to filter)",
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        """`store` alone: its newest sessions now, the rest after the first paint. `rows` alone:
        exactly those. Both: `rows` is the first screen (e.g. `store.newest()` already called) and,
        with `load_rest`, the rest comes from `store`. Sessions in `exclude` are never shown."""
        super().__init__(name=name, id=id, classes=classes)
        self.store = store
        self._exclude = frozenset(exclude)
        if rows is None and store is not None:
            rows = store.newest(FIRST_SCREEN_ROWS + len(self._exclude))
            load_rest = True if load_rest is None else load_rest
        rows = [row for row in (rows or []) if row.id not in self._exclude]
        # Fewer rows than a first screen asks for is every session there is.
        self.rest_pending = bool(load_rest) and store is not None and len(rows) >= FIRST_SCREEN_ROWS
        self.all_rows: list[SessionInfo] = rows
        self.title_text = title
        self._filter = ""

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="picker-title")
        yield Input(placeholder="filter by prompt text or id", id="picker-filter")
        yield SessionList(self.all_rows, id="picker-list",
                          empty_text="no sessions in this project yet" if not self.all_rows else "no match")
        yield Static(self._count_text(len(self.all_rows)), id="picker-count")

    def on_mount(self) -> None:
        self.query_one("#picker-filter", Input).focus()
        if self.rest_pending:
            self.call_after_refresh(self._load_rest)  # after the first screen is drawn

    @work(thread=True, exit_on_error=False, group="picker-rest")
    def _load_rest(self) -> None:
        rows = self.store.list() if self.store is not None else []
        self.post_message(self.RestLoaded(rows))

    def on_session_picker_rest_loaded(self, event: RestLoaded) -> None:
        event.stop()
        self.rest_pending = False
        self.all_rows = [row for row in event.rows if row.id not in self._exclude]
        lst = self.session_list
        current = lst.highlighted_info
        rows = self.filtered(self._filter)
        lst.set_rows(rows, keep=current.id if current else None)
        self.query_one("#picker-count", Static).update(self._count_text(len(rows)))

    @property
    def session_list(self) -> SessionList:
        return self.query_one("#picker-list", SessionList)

    def _count_text(self, shown: int) -> str:
        total = len(self.all_rows)
        text = f"{total:,} sessions" if shown == total else f"{shown:,} of {total:,} sessions"
        return f"{text} shown · loading the rest…" if self.rest_pending else text

    # Filtering ------------------------------------------------------------

    def filtered(self, text: str) -> list[SessionInfo]:
        needle = " ".join(text.split()).lower()
        if not needle:
            return self.all_rows
        return [row for row in self.all_rows if matches(row, needle)]

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.value == self._filter:
            return
        self._filter = event.value
        rows = self.filtered(event.value)
        lst = self.session_list
        lst.empty_text = "no match" if self.all_rows else "no sessions in this project yet"
        lst.set_rows(rows)
        self.query_one("#picker-count", Static).update(self._count_text(len(rows)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_choose()

    def on_session_list_selected(self, event: SessionList.Selected) -> None:
        event.stop()
        self.dismiss(event.session_id)

    # Actions --------------------------------------------------------------

    def action_move(self, delta: int) -> None:
        self.session_list.highlighted += delta

    def action_page(self, delta: int) -> None:
        lst = self.session_list
        lst.highlighted += delta * max(lst.scrollable_content_region.height - 1, 1)

    def action_edge(self, last: int) -> None:
        lst = self.session_list
        lst.highlighted = len(lst.rows) - 1 if last else 0

    def action_choose(self) -> None:
        info = self.session_list.highlighted_info
        if info is not None:
            self.dismiss(info.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PickerApp(App[str | None]):
    """The picker on its own: `PickerApp(store).run(inline=True)` → id or None."""

    def __init__(self, store: SessionStore | None = None, *, rows: Sequence[SessionInfo] | None = None,
                 load_rest: bool | None = None) -> None:
        super().__init__()
        self.store = store
        self.rows = rows
        self.load_rest = load_rest

    def on_mount(self) -> None:
        self.push_screen(SessionPicker(self.store, rows=self.rows, load_rest=self.load_rest), self.exit)
        exit_on_signals(lambda code: self.exit(None, return_code=code))


def run_picker(project_dir: Path | str, *, inline: bool = True) -> str | None:
    """Show the picker for `project_dir`; the chosen session id, or None (cancelled, or no sessions).

    Reads the first screen first: with no session at all it returns None without
    drawing anything (the caller says "no sessions to resume"). Raises SignalExit
    when SIGTERM or SIGHUP ended it (the terminal is restored first).
    """
    store = SessionStore(project_dir)
    rows = store.newest(FIRST_SCREEN_ROWS)
    if not rows:
        return None
    app = PickerApp(store, rows=rows, load_rest=True)
    chosen = app.run(inline=inline)
    if app.return_code:
        raise SignalExit(app.return_code)
    return chosen
