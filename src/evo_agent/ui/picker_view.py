"""The picker's screen: a small prompt_toolkit Application drawn below the cursor.

Why prompt_toolkit and not full screen: the picker is a moment between a shell prompt and the
app, so it draws in the lower part of the terminal, in the terminal's own colours (attributes only:
bold, dim, reverse; NO_COLOR honoured by prompt_toolkit), and erases itself when done, leaving the
scrollback as it was. Imported only when a picker is shown (see picker.py).

The first screen comes from `SessionStore.newest()` (about one meta.json read per visible row);
the whole list, which typing-to-filter needs, is read in a daemon thread after the first paint and
swapped in without moving the highlight off its session. Only the rows on screen are formatted.

It never outlives its terminal: SIGHUP/SIGTERM (through the loop's handlers, restored afterwards),
reads that hit EOF or EIO (prompt_toolkit's reader treats EIO as "nothing yet" and would spin), and
writes that fail all end it with `SignalExit`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import select
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.input.posix_utils import PosixStdinReader
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.output import create_output
from prompt_toolkit.styles import Style

from evo_agent.exit_codes import EXIT_HANGUP
from evo_agent.session import SessionInfo, SessionStore

from . import picker as text
from .erase import erase_down_in_place
from .picker_search import ContentMatch, ContentSearch
from .signals import EXIT_SIGNALS, SIGNAL_EXITS, SignalExit, suspend_to_shell

STYLE = Style.from_dict({
    "title": "bold",
    "help": "dim",
    "label": "dim",
    "header": "dim",
    "row.highlight": "reverse",
    "status": "dim",
    "detail": "dim",
    "prompt": "bold",
    "answer": "",
    "empty": "italic",
    "found": "italic",
})


class HangupAwareReader(PosixStdinReader):
    """prompt_toolkit's stdin reader, but a read error other than EINTR/EAGAIN closes the input.

    The stock reader turns every OSError into "no data" (for SIGWINCH), so when the terminal is gone
    (EIO) the loop sees a readable fd forever and spins; closed input ends the app with EOFError.
    """

    def read(self, count: int = 1024) -> str:
        if self.closed:
            return ""
        try:
            if not select.select([self.stdin_fd], [], [], 0)[0]:
                return ""
            data = os.read(self.stdin_fd, count)
        except InterruptedError:
            return ""
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return ""
            self.closed = True
            return ""
        if not data:
            self.closed = True
            return ""
        return self._stdin_decoder.decode(data)


def guard_input(inp: Input) -> None:
    """Put a `HangupAwareReader` in a Vt100 input (pipe inputs too); other inputs are left alone."""
    reader = getattr(inp, "stdin_reader", None)
    if isinstance(reader, PosixStdinReader) and not isinstance(reader, HangupAwareReader):
        encoding = getattr(getattr(inp, "stdin", None), "encoding", None) or "utf-8"
        inp.stdin_reader = HangupAwareReader(reader.stdin_fd, encoding=encoding)  # type: ignore[attr-defined]  # Vt100 inputs


class PickerView:
    """State and screen of one picker run. `await view.run()` → id | None, or raises SignalExit."""

    def __init__(self, store: SessionStore | None, rows: Sequence[SessionInfo], *, rest_pending: bool = False,
                 exclude: Iterable[str] = (), input=None, output=None,  # noqa: A002
                 team: text.TeamSource | None = None) -> None:
        self.store = store
        self.exclude = frozenset(exclude)
        self.local_rows: Sequence[SessionInfo] = [r for r in rows if r.id not in self.exclude]
        self.all_rows: Sequence[SessionInfo] = self.local_rows    # the rows of the view shown (local or team)
        self.team = team                      # None: no team store configured, no team view (Tab does nothing)
        self.showing_team = False
        self.team_rows: Sequence[SessionInfo] | None = None       # None: not read yet
        self.team_error: str | None = None
        self.rows: Sequence[SessionInfo] = self.all_rows
        self.title_rows: Sequence[SessionInfo] = self.all_rows   # what the filter matched by name, prompt, …
        self.content: dict[str, ContentMatch] = {}                # the fallback group, found inside sessions
        self.search = ContentSearch(self._content_found, self._content_done)
        self.rest_pending = rest_pending and store is not None
        self.highlighted = 0
        self.top = 0
        self._previews: dict[str, text.Exchange | None] = {}
        self._row_cache: dict[tuple[str, int], str] = {}
        self._hangup: int | None = None
        self._previous_handler: Callable | None = None
        self._started_rest = False
        self._team_loading = False
        self.painted = False  # the first screen is on the terminal (keys reach the picker from now on)
        self.filter = Buffer(multiline=False, on_text_changed=self._on_filter_changed)
        if input is None:
            input = create_input(always_prefer_tty=True)
        guard_input(input)
        if output is None:
            output = create_output(always_prefer_tty=True)
        self.app: Application = Application(
            layout=self._layout(), key_bindings=self._bindings(), style=STYLE, full_screen=False,
            erase_when_done=True, mouse_support=False, include_default_pygments_style=False,
            input=input, output=output,
        )
        self.app.ttimeoutlen = 0.05  # Esc answers at once instead of waiting half a second for a sequence
        erase_down_in_place(self.app.output)  # erased at the screen's top, no copy in tmux's scrollback
        self.app.after_render += self._after_render

    @classmethod
    def for_project(cls, project_dir: Path | str, *, exclude: Iterable[str] = (), store: SessionStore | None = None,
                    input=None, output=None, team: text.TeamSource | None = None) -> PickerView | None:  # noqa: A002
        """A view over a project's sessions with the first screen read; None when there is none (and no team)."""
        store = store or SessionStore(project_dir, warn=lambda _message: None)  # a warning would tear the screen
        exclude = frozenset(exclude)
        if output is None:
            output = create_output(always_prefer_tty=True)
        want = text.first_screen_rows(output.get_size().rows) + len(exclude)
        first = store.newest(want)
        rows = [r for r in first if r.id not in exclude]
        if not rows and team is None:
            return None
        pending = len(first) >= want  # fewer: every session there is
        view = cls(store, rows, rest_pending=pending, exclude=exclude, input=input, output=output, team=team)
        view.showing_team = not rows  # nothing here (a fresh clone): the team's sessions are what there is
        return view

    # Sizes --------------------------------------------------------------------------------------

    def _size(self) -> tuple[int, int]:
        size = self.app.output.get_size()
        return max(size.rows, 1), max(size.columns, 1)

    def heights(self) -> tuple[int, int]:
        rows, _ = self._size()
        return text.plan_heights(rows, len(self.all_rows))

    def list_height(self) -> int:
        return self.heights()[0]

    # State ----------------------------------------------------------------------------------------

    @property
    def highlighted_info(self) -> SessionInfo | None:
        if 0 <= self.highlighted < len(self.rows):
            return self.rows[self.highlighted]
        return None

    def move_to(self, index: int) -> None:
        """Highlight row `index` (clamped) and scroll so it is on screen."""
        self.highlighted = max(0, min(index, len(self.rows) - 1)) if self.rows else 0
        self._scroll_into_view(self.list_height())

    def _scroll_into_view(self, height: int) -> None:
        """Keep the highlight among the `height` rows shown (the terminal may have been resized)."""
        if self.highlighted < self.top:
            self.top = self.highlighted
        elif self.highlighted >= self.top + height:
            self.top = self.highlighted - height + 1
        self.top = max(0, min(self.top, max(len(self.rows) - height, 0)))

    def set_rows(self, rows: Sequence[SessionInfo], keep: str | None = None) -> None:
        self.rows = rows
        index = next((i for i, r in enumerate(rows) if r.id == keep), None) if keep else None
        self.top = 0
        self.move_to(index or 0)

    def _end(self) -> int:
        """End: the last row of the whole list (read now if it has not arrived yet: End means all of it)."""
        if self.rest_pending and self.store is not None:
            try:
                self.rest_loaded(self.store.list())
            except Exception:  # noqa: BLE001 - the rows at hand will do
                pass
        return len(self.rows) - 1

    def _on_filter_changed(self, _buffer: Buffer) -> None:
        self._apply_filter()

    def _apply_filter(self, keep: str | None = None) -> None:
        """Rows matching the filter by title at once; the sessions left out are searched inside, off the UI
        thread, and those that hold the text follow as a group marked as content matches."""
        self.title_rows = text.filter_rows(self.all_rows, self.filter.text)
        self.content = {}
        self.set_rows(self.title_rows, keep=keep)
        needle = text.normalise_filter(self.filter.text)
        titled = {r.id for r in self.title_rows}
        # The team view has no transcripts here to search (they are fetched when chosen).
        rest = [r for r in self.all_rows if r.id not in titled] if needle and not self.showing_team else []
        self.search.start(needle, rest, frozenset(r.id for r in self.all_rows) | self.exclude)

    def _content_found(self, generation: int, match: ContentMatch) -> None:
        if generation != self.search.generation:
            return  # a search for what was typed before
        self.content[match.info.id] = match
        current = self.highlighted_info
        self.set_rows([*self.title_rows, *(m.info for m in self.content.values())],
                      keep=current.id if current else None)
        self.app.invalidate()

    def _content_done(self, generation: int) -> None:
        if generation == self.search.generation:
            self.app.invalidate()

    def rest_loaded(self, rows: list[SessionInfo]) -> None:
        """The whole list arrived (in the loop's thread): swap it in, the highlight stays on its session."""
        if not self.rest_pending:
            return  # End read it already
        self.rest_pending = False
        self.local_rows = [r for r in rows if r.id not in self.exclude]
        if self.showing_team:
            return  # shown when Tab comes back to this machine's sessions
        current = self.highlighted_info
        self.all_rows = self.local_rows
        self._apply_filter(keep=current.id if current else None)
        self.app.invalidate()

    def toggle_team(self) -> None:
        """Tab: this machine's sessions ⇄ the team's (read from the store the first time, off the UI thread)."""
        if self.team is None:
            return
        self.showing_team = not self.showing_team
        if self.showing_team and self.team_rows is None and not self._team_loading:
            self._team_loading = True
            self._load_team_in_thread()
        self.all_rows = (self.team_rows or []) if self.showing_team else self.local_rows
        self._apply_filter()
        self.app.invalidate()

    def _load_team_in_thread(self) -> None:
        loop = asyncio.get_running_loop()
        team = self.team
        if team is None:
            return

        def work() -> None:
            try:
                remote, error = team()
                rows = [text.team_row(r) for r in remote]
            except Exception as exc:  # noqa: BLE001 - the source promises not to raise; one line if it does
                rows, error = [], f"evo-agent: cannot read the team store: {exc}"
            try:
                loop.call_soon_threadsafe(self.team_loaded, rows, error)
            except RuntimeError:
                pass  # the picker (and its loop) ended first

        threading.Thread(target=work, name="picker-team", daemon=True).start()

    def team_loaded(self, rows: list[SessionInfo], error: str | None) -> None:
        """The team's sessions arrived (in the loop's thread); shown now if the team view is on."""
        self._team_loading = False
        self.team_rows = [r for r in rows if r.id not in self.exclude]
        self.team_error = error
        if self.showing_team:
            self.all_rows = self.team_rows
            self._apply_filter()
        self.app.invalidate()

    def _load_rest_in_thread(self) -> None:
        loop = asyncio.get_running_loop()
        store = self.store
        if store is None:
            return

        def work() -> None:
            try:
                rows = store.list()
            except Exception:  # noqa: BLE001 - the first screen stays; filtering covers what it has
                rows = None
            try:
                if rows is not None:
                    loop.call_soon_threadsafe(self.rest_loaded, rows)
                else:
                    loop.call_soon_threadsafe(self._rest_failed, None)
            except RuntimeError:
                pass  # the picker (and its loop) ended first

        threading.Thread(target=work, name="picker-list", daemon=True).start()

    def _rest_failed(self, _rows: object) -> None:
        self.rest_pending = False
        self.app.invalidate()

    def _after_render(self, _app: Application) -> None:
        self.painted = True
        if self.showing_team and self.team_rows is None and not self._team_loading:
            self._team_loading = True  # opened on the team view: read the store after the first paint
            self._load_team_in_thread()
        if self.rest_pending and not self._started_rest:
            self._started_rest = True
            self._load_rest_in_thread()  # after the first screen is on the terminal

    def preview(self, info: SessionInfo) -> text.Exchange | None:
        if text.team_member(info):
            return None  # in the team store only: nothing here to read until it is fetched
        if info.id not in self._previews:
            if len(self._previews) > 256:
                self._previews.clear()
            self._previews[info.id] = text.read_last_exchange(info.dir)
        return self._previews[info.id]

    # Drawing --------------------------------------------------------------------------------------

    def _row_text(self, info: SessionInfo, width: int) -> str:
        match = self.content.get(info.id)
        if match is not None:  # a content match: the words around the match instead of the first prompt
            needle = text.normalise_filter(self.filter.text)
            return text.format_row(info, width, content=match.snippet, needle=needle)
        key = (info.id, width)
        row = self._row_cache.get(key)
        if row is None:
            if len(self._row_cache) > 4096:
                self._row_cache.clear()
            row = self._row_cache[key] = text.format_row(info, width)
        return row

    def list_fragments(self) -> list[tuple[str, str]]:
        _, columns = self._size()
        height = self.list_height()
        width = max(columns - 2, 1)
        if not self.rows:
            if self.showing_team:
                if self.team_error:
                    message = self.team_error
                elif self.team_rows is None:
                    message = "reading the team's sessions..."
                else:
                    message = "no sessions match" if self.all_rows else "no session of this repository in the store"
            else:
                message = ("no sessions match" if self.all_rows or self.rest_pending else
                           "no sessions in this project yet" + (" (Tab: the team's)" if self.team else ""))
            return [("class:empty", "  " + text.truncate_cells(message, width))]
        self._scroll_into_view(height)
        out: list[tuple[str, str]] = []
        for index in range(self.top, min(self.top + height, len(self.rows))):
            row = self._row_text(self.rows[index], width)
            if out:
                out.append(("", "\n"))
            if index == self.highlighted:
                out.append(("class:row.highlight", "> " + text.pad_cells(row, width)))
            else:
                out.append(("", "  " + row))
        return out

    def title_fragments(self) -> list[tuple[str, str]]:
        _, columns = self._size()
        title = "Resume a team session" if self.showing_team else "Resume a session"
        keys = "   Up/Down move, Enter resume, Esc cancel, type to filter"
        if self.team is not None:  # first: at 80 columns the end of the line is cut
            keys = "   Tab " + ("this machine" if self.showing_team else "team") + "," + keys[2:]
        return [("class:title", title), ("class:help", text.truncate_cells(keys, columns - len(title)))]

    def status_text(self) -> str:
        total, shown = len(self.all_rows), len(self.rows)
        counted = f"{total:,} session{'s' * (total != 1)}" if shown == total else f"{shown:,} of {total:,} sessions"
        if self.showing_team:
            counted = counted.replace("session", "team session", 1)
            if self.team_rows is None:
                counted = "reading the team store..."
        if self.rest_pending:
            counted += " shown, loading the rest..."
        if self.content:
            counted += f" ({len(self.content):,} by content)"
        if self.search.running:
            counted += "  ·  searching inside sessions..."
        return counted + "  ·  PgUp/PgDn, Home/End to move"

    def preview_fragments(self) -> list[tuple[str, str]]:
        _, columns = self._size()
        _, height = self.heights()
        info = self.highlighted_info
        if not height or info is None:
            return []
        meta = info.meta
        width = max(columns - 2, 1)
        details = [f"session {meta.id}"]
        if meta.git_branch:
            details.append(f"branch {text.safe_line(meta.git_branch)}")
        if meta.model:
            details.append(text.safe_line(meta.model))
        details.append(f"{meta.total_tokens:,} tokens")
        details.append(f"created {text.format_updated(meta.created_ms)}")
        out = [("class:detail", text.truncate_cells("-- " + "  ·  ".join(details) + " ", columns))]
        who = text.team_member(info)
        if who:
            out += [("", "\n"), ("class:found", "  " + text.truncate_cells(
                f"by {who}, in the team store: Enter copies it here and resumes it", width))]
            return out
        match = self.content.get(info.id)
        if match is not None:  # why it is listed: where the text was found
            article = "an" if match.kind[:1] in "aeiou" else "a"
            found = f"found in {article} {match.kind}: {text.safe_line(match.snippet)}"
            out += [("", "\n"), ("class:found", "  " + text.truncate_cells(found, width))]
            height -= 1
        exchange = self.preview(info)
        if exchange is None:
            out += [("", "\n"), ("class:empty", "  (nothing to preview)")]
            return out
        prompt = exchange.prompt if exchange.prompt is not None else "(the last prompt is further back)"
        out += [("", "\n"), ("class:prompt", "> " + text.truncate_cells(prompt, width))]
        for line in text.wrap_cells(exchange.answer or "(no answer)", width, height - 2):
            out += [("", "\n"), ("class:answer", "  " + line)]
        return out

    def _layout(self) -> Layout:
        title = Window(FormattedTextControl(self.title_fragments), height=1, wrap_lines=False)
        filter_line = VSplit([
            Window(FormattedTextControl([("class:label", "Filter: ")]), width=8, height=1),
            Window(BufferControl(self.filter), height=1, wrap_lines=False),
        ])
        header = Window(FormattedTextControl(lambda: [("class:header", "  " + text.header_row(
            max(self._size()[1] - 2, 1)))]), height=1, wrap_lines=False)
        rows = Window(FormattedTextControl(self.list_fragments), height=lambda: Dimension.exact(self.list_height()),
                      wrap_lines=False)
        status = Window(FormattedTextControl(lambda: [("class:status", "  " + text.truncate_cells(
            self.status_text(), max(self._size()[1] - 2, 1)))]), height=1,
                        wrap_lines=False)
        preview = Window(FormattedTextControl(self.preview_fragments),
                         height=lambda: Dimension.exact(self.heights()[1]), wrap_lines=False)
        layout = Layout(HSplit([title, filter_line, header, rows, status, preview]))
        layout.focus(self.filter)
        return layout

    # Keys -----------------------------------------------------------------------------------------

    def _bindings(self) -> KeyBindings:
        kb = KeyBindings()

        def page() -> int:
            return max(self.list_height() - 1, 1)

        moves: dict[str, Callable[[], int]] = {
            "up": lambda: self.highlighted - 1,
            "down": lambda: self.highlighted + 1,
            "c-p": lambda: self.highlighted - 1,
            "c-n": lambda: self.highlighted + 1,
            "pageup": lambda: self.highlighted - page(),
            "pagedown": lambda: self.highlighted + page(),
            "home": lambda: 0,
            "end": self._end,
        }
        for key, target in moves.items():
            kb.add(key, eager=True)(lambda _event, target=target: self.move_to(target()))

        @kb.add("tab", eager=True)
        def _toggle(_event: KeyPressEvent) -> None:
            self.toggle_team()

        @kb.add("enter", eager=True)
        def _choose(event: KeyPressEvent) -> None:
            info = self.highlighted_info
            if info is not None:
                event.app.exit(result=info.id)

        @kb.add("escape", eager=True)
        @kb.add("c-c", eager=True)
        def _cancel(event: KeyPressEvent) -> None:
            event.app.exit(result=None)

        @kb.add("c-d", eager=True)
        def _eof(event: KeyPressEvent) -> None:
            if not self.filter.text:
                event.app.exit(result=None)
            else:
                self.filter.delete()

        @kb.add("c-z", eager=True)
        def _suspend(event: KeyPressEvent) -> None:
            # As the app's Ctrl+Z (ui/keys.py): stopped to the shell, not a literal ^Z in the filter.
            suspend_to_shell(event.app)

        return kb

    # Running --------------------------------------------------------------------------------------

    def _leave(self, code: int) -> None:
        """End the picker because the terminal went away (or SIGTERM): run() raises SignalExit(code)."""
        if self._hangup is None:
            self._hangup = code
        if self.app.is_running and not self.app.is_done:
            self.app.exit(exception=SignalExit(code))

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        """A write to a terminal that is gone (EIO) ends the picker; anything else (e.g. a task of
        the app around it) goes where it went before."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in (errno.EIO, errno.ENXIO):
            self._leave(EXIT_HANGUP)
        elif self._previous_handler is not None:
            self._previous_handler(loop, context)
        else:
            loop.default_exception_handler(context)

    async def run(self) -> str | None:
        loop = asyncio.get_running_loop()
        saved = _take_signals(loop, self._leave)
        previous_handler = self._previous_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_error)
        try:
            return await self.app.run_async(set_exception_handler=False, handle_sigint=False)
        except EOFError:
            raise SignalExit(self._hangup or EXIT_HANGUP) from None
        except OSError:
            raise SignalExit(self._hangup or EXIT_HANGUP) from None
        except SignalExit:
            raise
        except Exception:
            if self._hangup is not None:
                raise SignalExit(self._hangup) from None
            raise
        finally:
            self.search.cancel()  # a search still running stops before its next session
            loop.set_exception_handler(previous_handler)
            _restore_signals(loop, saved)


def _take_signals(loop: asyncio.AbstractEventLoop, leave: Callable[[int], None]) -> dict:
    """Route SIGHUP/SIGTERM to `leave(exit code)` (SIGNAL_EXITS); what the loop had before, to put back."""
    saved = {}
    handlers = getattr(loop, "_signal_handlers", {})  # asyncio keeps them here; no public getter
    for signum in EXIT_SIGNALS:
        previous = handlers.get(signum)
        try:
            loop.add_signal_handler(signum, leave, SIGNAL_EXITS[signum])
        except (NotImplementedError, RuntimeError, ValueError):
            continue  # not the main thread, or no signals here
        saved[signum] = previous
    return saved


def _restore_signals(loop: asyncio.AbstractEventLoop, saved: dict) -> None:
    for signum, previous in saved.items():
        try:
            if previous is not None:
                loop.add_signal_handler(signum, previous._callback, *previous._args)
            else:
                loop.remove_signal_handler(signum)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass
