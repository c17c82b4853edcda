"""The app as a `Screen` (ui/screen.py): what the slash commands of ui/commands.py do to it.

Output goes into the scrollback above the live region, from whichever thread: work run by
`run_work` is in a worker thread, so what it shows is handed to the event loop (in order, before the
work's end is). Questions are the app's menu (ui/questions.py); the app reads no free-text answer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text

from . import render
from .keys import KEYS_HELP
from .transcript_view import history_renderables

if TYPE_CHECKING:
    from .app import AgentApp

__all__ = ["AppScreen"]


class AppScreen:
    """The `Screen` of an `AgentApp`."""

    keys_help = KEYS_HELP

    def __init__(self, app: AgentApp) -> None:
        self._app = app

    def _show(self, *items: RenderableType) -> None:
        app = self._app
        try:
            on_loop = asyncio.get_running_loop() is app.loop
        except RuntimeError:  # a worker thread
            on_loop = False
        if on_loop:
            app.emit(*items)
        else:
            app.call_in_loop(app._turn, app.emit, *items)

    def notice(self, text: str) -> None:
        self._show(render.notice(text))

    def notice_command(self, text: str, command: str) -> None:
        from evo_agent.safe_text import terminal_line

        self._show(render.notice(text), Text("  " + terminal_line(command), style="evo.dim"))

    def error(self, text: str) -> None:
        self._show(render.error_line(text))

    def failed(self, text: str) -> None:
        self._show(render.error_line(f"error: {text}"))

    def ask_yes_no(self, question: str) -> bool:
        return self._app.questions.ask_yes_no(question)

    def ask_line(self, question: str) -> str | None:
        return None  # the app asks with menus only: a command lists its choices and is typed again with one

    def show_history(self, messages: Sequence[dict[str, Any]]) -> None:
        self._show(*history_renderables(list(messages), width=self._app.width()))

    def run_work(self, label: str, work: Callable[[threading.Event], None], *, interruptible: bool,
                 failure: str = "") -> None:
        app = self._app
        app._begin(label, hint="Esc interrupts" if interruptible else "")
        cancel = app.cancel = threading.Event()
        app._turn += 1
        turn = app._turn
        app._in_worker(lambda: work(cancel), lambda result, error: app._command_done(
            turn, "", f"{failure}: {error}" if failure and error else error,
            stopped=interruptible and cancel.is_set()))  # Esc stopped it: said so, not as an error

    def edit_prompt(self, text: str) -> None:
        app = self._app

        def fill() -> None:
            if not app.buffer.text:  # what the user typed meanwhile is never replaced
                app.buffer.text = text
                app.buffer.cursor_position = len(text)
                app.app.invalidate()

        try:
            on_loop = asyncio.get_running_loop() is app.loop
        except RuntimeError:  # a worker thread (the rewind runs in one)
            on_loop = False
        if on_loop:
            fill()
        else:
            app.call_in_loop(app._turn, fill)

    def send_prompt(self, prompt: str, *, shown: str) -> None:
        self._app.start_turn(prompt, shown=shown)

    def resume(self, session: str) -> None:
        app = self._app
        if session:
            app.resume(session)
        else:  # the picker; the task is kept, as a bare task may be collected
            app._picker_task = asyncio.ensure_future(app._pick_and_resume())

    def exit(self, code: int) -> None:
        self._app.leave(code)
