"""The interactive app: prompt_toolkit for the input, Rich for the output, the terminal's scrollback for history.

    code = run_app(agent, initial_prompt=None, resumed_from=None)   # the caller prints the exit hint

Finished output (prompts, answers, tool calls, notices) is printed into the terminal's own
scrollback, as IPython, pgcli and aider do: after exit the whole conversation is still there to
scroll, search and copy with the terminal's own selection (no alternate screen, no mouse capture).
Only a small live region stays at the bottom: the unfinished tail of a streaming answer, queued
prompts, the prompt box and one activity/status line. It fits any terminal from 60×15 up.

The agent's turn runs in a worker thread (the `AgentLike`/`TurnCallbacks` interface of bridge.py);
each callback is handed to the event loop with `call_soon_threadsafe`, so all drawing happens in
one thread. Keys: Enter sends; Alt+Enter or Ctrl+J insert a newline; Esc interrupts the running
turn (like Ctrl+C); Ctrl+C twice quits (130); Ctrl+D on an empty prompt quits (0); ↑/↓ walk the
project's prompt history; Tab completes slash commands; Ctrl+O prints the last tool output in full.
A prompt sent while a turn runs is queued and shown as queued.

A question (an approval, a yes/no) is answered on purpose, never by typing meant for the prompt
(SPEC §9): a small menu moved with ↑/↓ and confirmed with Enter (Esc or Ctrl+C mean no). Text typed
meanwhile goes into the prompt box and stays there; Enter there answers nothing and inserts nothing
(Tab goes back to the question). Single-key shortcuts (y, n, a, p) work only once the menu has been
moved and the prompt box is empty. A command or diff longer than the screen shows its first lines
and how many more there are; Ctrl+O prints it whole, and "yes" waits until it has been.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.application.run_in_terminal import in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.renderer import CPR_Support
from prompt_toolkit.styles import Style
from rich.console import RenderableType
from rich.text import Text

from evo_agent.agent.callbacks import EXIT_GRACE_S, resumed_line, started_line
from evo_agent.exit_codes import EXIT_HANGUP, EXIT_INTERRUPTED
from evo_agent.safe_text import terminal_safe
from evo_agent.session import one_line
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from . import render
from .activity import Activity, cost_part, fit
from .bridge import AgentLike
from .commands import complete as complete_command
from .commands import help_text, is_command, lookup
from .picker import TeamSource
from .rewind_flow import rewind_and_restore, turn_list
from .signals import exit_on_signals
from .stream import MarkdownStream, Piece
from .transcript_view import history_renderables

__all__ = ["AgentApp", "run_app", "KEYS_HELP"]

KEYS_HELP = """\
Keys:
  Enter sends · Alt+Enter or Ctrl+J new line · ↑/↓ history · Tab completes
  Esc or Ctrl+C interrupts the running turn · Ctrl+C twice quits
  Ctrl+D on an empty prompt quits · Ctrl+O shows the last tool call and output in full
  Ctrl+T shows or hides the Session Plan
  A prompt sent while the agent works is queued and sent after the turn
  A question: ↑/↓ choose, Enter answers, Esc says no; typing goes to the prompt (Tab back to the question);
  Ctrl+O shows a long command or diff whole (yes waits until it has been shown)"""

DOUBLE_CTRL_C_SECONDS = 2.0
TICK_S = 0.12               # spinner and elapsed-time refresh while the agent works

STYLE = Style.from_dict({
    "rule": "fg:ansibrightblack",
    "prompt": "bold",
    "dim": "fg:ansibrightblack",
    "queued": "fg:ansibrightblack italic",
    "status": "fg:ansibrightblack",
    "status.busy": "",
    "approval": "bold",
    "choice": "bold reverse",
    "choice.off": "fg:ansibrightblack",
})
YES_ANSWERS = ("yes", "always-session", "always-project")


class _Callbacks:
    """TurnCallbacks for one turn: every call is handed to the app's event loop (any thread may call)."""

    def __init__(self, app: AgentApp, turn: int) -> None:
        self._app = app
        self._turn = turn

    def _send(self, fn: Callable[..., Any], *args: Any) -> None:
        self._app.call_in_loop(self._turn, fn, *args)

    def on_text(self, text: str) -> None:
        self._send(self._app._on_text, text)

    def on_thinking(self, text: str) -> None:
        self._send(self._app._on_thinking, text)

    def on_tool_use_start(self, tool_id: str, name: str) -> None:
        """The model named a tool; its input is still arriving (shown at once, in the live region)."""
        self._send(self._app._on_tool_named, tool_id, name)

    def on_tool_start(self, tool_id: str, name: str, input: dict[str, Any]) -> None:
        self._send(self._app._on_tool_start, tool_id, name, input, 0)

    def on_tool_end(self, tool_id: str, result_text: str, is_error: bool, duration: float) -> None:
        self._send(self._app._on_tool_end, tool_id, result_text, is_error, duration)

    def on_nested_tool_start(self, parent_id: str, tool_id: str, name: str, input: dict[str, Any]) -> None:
        """A subagent's tool call, shown indented under its task."""
        self._send(self._app._on_tool_start, tool_id, name, input, 1)

    def on_nested_tool_end(self, parent_id: str, tool_id: str, result_text: str, is_error: bool,
                           duration: float) -> None:
        self._send(self._app._on_tool_end, tool_id, result_text, is_error, duration)

    def on_notice(self, text: str) -> None:
        self._send(self._app._on_notice, text)

    def on_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Blocks this (worker) thread until the user answers in the app; Esc/Ctrl+C/exit mean no."""
        return self._app.ask_approval(request)


class AgentApp:
    """The conversation printed above, a small live region below (see the module docstring)."""

    def __init__(self, agent: AgentLike, *, store: Any = None, initial_prompt: str | None = None,
                 resumed_from: str | None = None, history: History | None = None,
                 input: Any = None, output: Any = None, team: TeamSource | None = None) -> None:
        self.agent = agent
        self.store = store
        self.team = team  # the team store's sessions for the picker's Tab view (None: no team store configured)
        self.initial_prompt = initial_prompt
        self.resumed_from = resumed_from
        self.activity = Activity()
        self.stream = MarkdownStream()
        self.queue: list[str] = []
        self.running = False
        self.exit_code = 0
        self.cancel = threading.Event()
        self.worker_done = threading.Event()
        self.worker_done.set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._turn = 0
        self._thinking = ""
        self._tools: dict[str, tuple[str, Any, int]] = {}
        self._named: dict[str, str] = {}      # tool_use id -> name: named by the model, input still streaming
        self._last_tool: tuple[str, Any, str] | None = None   # name, input, output: what Ctrl+O shows in full
        self._last_tool_cut = False   # whether _last_tool is a result shown cut, in this turn
        self._last_ctrl_c = 0.0
        self._flash = ""                      # a short hint in the status line ("Ctrl+C again to exit")
        self._flash_until = 0.0
        self._approval: tuple[ApprovalRequest, concurrent.futures.Future] | None = None
        self._question: concurrent.futures.Future | None = None   # a y/n question from a worker (ask_yes_no)
        self._reason_mode = False
        self._stashed_text = ""
        # The menu of the question that is up: (answer, label) rows, the chosen row (None until ↑/↓),
        # whether typing moved the focus to the prompt box, and how many detail lines are not shown yet.
        self._menu: list[tuple[str, str]] = []
        self._choice: int | None = None
        self._on_prompt = False
        self._unseen = 0
        self._full_detail: tuple[str, str] | None = None   # (tool, detail) of the question, for Ctrl+O
        self._exiting = False
        self._tick_task: asyncio.Task | None = None
        self._held: list[str] = []            # output that arrived while the picker had the terminal
        self._show_plan = False               # Ctrl+T: the plan's checklist above the prompt
        self._plan_cache: tuple[float, str] = (-1.0, "")   # (when read, the checklist)
        self.buffer = Buffer(multiline=True, history=history or InMemoryHistory(), enable_history_search=False)
        self.app: Application = Application(
            layout=Layout(self._layout(), focused_element=None),
            key_bindings=self._key_bindings(), style=STYLE, full_screen=False, mouse_support=False,
            erase_when_done=True, input=input, output=output, include_default_pygments_style=False,
            # SIGWINCH redraws the app after a resize. The size poll would redraw it as well, even
            # while `/resume`'s picker has the terminal (run_in_terminal), drawing over the picker.
            terminal_size_polling_interval=None,
        )
        self.app.layout.focus(self._input_window)
        # No cursor-position requests: the live region is exactly as tall as its content. (A late answer
        # to one, after keys typed during start-up, stretched it to the bottom of the screen.)
        self.app.renderer.cpr_support = CPR_Support.NOT_SUPPORTED
        self.app.timeoutlen = 0.3   # Esc alone fires after this; Alt+Enter arrives as one read and is not delayed
        self.app.ttimeoutlen = 0.05

    # ------------------------------------------------------------------ layout
    def _layout(self) -> HSplit:
        has_tail = Condition(lambda: bool(self.stream.tail.strip()))
        has_queue = Condition(lambda: bool(self.queue))
        has_named = Condition(lambda: bool(self._named))
        has_completions = Condition(lambda: bool(self._completion_text()))
        has_menu = Condition(lambda: bool(self._menu) and self._asking() and not self._reason_mode)
        showing_plan = Condition(lambda: self._show_plan)
        self._input_window = Window(BufferControl(self.buffer), wrap_lines=True, dont_extend_height=True,
                                    height=lambda: Dimension(min=1, max=self._max_input_rows()))
        return HSplit([
            ConditionalContainer(Window(FormattedTextControl(self._tail_text), wrap_lines=True, dont_extend_height=True,
                                        height=lambda: Dimension(max=self._max_tail_rows())), has_tail),
            ConditionalContainer(Window(FormattedTextControl(self._named_text), wrap_lines=False,
                                        dont_extend_height=True, height=lambda: Dimension(max=3)), has_named),
            ConditionalContainer(Window(FormattedTextControl(self._queue_text), wrap_lines=False,
                                        dont_extend_height=True, height=lambda: Dimension(max=3)), has_queue),
            ConditionalContainer(Window(FormattedTextControl(self._menu_text), wrap_lines=False,
                                        dont_extend_height=True), has_menu),
            ConditionalContainer(Window(FormattedTextControl(self._plan_text), wrap_lines=False,
                                        dont_extend_height=True, height=lambda: Dimension(max=14)), showing_plan),
            Window(height=1, char="─", style="class:rule"),
            VSplit([Window(FormattedTextControl(self._prompt_label), dont_extend_width=True), self._input_window]),
            Window(height=1, char="─", style="class:rule"),
            ConditionalContainer(Window(FormattedTextControl(self._completions_line), height=1), has_completions),
            Window(FormattedTextControl(self._status_text), height=1),
        ])

    def _rows(self) -> int:
        try:
            return self.app.output.get_size().rows
        except Exception:  # noqa: BLE001
            return shutil.get_terminal_size().lines

    def width(self) -> int:
        try:
            return max(self.app.output.get_size().columns, 20)
        except Exception:  # noqa: BLE001
            return shutil.get_terminal_size().columns

    def _max_input_rows(self) -> int:
        return max(1, min(10, self._rows() - 8))

    def _max_tail_rows(self) -> int:
        return max(1, self._rows() - 7 - min(self.buffer.document.line_count, self._max_input_rows()))

    def _tail_text(self) -> FormattedText:
        """The end of the unfinished block, wrapped to the width: a long line shows its newest words."""
        rows = wrapped_tail(terminal_safe(self.stream.tail.rstrip("\n")), self.width(), self._max_tail_rows())
        return FormattedText([("", "\n".join(rows))])

    def _named_text(self) -> FormattedText:
        """Tools the model named whose input is still streaming: `● write_file …` until the call is printed."""
        lines = [f"● {one_line(terminal_safe(name), self.width() - 12)} …" for name in
                 list(self._named.values())[-3:]]
        return FormattedText([("class:dim", "\n".join(lines))])

    def _queue_text(self) -> FormattedText:
        parts: list[tuple[str, str]] = []
        for i, text in enumerate(self.queue[-3:]):
            line = one_line(terminal_safe(text), self.width() - 14)
            parts.append(("class:queued", f"{'' if i == 0 else chr(10)}› {line}  (queued)"))
        return FormattedText(parts)

    def _plan_text(self) -> FormattedText:
        """Ctrl+T: the active plan as a checklist (read at most once a second, like the status line)."""
        now = time.monotonic()
        cached_at, text = self._plan_cache
        if now - cached_at >= 1.0:
            view = getattr(self.agent, "plan_text", None)
            try:
                text = view(compact=True) if view is not None else "No Session Plan."
            except Exception:  # noqa: BLE001 - a panel never takes the app down
                text = "The plan cannot be read."
            self._plan_cache = (now, text)
        width = self.width() - 1
        return FormattedText([("class:dim", "\n".join(one_line(terminal_safe(line), width)
                                                      for line in text.splitlines()))])

    def _prompt_label(self) -> FormattedText:
        if self._reason_mode:
            return FormattedText([("class:approval", "reason for no (optional) › ")])
        if self._asking() and not self._on_prompt:
            return FormattedText([("class:dim", "› ")])  # the keys go to the question above
        return FormattedText([("class:prompt", "› ")])

    def _asking(self) -> bool:
        return self._approval is not None or self._question is not None

    def _menu_text(self) -> FormattedText:
        """The answers, one per row; the chosen one reversed. Yes rows are dim while lines are unseen."""
        width = self.width() - 4
        parts: list[tuple[str, str]] = []
        for i, (answer, label) in enumerate(self._menu):
            if i:
                parts.append(("", "\n"))
            text = one_line(label, width)
            if answer in YES_ANSWERS and self._unseen:
                parts.append(("class:choice.off", f"{'❯' if i == self._choice else ' '} {text} (after Ctrl+O)"))
            elif i == self._choice:
                parts.append(("class:choice", f"❯ {text}"))
            else:
                parts.append(("", f"  {text}"))
        return FormattedText(parts)

    def _completion_text(self) -> str:
        text = self.buffer.text
        matches = complete_command(text) if text.startswith("/") and "\n" not in text else []
        if not matches or (len(matches) == 1 and matches[0].name == text.strip()):
            return ""
        if len(matches) == 1:
            return f"{matches[0].name} {matches[0].args}  {matches[0].help}"
        return "  ".join(m.name for m in matches)

    def _completions_line(self) -> FormattedText:
        return FormattedText([("class:dim", one_line(self._completion_text(), self.width() - 1))])

    def _status_text(self) -> FormattedText:
        width = self.width() - 1
        flashing = self._flash and time.monotonic() < self._flash_until
        if self._asking():
            if self._reason_mode:
                keys = "Enter sends the reason · Esc says no without one"
            elif flashing:
                keys = self._flash
            elif self._on_prompt:
                keys = "Your text stays in the prompt · Tab goes back to the question · Esc says no"
            else:
                keys = ("↑/↓ choose · Enter answers · Esc says no" +
                        (f" · Ctrl+O shows all ({self._unseen} lines not shown)" if self._unseen else ""))
            return FormattedText([("class:approval", fit([keys], width))])
        if flashing:
            return FormattedText([("class:status.busy", fit([self._flash], width))])
        if self.activity.running:
            return FormattedText([("class:status.busy", self.activity.line(width))])
        return FormattedText([("class:status", fit(self._idle_parts(), width))])

    def _idle_parts(self) -> list[str]:
        a = self.agent
        try:
            threshold = int(getattr(a, "compact_threshold", 0) or 0)
            chars = int(getattr(a, "context_chars", 0) or 0)
            parts = [str(getattr(a, "model", "?")), f"{int(getattr(a, 'total_tokens', 0) or 0):,} tokens",
                     f"context {100 * chars // threshold}%" if threshold else "", cost_part(a),
                     f"mode {mode}" if (mode := getattr(a, "permission_mode", None)) else "",
                     # commands run unasked without bubblewrap: the allowlist alone decides (tools/sandbox.py)
                     "unsandboxed" if getattr(a, "read_only_backstop", None) is False else "",
                     "sandbox" if getattr(a, "sandbox", None) is not None else "",  # --sandbox: bash in bubblewrap
                     _plan_part(a),
                     f"session {getattr(a, 'session_id', '?')}", "/help"]
        except Exception:  # noqa: BLE001 - a status line never takes the app down
            parts = ["status unavailable"]
        return [p for p in parts if p]

    # ------------------------------------------------------------------ printing above the live region
    def render_ansi(self, *renderables: RenderableType) -> str:
        console = render.make_console(io.StringIO(), width=self.width(), force_terminal=True)
        for item in renderables:
            # Lines of text are wrapped by the terminal (a copied id or path stays one line); Markdown by Rich.
            console.print(item, soft_wrap=isinstance(item, Text))
        return console.file.getvalue()  # type: ignore[attr-defined]

    def emit(self, *renderables: RenderableType) -> None:
        """Print into the scrollback, above the live region (call in the loop's thread)."""
        self.write(self.render_ansi(*renderables))

    def write(self, text: str) -> None:
        if not text and not self._held:
            return
        app = self.app
        if not app.is_running or self._exiting:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            return
        if getattr(app, "_running_in_terminal", False):  # the picker has the terminal: print after it
            self._held.append(text)
            return
        if self._held:
            text, self._held = "".join(self._held) + text, []
        try:
            app.renderer.erase()
            app.output.write_raw(text)
            app.output.flush()
            app._redraw()  # draw the live region again at once, below what was printed
        except (OSError, ValueError):
            self.leave(EXIT_HANGUP)  # the terminal went away

    def refit(self) -> None:
        """Shrink the live region (prompt_toolkit never shrinks it by itself) after something left it."""
        if self.app.is_running and not self._exiting:
            try:
                self.app.renderer.erase()
                self.app._redraw()
            except (OSError, ValueError):
                self.leave(EXIT_HANGUP)

    # ------------------------------------------------------------------ keys
    def _key_bindings(self) -> KeyBindings:
        kb = KeyBindings()
        asking = Condition(lambda: self._asking() and not self._reason_mode)
        on_question = asking & Condition(lambda: not self._on_prompt)

        @kb.add("enter", filter=~asking)
        def _(event) -> None:  # noqa: ANN001
            if self._reason_mode:
                self._answer_approval("no", self.buffer.text.strip())
                return
            self.submit(self.buffer.text)

        @kb.add("enter", filter=asking)
        def _(event) -> None:  # noqa: ANN001
            if self._on_prompt:  # typed for the prompt: it answers nothing, and no newline goes in
                self._hint("Answer the question first: Tab goes to it (your text stays in the prompt)")
                return
            self._confirm()

        @kb.add("escape", "enter")
        @kb.add("c-j")
        def _(event) -> None:  # noqa: ANN001
            self.buffer.insert_text("\n")

        @kb.add("escape")
        def _(event) -> None:  # noqa: ANN001
            if self._question is not None:
                self._answer_question(False)
            elif self._approval is not None:
                self._answer_approval("no", "")
            elif self.running:
                self.interrupt()

        @kb.add("c-c")
        def _(event) -> None:  # noqa: ANN001
            self.ctrl_c()

        @kb.add("c-d")
        def _(event) -> None:  # noqa: ANN001
            if self._asking():
                return
            if not self.buffer.text:
                self.leave(0)
            else:
                self.buffer.delete()

        @kb.add("tab", filter=~asking)
        def _(event) -> None:  # noqa: ANN001
            matches = complete_command(self.buffer.text)
            if len(matches) == 1:
                self.buffer.text = matches[0].name + " "
                self.buffer.cursor_position = len(self.buffer.text)
            elif matches:
                names = [m.name for m in matches]
                common = os.path.commonprefix(names)  # noqa: RUF071 — names, not paths: characters are meant
                if len(common) > len(self.buffer.text):
                    self.buffer.text = common
                    self.buffer.cursor_position = len(common)

        @kb.add("tab", filter=asking)
        @kb.add("s-tab", filter=asking)
        def _(event) -> None:  # noqa: ANN001
            self._on_prompt = not self._on_prompt
            self._flash_until = 0.0
            self.app.invalidate()
        @kb.add("c-t")
        def _(event) -> None:  # noqa: ANN001
            self._show_plan = not self._show_plan
            self._plan_cache = (-1.0, "")
            self.refit()

        @kb.add("c-o")
        def _(event) -> None:  # noqa: ANN001
            if self._asking() and self._full_detail is not None:
                self._show_whole_detail()
            elif self._last_tool is not None:
                name, tool_input, output = self._last_tool
                self.emit(render.tool_call_full(name, tool_input), render.tool_output_full(output))

        @kb.add("up", filter=on_question)
        def _(event) -> None:  # noqa: ANN001
            self._move(-1)

        @kb.add("down", filter=on_question)
        def _(event) -> None:  # noqa: ANN001
            self._move(1)

        @kb.add("<any>", filter=on_question)
        def _(event) -> None:  # noqa: ANN001
            self._key_on_question(event.data or "", event.key_sequence[0].key == Keys.BracketedPaste)

        @kb.add(Keys.BracketedPaste, filter=on_question)
        def _(event) -> None:  # noqa: ANN001
            self._key_on_question(event.data or "", True)

        return kb

    # ------------------------------------------------------------------ the question's menu
    def _open_menu(self, rows: list[tuple[str, str]], unseen: int = 0, detail: tuple[str, str] | None = None) -> None:
        """A question is up: its answers, nothing chosen yet, the keyboard on the question."""
        self._menu, self._choice, self._unseen, self._full_detail = rows, None, unseen, detail
        self._on_prompt = bool(self.buffer.text)  # someone mid-sentence keeps typing into the prompt
        self._flash_until = 0.0

    def _close_menu(self) -> None:
        self._menu, self._choice, self._on_prompt, self._unseen, self._full_detail = [], None, False, 0, None
        self._flash_until = 0.0

    def _move(self, step: int) -> None:
        if not self._menu:
            return
        if self._choice is None:
            self._choice = 0 if step > 0 else len(self._menu) - 1
        else:
            self._choice = (self._choice + step) % len(self._menu)
        self._flash_until = 0.0
        self.app.invalidate()

    def _key_on_question(self, data: str, pasted: bool) -> None:
        """A key while the keyboard is on the question: a shortcut once the menu was moved and the prompt is
        empty; text goes into the prompt box (and the keyboard with it); anything else does nothing."""
        if not pasted and len(data) == 1 and self._choice is not None and not self.buffer.text:
            row = self._shortcut(data.lower())
            if row is not None:
                self._choice = row
                self._confirm()
                return
        text = data.replace("\r\n", "\n").replace("\r", "\n") if pasted else data
        if text and (pasted or not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)):
            self.buffer.insert_text(text)
            self._on_prompt = True
            self.app.invalidate()

    def _shortcut(self, key: str) -> int | None:
        wanted = {"y": "yes", "n": "no", "a": "always-session", "p": "always-project"}.get(key)
        return next((i for i, (answer, _) in enumerate(self._menu) if answer == wanted), None)

    def _confirm(self) -> None:
        """Enter on the menu: the chosen answer, if one is chosen and may be given now."""
        if self._choice is None:
            self._hint("Choose an answer with ↑/↓, then Enter (Esc says no)")
            return
        answer = self._menu[self._choice][0]
        if answer in YES_ANSWERS and self._unseen:
            self._hint(f"{self._unseen} lines are not shown yet: Ctrl+O shows them, then yes can be chosen")
            return
        if self._question is not None:
            self._answer_question(answer == "yes")
        elif answer == "no-reason":
            self._reason_mode = True
            self._stashed_text = self.buffer.text
            self.buffer.reset()
            self.app.invalidate()
        else:
            self._answer_approval(answer, "")

    def _hint(self, text: str) -> None:
        self._flash, self._flash_until = text, time.monotonic() + 4.0
        self._schedule_redraw(4.05)
        self.app.invalidate()

    def _show_whole_detail(self) -> None:
        """Ctrl+O during a question: the whole command or diff, into the scrollback; then yes may be chosen."""
        assert self._full_detail is not None
        tool, detail = self._full_detail
        body, _ = render.approval_detail(tool, detail)
        lines = detail.rstrip("\n").count("\n") + 1
        self.emit(render.safe(f"  whole {'command' if tool == 'bash' else 'text'} ({lines} lines):", "evo.dim"), body)
        self._unseen = 0
        self.app.invalidate()

    def ctrl_c(self) -> None:
        now = time.monotonic()
        if self._question is not None:
            self._answer_question(False)
            return
        if self._approval is not None:
            self._answer_approval("no", "")
            return
        if now - self._last_ctrl_c < DOUBLE_CTRL_C_SECONDS:
            self.leave(EXIT_INTERRUPTED)
            return
        self._last_ctrl_c = now
        if self.running:
            self.interrupt()
        elif self.buffer.text:
            self.buffer.reset()
        self._flash, self._flash_until = "Press Ctrl+C again to exit", now + DOUBLE_CTRL_C_SECONDS
        self._schedule_redraw(DOUBLE_CTRL_C_SECONDS + 0.05)

    def _schedule_redraw(self, delay: float) -> None:
        if self.loop is not None:
            self.loop.call_later(delay, self.app.invalidate)

    # ------------------------------------------------------------------ prompts
    def submit(self, text: str) -> None:
        stripped = text.strip()
        if not stripped:
            return
        self.buffer.reset(append_to_history=True)
        if is_command(text):
            name = stripped.split(None, 1)[0]
            if self.running and lookup(name) not in ("/exit", "/help", "/cost", "/permissions", "/memory"):
                self.queue.append(stripped)
                self.app.invalidate()
                return
            self.handle_command(stripped)
            return
        if self.running:
            self.queue.append(text)
            self.app.invalidate()
            return
        self.start_turn(text)

    def _next_from_queue(self) -> None:
        if self.running or not self.queue or self._exiting:
            return
        text = self.queue.pop(0)
        self.refit()
        if is_command(text):
            self.handle_command(text)
        else:
            self.start_turn(text)

    # ------------------------------------------------------------------ turns
    def start_turn(self, prompt: str, *, shown: str | None = None) -> None:
        """Run `prompt` as a user turn; `shown`: what the scrollback shows for it (`/init`'s long prompt: /init)."""
        self._last_tool_cut = False
        self.emit(Text(""), render.user_prompt(prompt if shown is None else shown))
        self._turn += 1
        self.cancel = threading.Event()
        self.stream = MarkdownStream()
        self._thinking = ""
        self._tools.clear()
        self._named.clear()
        self._begin("working")
        turn, cancel = self._turn, self.cancel
        callbacks = _Callbacks(self, turn)
        self._in_worker(lambda: self.agent.run_turn(prompt, callbacks, cancel),
                        lambda result, error: self._turn_done(turn, result, error))

    def _begin(self, label: str, hint: str = "Esc interrupts") -> None:
        self.running = True
        self.worker_done.clear()
        self.activity.start(label, hint)
        if self._tick_task is None or self._tick_task.done():
            self._tick_task = asyncio.ensure_future(self._tick())
        self.app.invalidate()

    def _mcp_command(self, arg: str) -> None:
        """`/mcp`: the servers' state; `/mcp reconnect NAME` in a thread (it waits for the server), then its line."""
        verb, _, name = arg.partition(" ")
        if verb == "reconnect" and name.strip():
            reconnect = getattr(self.agent, "mcp_reconnect", None)
            if reconnect is None:
                return
            self.emit(render.notice(f"reconnecting {name.strip()}…"))
            loop = self.loop

            def run() -> None:
                try:
                    line = reconnect(name.strip())
                except Exception as exc:  # noqa: BLE001 - one line, never a traceback
                    line = f"error: {exc}"
                if loop is not None:
                    try:
                        loop.call_soon_threadsafe(lambda: self.emit(render.notice(line)))
                    except RuntimeError:
                        pass  # the app has gone

            threading.Thread(target=run, name="evo-agent-mcp-reconnect", daemon=True).start()
            return
        if arg:
            self.emit(render.error_line("usage: /mcp [reconnect NAME]"))
            return
        view = getattr(self.agent, "mcp_text", None)
        self.emit(render.notice(view() if view else "No MCP servers."))

    def _in_worker(self, work: Callable[[], Any], done: Callable[[Any, str | None], None]) -> None:
        """Run `work` in a thread; `done(result, error line)` then runs in the loop."""
        loop = self.loop

        def run() -> None:
            result, error = None, None
            try:
                result = work()
            except Exception as exc:  # noqa: BLE001 - one line, never a traceback
                error = " ".join(str(exc).split()) or type(exc).__name__
            finally:
                self.worker_done.set()
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(done, result, error)
                except RuntimeError:
                    pass  # the loop is closed: the app has gone

        threading.Thread(target=run, name="evo-agent-turn", daemon=True).start()

    async def _tick(self) -> None:
        while self.running and not self._exiting:
            self.app.invalidate()
            await asyncio.sleep(TICK_S)

    def call_in_loop(self, turn: int, fn: Callable[..., Any], *args: Any) -> None:
        loop = self.loop
        if loop is None:
            return

        def deliver() -> None:
            if turn == self._turn and not self._exiting:
                fn(*args)
        try:
            loop.call_soon_threadsafe(deliver)
        except RuntimeError:
            pass

    def _end(self) -> None:
        self.running = False
        self.activity.stop()
        self.refit()
        self.app.invalidate()

    def _turn_done(self, turn: int, result: Any, error: str | None) -> None:
        if turn != self._turn:
            return
        self._named.clear()  # named but never run (cancelled, or the input was cut): the live line goes
        self._flush_text()
        for tool_id in list(self._tools):
            name, tool_input, depth = self._tools.pop(tool_id)
            self.emit(render.tool_result(name, tool_input, "interrupted", is_error=True, depth=depth,
                                         width=self.width()))
        cancelled = bool(getattr(result, "cancelled", False)) or self.cancel.is_set()
        if error and not cancelled:
            self.emit(render.error_line(f"error: {error}"))
        elif cancelled:
            self.emit(render.interrupted_notice())
        self._end()
        if cancelled and self.queue:
            # Interrupted: the queued prompts come back into the box instead of being sent.
            self.buffer.text = "\n".join(self.queue) + ("\n" + self.buffer.text if self.buffer.text else "")
            self.buffer.cursor_position = len(self.buffer.text)
            self.queue.clear()
            self.refit()
        self._next_from_queue()

    def interrupt(self) -> None:
        """Esc or Ctrl+C during a turn: ask the agent to stop; it records what was interrupted and returns."""
        if self.running and not self.cancel.is_set():
            self.cancel.set()
            self.activity.label = "interrupting"
            self.activity.hint = ""
            self.app.invalidate()

    # streamed output (loop thread)
    def _flush_thinking(self) -> None:
        if self._thinking:
            self.emit(render.thinking_line(self._thinking))
            self._thinking = ""
            self.activity.label = "working"

    def _flush_text(self) -> None:
        self._flush_thinking()
        pieces = self.stream.finish()
        if pieces:
            self.emit(*_answer_parts(pieces))
        self.refit()

    def _on_text(self, text: str) -> None:
        self._flush_thinking()
        self.activity.text(text)
        pieces = self.stream.feed(text)
        if pieces:
            self.emit(*_answer_parts(pieces))
        self.app.invalidate()

    def _on_thinking(self, text: str) -> None:
        self._thinking += text
        self.activity.label = "thinking"
        self.activity.streamed_chars += len(text)

    def _on_tool_named(self, tool_id: str, name: str) -> None:
        self._flush_text()  # the text before the call is complete: printed above it
        self._named[tool_id] = name
        self.activity.tool_started(f"{name}(…)")
        self.app.invalidate()

    def _on_tool_start(self, tool_id: str, name: str, tool_input: dict, depth: int) -> None:
        self._named.pop(tool_id, None)
        self._flush_text()
        self._tools[tool_id] = (name, tool_input, depth)
        self.emit(render.tool_call(name, tool_input, depth=depth, width=self.width()))
        self.activity.tool_started(render.tool_label(name, tool_input))

    def _on_tool_end(self, tool_id: str, result_text: str, is_error: bool, duration: float) -> None:
        name, tool_input, depth = self._tools.pop(tool_id, ("tool", {}, 0))
        # Ctrl+O expands the call whose result says "(Ctrl+O shows all)" (a subagent's, say, even after its
        # task ended); with no such result in this turn, the last call.
        if render.hides_lines(name, tool_input, result_text, is_error=is_error):
            self._last_tool, self._last_tool_cut = (name, tool_input, result_text), True
        elif not self._last_tool_cut:
            self._last_tool = (name, tool_input, result_text)
        self.emit(render.tool_result(name, tool_input, result_text, is_error=is_error, duration=duration, depth=depth,
                                     width=self.width()))
        self.activity.tool_finished()
        if self._tools:
            last = next(reversed(self._tools.values()))
            self.activity.tool_started(render.tool_label(last[0], last[1]))

    def _on_notice(self, text: str) -> None:
        if self.activity.notice(text):
            self.app.invalidate()
            return
        self._flush_text()
        self.emit(render.notice(text))

    # ------------------------------------------------------------------ approvals (issue #15)
    def ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Called from the worker thread; blocks it until the user answers (exit and Ctrl+C mean no)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        loop = self.loop
        if loop is None or self._exiting:
            return ApprovalDecision("no")
        try:
            loop.call_soon_threadsafe(self._show_approval, request, future)
        except RuntimeError:
            return ApprovalDecision("no")
        while True:
            try:
                return future.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if self._exiting or self.cancel.is_set():
                    return ApprovalDecision("no")
            except Exception:  # noqa: BLE001
                return ApprovalDecision("no")

    def _show_approval(self, request: ApprovalRequest, future: concurrent.futures.Future) -> None:
        if self._exiting:
            future.set_result(ApprovalDecision("no"))
            return
        self._flush_text()
        who = f"{request.agent}: " if request.agent else ""
        head = Text()
        head.append("? ", style="evo.warn")
        head.append_text(render.safe(f"{who}{request.summary}", "bold"))
        if request.reason:
            head.append_text(render.safe(f"  ({request.reason})", "evo.dim"))
        items: list[RenderableType] = [head]
        unseen = 0
        if request.detail:
            body, unseen = render.approval_detail(request.tool, request.detail, self._preview_lines())
            items.append(body)
        self.emit(*items)
        rows = [("yes", "Yes")]
        if request.rule:
            rule = request.rule if len(request.rule) <= 60 and "\n" not in request.rule else (
                "this exact command" if request.tool == "bash" else "exactly this")
            rows += [("always-session", f"Yes, and allow {rule} for this session"),
                     ("always-project", f"Yes, and always allow {rule} in this project")]
        rows += [("no", "No"), ("no-reason", "No, and tell the model why")]
        self._open_menu([(answer, terminal_safe(label, keep_newlines=False)) for answer, label in rows], unseen,
                        (request.tool, request.detail) if request.detail else None)
        self._approval = (request, future)
        self.app.invalidate()

    def _preview_lines(self) -> int:
        """Lines of a command or diff shown with its question: what fits above the menu and the prompt."""
        return max(4, self._rows() - 14)

    def _answer_approval(self, answer: str, message: str) -> None:
        if self._approval is None:
            return
        request, future = self._approval
        self._approval = None
        self._close_menu()
        if self._reason_mode:
            self._reason_mode = False
            self.buffer.text = self._stashed_text
            self.buffer.cursor_position = len(self.buffer.text)
        words = {"yes": "allowed", "no": "refused", "always-session": "allowed for this session",
                 "always-project": "allowed in this project" + (f" ({request.rule})" if request.rule else "")}
        line = f"  └  {words.get(answer, answer)}" + (f": {message}" if message else "")
        self.emit(render.safe(line, "evo.dim" if answer != "no" else "evo.warn"))
        if not future.done():
            future.set_result(ApprovalDecision(answer, message))  # type: ignore[arg-type]
        self.refit()

    # ------------------------------------------------------------------ yes/no questions
    def ask_yes_no(self, question: str) -> bool:
        """Called from a worker thread: print `question`, block until y or n (Esc, Ctrl+C and exit mean no)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        loop = self.loop
        if loop is None or self._exiting:
            return False
        try:
            loop.call_soon_threadsafe(self._show_question, question, future)
        except RuntimeError:
            return False
        while True:
            try:
                return bool(future.result(timeout=0.2))
            except concurrent.futures.TimeoutError:
                if self._exiting:
                    return False
            except Exception:  # noqa: BLE001
                return False

    def _show_question(self, question: str, future: concurrent.futures.Future) -> None:
        if self._exiting:
            future.set_result(False)
            return
        head = Text()
        head.append("? ", style="evo.warn")
        head.append_text(render.safe(question, "bold"))
        self._open_menu([("yes", "Yes"), ("no", "No")])
        self._question = future  # first: the status line drawn with the question names its keys
        self.emit(head)
        self.app.invalidate()

    def _answer_question(self, yes: bool) -> None:
        future, self._question = self._question, None
        if future is None:
            return
        self._close_menu()
        self.emit(render.safe("  └  yes" if yes else "  └  no", "evo.dim"))
        if not future.done():
            future.set_result(yes)
        self.refit()

    # ------------------------------------------------------------------ slash commands
    def handle_command(self, line: str) -> None:
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        command = lookup(name)
        if command == "/exit":
            self.leave(0)
        elif command == "/help":
            self.emit(render.notice(help_text(KEYS_HELP)))
        elif command == "/cost":
            try:
                self.emit(render.notice(self.agent.cost_text()))
            except Exception as exc:  # noqa: BLE001
                self.emit(render.error_line(f"error: {exc}"))
        elif command == "/init":
            from evo_agent.agent.instructions import init_prompt

            self.start_turn(init_prompt(self.agent.project_dir), shown="/init")
        elif command == "/plan":
            view = getattr(self.agent, "plan_text", None)
            self.emit(render.notice(view() if view else "No Session Plan."))
        elif command == "/memory":
            view = getattr(self.agent, "memory_text", None)
            self.emit(render.notice(view(arg) if view else "No Auto Memory."))
        elif command == "/remember":
            from evo_agent.agent.memory_context import remember_line

            line, ok = remember_line(self.agent, arg)
            self.emit(render.notice(line) if ok else render.error_line(line))
        elif command == "/mcp":
            self._mcp_command(arg)
        elif command == "/permissions":
            describe = getattr(self.agent, "permissions_text", None)
            self.emit(render.notice(describe() if describe else "permissions: every tool runs (no policy)"))
        elif command == "/clear":
            try:
                self.agent.clear()
            except Exception as exc:  # noqa: BLE001
                self.emit(render.error_line(f"error: {exc}"))
                return
            self.emit(render.notice(started_line(self.agent)))
        elif command == "/compact":
            self._begin("compacting")
            cancel = self.cancel = threading.Event()
            self._turn += 1
            turn = self._turn
            self._in_worker(lambda: self.agent.compact(arg or None, cancel),
                            lambda result, error: self._command_done(turn, _describe(result), error))
        elif command == "/rename":
            self._rename(arg)
        elif command == "/rewind":
            self._rewind(arg)
        elif command == "/resume":
            if arg:
                self.resume(arg)
            else:
                self._picker_task = asyncio.ensure_future(self._pick_and_resume())  # kept: a bare task may be collected
        else:
            self.emit(render.error_line(f"unknown command {terminal_safe(name, keep_newlines=False)} (try /help)"))

    def _rename(self, arg: str) -> None:
        if not arg:
            current = getattr(self.agent, "name", None)
            self.emit(render.notice(f"This session is named {current!r}." if current
                                    else "This session has no name. Usage: /rename NAME"))
            return
        try:
            name = self.agent.rename(arg)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - ValueError for an empty name; one line either way
            self.emit(render.error_line(f"error: {exc}"))
            return
        self.emit(render.notice(f"Session {self.agent.session_id} is now named {name!r} "
                                f"(evo-agent --resume {name!r} finds it)"))

    def _rewind(self, arg: str) -> None:
        """`/rewind`: the prompts of this session, numbered; `/rewind N`: a new session from before prompt N."""
        from evo_agent.session import prompt_turns

        path = getattr(getattr(self.agent, "recorder", None), "path", None)
        turns = prompt_turns(path) if path is not None else []
        if not turns:
            self.emit(render.notice("Nothing to rewind: no prompt in this session yet."))
            return
        if not arg:
            self.emit(render.notice(turn_list(turns)))
            return
        if not arg.isdigit() or not 1 <= int(arg) <= len(turns):
            self.emit(render.error_line(f"no turn {arg}: choose 1 to {len(turns)}"))
            return
        number, source = int(arg), self.agent.session_id
        self._begin("rewinding", hint="")
        self._turn += 1
        turn = self._turn
        self._in_worker(lambda: rewind_and_restore(self, turn, number, source),
                        lambda result, error: self._command_done(turn, "", error))

    def _command_done(self, turn: int, message: str, error: str | None) -> None:
        if turn == self._turn:
            if error or message:
                self.emit(render.error_line(f"error: {error}") if error else render.notice(message))
            self._end()
            self._next_from_queue()

    def resume(self, session_id: str) -> None:
        self._begin("resuming", hint="")
        self._turn += 1
        turn = self._turn
        self._in_worker(lambda: self._resume_asking(session_id),
                        lambda result, error: self._resumed(turn, session_id, error))

    def _resume_asking(self, session_id: str) -> Any:
        """In the worker: resume; a session recorded elsewhere is resumed only when the user says yes."""
        from evo_agent.session import ForeignSession

        try:
            return self.agent.resume(session_id)
        except ForeignSession as exc:
            decision = self.ask_approval(ApprovalRequest(
                tool="resume", summary=f"resume {exc.session_id}, recorded elsewhere: {exc.reason}",
                detail="Its history goes to the model as if you had written it. "
                       "To keep a copy of your own instead: evo-agent sessions adopt " + exc.session_id,
                reason="recorded elsewhere"))
            if decision.answer == "no":
                raise
            return self.agent.resume(session_id, allow_foreign=True)

    def _resumed(self, turn: int, source: str, error: str | None) -> None:
        if turn != self._turn:
            return
        if error:
            self.emit(render.error_line(f"error: {error}"))
        else:
            self.show_history(source)
        self._end()
        self._next_from_queue()

    def show_history(self, source: str) -> None:
        messages = list(getattr(self.agent, "messages", []) or [])
        self.emit(*history_renderables(messages, width=self.width()))
        self.emit(render.notice(resumed_line(source, len(messages), self.agent.session_id)))

    async def _pick_and_resume(self) -> None:
        try:
            from .picker import pick_session  # the picker's API for a running loop (ui/picker.py)
        except ImportError:
            self.emit(render.notice("the session list is not available here: use /resume ID "
                                    "(evo-agent sessions list shows the ids)"))
            return
        try:
            async with in_terminal():
                chosen = await pick_session(self.agent.project_dir, exclude=[self.agent.session_id], team=self.team)
        except Exception as exc:  # noqa: BLE001
            self.emit(render.error_line(f"error: {exc}"))
            return
        if self._held:
            self.write("")
        if chosen:
            self.resume(chosen)

    # ------------------------------------------------------------------ running
    def leave(self, code: int) -> None:
        """Every way out: stop the turn, answer a pending approval with no, end the app with `code`."""
        if self._exiting:
            return
        self.exit_code = code
        self.cancel.set()
        if self._approval is not None and not self._approval[1].done():
            self._approval[1].set_result(ApprovalDecision("no"))
        if self._question is not None and not self._question.done():
            self._question.set_result(False)
        try:
            self.app.exit(result=code)
        except Exception:  # noqa: BLE001 - not running yet, or already leaving
            pass
        self._exiting = True

    def _started(self) -> None:
        self.loop = asyncio.get_running_loop()
        exit_on_signals(self.leave)  # SIGTERM 143, SIGHUP 129 (the terminal closed)
        if self.initial_prompt and self.initial_prompt.strip():
            self.loop.call_soon(self.submit, self.initial_prompt)

    async def run_async(self) -> int:
        try:
            result = await self.app.run_async(pre_run=self._started)
        except EOFError:  # stdin closed: the terminal went away
            result = EXIT_HANGUP
        except (OSError, ValueError):
            result = EXIT_HANGUP
        if not self._exiting:  # the app ended without leave() (its terminal went away): stop the turn too
            self.leave(EXIT_HANGUP if result is None else int(result))
        # An interrupted turn records what it was doing before the exit hint. Waiting here, with the
        # loop still running, keeps its SIGHUP/SIGTERM handlers in place: closing a terminal can send
        # SIGHUP twice, and once the loop is closed a second one would end the process mid-record.
        await asyncio.to_thread(self.worker_done.wait, EXIT_GRACE_S)
        return self.exit_code if result is None else int(result)

    def print_welcome(self) -> None:
        a = self.agent
        provider = getattr(getattr(a, "provider", None), "name", None) or getattr(a, "provider_name", "?")
        self.emit(render.welcome_line(str(getattr(a, "model", "?")), str(provider), str(a.project_dir),
                                      self.width()))
        instructions = getattr(a, "instructions", None)
        context = ""
        if instructions is not None:
            from evo_agent.agent.instructions import welcome_text

            context = welcome_text(instructions)
        if context:  # which instruction files the model was given, where the tools run
            self.emit(render.notice(context))
        if self.resumed_from is not None:
            self.show_history(self.resumed_from)

    def run(self) -> int:
        """Run until the user leaves; returns the exit code once the live region is gone."""
        self.print_welcome()
        return asyncio.run(self.run_async())


def _answer_parts(pieces: list[Piece]) -> list[RenderableType]:
    """Finished pieces of an answer as renderables, with the blank lines Rich puts between blocks."""
    parts: list[RenderableType] = []
    for piece in pieces:
        if piece.gap_before:
            parts.append(Text(""))
        parts.append(render.answer(piece.text))
    return parts


def wrapped_tail(text: str, width: int, rows: int) -> list[str]:
    """The last `rows` screen lines of `text` wrapped at `width` columns (wide characters count two)."""
    from rich.cells import cell_len

    out: list[str] = []
    for line in text.split("\n")[-rows:]:
        current, used = "", 0
        for ch in line:
            size = cell_len(ch)
            if used + size > width and current:
                out.append(current)
                current, used = "", 0
            current += ch
            used += size
        out.append(current)
    return out[-rows:]


def _describe(result: Any) -> str:
    describe = getattr(result, "describe", None)
    return describe() if callable(describe) else "conversation compacted"


def run_app(agent: AgentLike, *, store: Any = None, initial_prompt: str | None = None,
            resumed_from: str | None = None, team: TeamSource | None = None) -> int:
    """The interactive app with ↑ history of the agent's project; returns 0, 130 or 128 + a signal.

    `team` (given when a team store is configured) lists the team's sessions in `/resume`'s picker (Tab).
    """
    from .prompt_history import ProjectHistory, history_path

    history = ProjectHistory(history_path(agent.project_dir))
    app = AgentApp(agent, store=store, initial_prompt=initial_prompt, resumed_from=resumed_from, history=history,
                   team=team)
    return app.run()


def _plan_part(agent: Any) -> str:
    """`plan 2/5` while a plan is open (the status line), else nothing."""
    progress = getattr(agent, "plan_progress", None)
    value = progress() if progress is not None else None
    return f"plan {value[0]}/{value[1]}" if value else ""
