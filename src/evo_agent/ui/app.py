"""The interactive app: prompt_toolkit for the input, Rich for the output, the terminal's scrollback for history.

    code = run_app(agent, initial_prompt=None, resumed=None)   # the caller prints the exit hint

Finished output (prompts, answers, tool calls, notices) is printed into the terminal's own
scrollback, as IPython, pgcli and aider do: after exit the whole conversation is still there to
scroll, search and copy with the terminal's own selection (no alternate screen, no mouse capture).
Only a small live region stays at the bottom: the unfinished tail of a streaming answer, queued
prompts, the prompt box and one activity/status line. It fits any terminal from 60×15 up.

The agent's turn runs in a worker thread (the `AgentLike`/`TurnCallbacks` interface of bridge.py);
each event is handed to the event loop with `call_soon_threadsafe` and drawn by turn_view.py, so all
drawing happens in one thread. Keys: Enter sends; Alt+Enter or Ctrl+J insert a newline; Esc interrupts the running
turn (like Ctrl+C); Ctrl+C twice quits (130); Ctrl+D on an empty prompt quits (0); ↑/↓ walk the
project's prompt history; `/` lists the slash commands (↓ chooses, Tab completes); Ctrl+O prints the last
tool output in full.
A prompt sent while a turn runs is queued and shown as queued.

A question (an approval, a yes/no) is answered on purpose, never by typing meant for the prompt
(SPEC §9): a small menu (ui/questions.py). The keys are bound in ui/keys.py; the slash commands are
written once against the app's Screen (ui/app_screen.py, ui/commands.py).
"""

from __future__ import annotations

import asyncio
import io
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application
from prompt_toolkit.application.run_in_terminal import in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import TabsProcessor
from prompt_toolkit.renderer import CPR_Support
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import SearchToolbar
from rich.console import RenderableType
from rich.text import Text

from evo_agent.agent.callbacks import EXIT_GRACE_S
from evo_agent.exit_codes import EXIT_HANGUP
from evo_agent.safe_text import terminal_line, terminal_safe
from evo_agent.session import one_line
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from . import early_input, render
from .activity import Activity, cost_part, fit
from .app_screen import AppScreen
from .bridge import AgentLike
from .commands import complete as complete_command
from .commands import is_command, run_command, runs_while_busy
from .erase import erase_down_in_place
from .keys import KEYS_HELP, app_key_bindings
from .paste import collect_pastes_in_pieces
from .picker import TeamSource
from .questions import Questions
from .signals import exit_on_signals
from .transcript_view import history_renderables
from .turn_view import TurnEvents, TurnView, wrapped_tail

if TYPE_CHECKING:
    from evo_agent.agent.resuming import Resumed

    from .commands import SlashCommand

__all__ = ["AgentApp", "run_app", "KEYS_HELP"]

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


def _drawn_width(screen: Any, row: int) -> int:
    """The cells drawn on one row of a prompt_toolkit Screen, to the last one that is not blank."""
    cells = screen.data_buffer.get(row) or {}
    return max((x + 1 for x, char in cells.items() if char.char != " "), default=0)


class AgentApp:
    """The conversation printed above, a small live region below (see the module docstring)."""

    def __init__(self, agent: AgentLike, *, store: Any = None, initial_prompt: str | None = None,
                 resumed: Resumed | None = None, history: History | None = None,
                 input: Any = None, output: Any = None, team: TeamSource | None = None) -> None:
        self.agent = agent
        self.store = store
        self.team = team  # the team store's sessions for the picker's Tab view (None: no team store configured)
        self.initial_prompt = initial_prompt
        self.resumed = resumed  # a launch's resume (agent/resuming.py), shown once the app draws
        self.activity = Activity()
        self.view = TurnView(self)   # the running turn's display (turn_view.py)
        self.queue: list[str] = []
        self.running = False
        self.exit_code = 0
        self.cancel = threading.Event()
        self.worker_done = threading.Event()
        self.worker_done.set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._turn = 0
        self._last_ctrl_c = 0.0               # when Ctrl+C was last pressed: twice quits (ui/keys.py)
        self._flash = ""                      # a short hint in the status line ("Ctrl+C again to exit")
        self._flash_until = 0.0
        self._exiting = False
        self._tick_task: asyncio.Task | None = None
        self._picker_task: asyncio.Task | None = None   # /resume's picker (kept: a bare task may be collected)
        self._held: list[str] = []            # output that arrived while the picker had the terminal
        self._show_plan = False               # Ctrl+T: the plan's checklist above the prompt
        self._plan_cache: tuple[float, str] = (-1.0, "")   # (when read, the checklist)
        self._early_keys = b""                # keys typed before the first frame (ui/early_input.py)
        self.buffer = Buffer(multiline=True, history=history or InMemoryHistory(), enable_history_search=False)
        self.command_choice: int | None = None  # the `/` menu's row chosen with ↓ (ui/keys.py); typing clears it
        self.menu_closed = False  # Esc closed the `/` menu; typing opens it again (ui/keys.py)
        self.buffer.on_text_changed += self._typed
        self.questions = Questions(self)      # the approval or y/n question that is up, and its menu
        self.screen = AppScreen(self)         # what the slash commands (ui/commands.py) act on
        self.app: Application = Application(
            layout=Layout(self._layout(), focused_element=None),
            key_bindings=app_key_bindings(self), style=STYLE, full_screen=False, mouse_support=False,
            erase_when_done=True, input=input, output=output, include_default_pygments_style=False,
            # SIGWINCH redraws the app after a resize. The size poll would redraw it as well, even
            # while `/resume`'s picker has the terminal (run_in_terminal), drawing over the picker.
            terminal_size_polling_interval=None,
        )
        self.app.layout.focus(self._input_window)
        collect_pastes_in_pieces(self.app.input)  # a 10 MB paste read in linear time (ui/paste.py)
        erase_down_in_place(self.app.output)  # no copy of the live region in tmux's scrollback (ui/erase.py)
        # No cursor-position requests: the live region is exactly as tall as its content. (A late answer
        # to one, after keys typed during start-up, stretched it to the bottom of the screen.)
        self.app.renderer.cpr_support = CPR_Support.NOT_SUPPORTED
        self.app.timeoutlen = 0.3   # Esc alone fires after this; Alt+Enter arrives as one read and is not delayed
        self.app.ttimeoutlen = 0.05
        self.app._on_resize = self._on_resize  # type: ignore[method-assign]  # SIGWINCH: see _on_resize

    def _on_resize(self) -> None:
        """The terminal changed size: erase the old frame whole, then draw it again (prompt_toolkit's own
        handler, after one correction).

        A terminal that narrows rewraps every line wider than it now is (tmux, GNOME Terminal, iTerm2, kitty):
        the frame's full-width rules above the cursor each become two lines, so going up as many lines as
        the frame had above the cursor stops short and leaves the top of the old frame in the scrollback.
        The erase goes up by those extra lines too. (A terminal that cuts lines instead, as xterm does,
        loses that many lines of the output above the frame from the screen: the lesser harm.)"""
        renderer, app = self.app.renderer, self.app
        try:
            screen, old = renderer._last_screen, renderer._last_size
            columns = app.output.get_size().columns
            if screen is not None and old is not None and 0 < columns < old.columns:
                above, x = renderer._cursor_pos.y, renderer._cursor_pos.x
                extra = sum(max(0, -(-_drawn_width(screen, y) // columns) - 1) for y in range(above))
                extra += x // columns  # the cursor's own row rewrapped too: it sits on a later piece of it
                if extra:
                    renderer._cursor_pos = renderer._cursor_pos._replace(y=above + extra)
        except Exception:  # noqa: BLE001 - a redraw is never worth a crash: at worst the old frame shows
            pass
        Application._on_resize(app)

    # ------------------------------------------------------------------ layout
    def _layout(self) -> HSplit:
        has_tail = Condition(lambda: bool(self.view.stream.tail.strip()))
        has_queue = Condition(lambda: bool(self.queue))
        # Not under a question: its `? run: …` names the call, and `● bash …` (still streaming?) below it read as
        # a second thing going on while the app waited for the answer.
        has_named = Condition(lambda: bool(self.view.named) and not self.questions.asking())
        has_completions = Condition(lambda: bool(self._completion_text()))
        questions = self.questions
        has_menu = Condition(lambda: bool(questions.menu) and questions.asking() and not questions.reason_mode)
        showing_plan = Condition(lambda: self._show_plan)
        # A pasted tab is shown as blanks, not as prompt_toolkit's `^I` (it is sent as the tab it is).
        tabs = TabsProcessor(tabstop=4, char1=" ", char2=" ")
        # Ctrl+R: prompt_toolkit's reverse incremental search through the prompt history, on its line under the box
        # (its keys: ui/keys.py leaves them to prompt_toolkit while it is up).
        search = SearchToolbar(backward_search_prompt="search history: ", forward_search_prompt="search history: ",
                               ignore_case=True)
        control = BufferControl(self.buffer, input_processors=[tabs], search_buffer_control=search.control,
                                preview_search=True)
        self._input_window = Window(control, wrap_lines=True,
                                    dont_extend_height=True,
                                    height=lambda: Dimension(min=1, max=self._max_input_rows()))
        return HSplit([
            ConditionalContainer(Window(FormattedTextControl(self._tail_text), wrap_lines=True, dont_extend_height=True,
                                        height=lambda: Dimension(max=self._max_tail_rows())), has_tail),
            ConditionalContainer(Window(FormattedTextControl(lambda: self.view.named_text(self.width())),
                                        wrap_lines=False, dont_extend_height=True,
                                        height=lambda: Dimension(max=3)), has_named),
            ConditionalContainer(Window(FormattedTextControl(self._queue_text), wrap_lines=False,
                                        dont_extend_height=True, height=lambda: Dimension(max=3)), has_queue),
            ConditionalContainer(Window(FormattedTextControl(questions.menu_text), wrap_lines=False,
                                        dont_extend_height=True), has_menu),
            ConditionalContainer(Window(FormattedTextControl(self._plan_text), wrap_lines=False,
                                        dont_extend_height=True, height=lambda: Dimension(max=14)), showing_plan),
            Window(height=1, char="─", style="class:rule"),
            VSplit([Window(FormattedTextControl(self._prompt_label), dont_extend_width=True), self._input_window]),
            Window(height=1, char="─", style="class:rule"),
            search,
            ConditionalContainer(Window(FormattedTextControl(self._completions_line), wrap_lines=False,
                                        dont_extend_height=True), has_completions),
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
        rows = wrapped_tail(terminal_safe(self.view.stream.tail.rstrip("\n")), self.width(), self._max_tail_rows())
        return FormattedText([("", "\n".join(rows))])

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
            try:
                text = self.agent.plan_text(compact=True)
            except Exception:  # noqa: BLE001 - a panel never takes the app down
                text = "The plan cannot be read."
            self._plan_cache = (now, text)
        width = self.width() - 1
        return FormattedText([("class:dim", "\n".join(one_line(terminal_safe(line), width)
                                                      for line in text.splitlines()))])

    def _prompt_label(self) -> FormattedText:
        if self.questions.reason_mode:
            return FormattedText([("class:approval", "reason for no (optional) › ")])
        if self.questions.asking() and not self.questions.on_prompt:
            return FormattedText([("class:dim", "› ")])  # the keys go to the question above
        return FormattedText([("class:prompt", "› ")])

    def _typed(self, _buffer: Buffer) -> None:
        """The prompt's text changed: the `/` menu's choice is typed over, and a menu Esc closed opens again."""
        self.command_choice = None
        self.menu_closed = False

    def _completion_text(self) -> str:
        if self.menu_closed:
            return ""
        text = self.buffer.text
        matches = complete_command(text) if text.startswith("/") and "\n" not in text else []
        if not matches or (len(matches) == 1 and matches[0].name == text.strip()):
            return ""
        if len(matches) == 1:
            return f"{matches[0].name} {matches[0].args}  {matches[0].help}"
        return "  ".join(m.name for m in matches)

    def command_matches(self) -> list[SlashCommand]:
        """The commands listed under the prompt (none when the menu is not up)."""
        return complete_command(self.buffer.text) if self._completion_text() else []

    def _completions_line(self) -> FormattedText:
        """The commands the prompt could become, one a row with its arguments and help, as Claude Code and Codex
        list them under the prompt. (One line of names, cut with …, hid /permissions, /mcp, /help and /exit
        from a `/` typed to see them.) At most what leaves the prompt room; the rest are named on a last row.
        The row chosen with ↓ is marked `❯` (and the rows scroll to keep it shown)."""
        matches = self.command_matches()
        width = self.width() - 3  # indented under the prompt's text
        room = max(2, min(len(matches), self._rows() - 12))
        count = len(matches) if len(matches) <= room else room - 1
        choice = self.command_choice
        start = 0 if choice is None else max(0, min(choice - count + 1, len(matches) - count))
        shown = matches[start:start + count]
        column = max(len(f"{m.name} {m.args}".strip()) for m in shown) if shown else 0
        parts: list[tuple[str, str]] = []
        for i, m in enumerate(shown, start):
            chosen = i == choice
            mark = "❯ " if chosen else "  "
            head = f"{'' if i == start else chr(10)}{mark}{f'{m.name} {m.args}'.strip():<{column}}  "
            parts += [("class:choice" if chosen else "", head),
                      ("class:dim", one_line(m.help, max(width - column - 2, 1)))]
        if len(shown) < len(matches):
            rest = [m for m in matches if m not in shown]
            parts.append(("class:dim", "\n  " + one_line(f"… {len(rest)} more: " + " ".join(m.name for m in rest),
                                                      width)))
        return FormattedText(parts)

    def _status_text(self) -> FormattedText:
        width = self.width() - 1
        flashing = self._flash and time.monotonic() < self._flash_until
        if is_searching():  # first: its keys are the ones that work (a question's wait until it ends)
            keys = ["Ctrl+R an older one", "Enter takes it", "Ctrl+G gives up"]
            return FormattedText([("class:status", fit(keys, width))])
        if self.questions.asking():
            keys = self.questions.status_keys(bool(flashing)).split(" · ")  # the last keys go first when narrow
            return FormattedText([("class:approval", fit(keys, width))])
        if flashing:
            return FormattedText([("class:status.busy", fit([self._flash], width))])
        if self.activity.running:
            return FormattedText([("class:status.busy", self.activity.line(width))])
        return FormattedText([("class:status", fit(self._idle_parts(width), width))])

    def _idle_parts(self, width: int) -> list[str]:
        a = self.agent
        try:
            threshold = a.compact_threshold
            # A long model name (a dated or proxied one) is cut to a third of the line: whole, it pushed the
            # context and the permission mode off it (`fit` drops parts from the end).
            most = max(16, width // 3)
            model = a.model if len(a.model) <= most else a.model[:most - 1] + "…"
            parts = [terminal_line(model), f"{a.total_tokens:,} tokens",
                     f"context {100 * a.context_chars // threshold}%" if threshold else "", cost_part(a),
                     f"mode {a.permission_mode}" if a.permission_mode else "",
                     # commands run unasked without bubblewrap: the allowlist alone decides (tools/sandbox.py)
                     "unsandboxed" if a.read_only_backstop is False else "",
                     "sandbox" if a.sandbox is not None else "",  # --sandbox: bash in bubblewrap
                     _plan_part(a),
                     f"session {a.session_id}", "/help"]
        except Exception:  # noqa: BLE001 - a status line never takes the app down
            parts = ["status unavailable"]
        return [p for p in parts if p]

    # ------------------------------------------------------------------ printing above the live region
    def render_ansi(self, *renderables: RenderableType) -> str:
        console = render.make_console(io.StringIO(), width=self.width(), force_terminal=True)
        setattr(console, render.TERMINAL_WRAPS, True)  # an answer's code lines are left whole (ui/answer.py)
        for item in renderables:
            # Lines of text are wrapped by the terminal (a copied id or path stays one line); Markdown by Rich,
            # but for its code blocks' lines (not cropped); prose (render.Prose: notices) between words first.
            if isinstance(item, render.Prose):
                item = item.wrapped(console.width)
            console.print(item, soft_wrap=isinstance(item, Text), crop=not render.is_answer(item))
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

    def _hint(self, text: str) -> None:
        self._flash, self._flash_until = text, time.monotonic() + 4.0
        self._schedule_redraw(4.05)
        self.app.invalidate()

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
            if self.running and not runs_while_busy(stripped):
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
        """Run `prompt` as a user turn; `shown`: the command that sent it (`/init`'s long prompt), echoed already."""
        if self._refuse_prompt(prompt):
            return
        self.view.start()
        if shown is None:  # a command's prompt (`/init`): the command was echoed already (handle_command)
            self.emit(Text(""), render.user_prompt(prompt))
        self._turn += 1
        self.cancel = threading.Event()
        self._begin("working")
        turn, cancel = self._turn, self.cancel
        callbacks = TurnEvents(self, turn)
        self._in_worker(lambda: self.agent.run_turn(prompt, callbacks, cancel),
                        lambda result, error: self._turn_done(turn, result, error))

    def _refuse_prompt(self, prompt: str) -> bool:
        """A prompt too large for the model's context window: one line, and the prompt back in the box to edit.

        Checked here, before the echo, so a huge paste is neither sent, recorded, nor printed into the scrollback.
        """
        from evo_agent.agent.compaction_state import prompt_refusal

        refusal = prompt_refusal(prompt, self.agent.compact_threshold)
        if refusal is None:
            return False
        self.emit(render.error_line(f"error: {refusal}"))
        self.buffer.text = prompt + ("\n" + self.buffer.text if self.buffer.text else "")
        self.buffer.cursor_position = len(prompt)
        self.refit()
        self.app.invalidate()
        return True

    def _begin(self, label: str, hint: str = "Esc interrupts") -> None:
        self.running = True
        self.worker_done.clear()
        self.activity.start(label, hint)
        if self._tick_task is None or self._tick_task.done():
            self._tick_task = asyncio.ensure_future(self._tick())
        self.app.invalidate()

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
        self.view.finish()
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

    # The turn view's, under the names the keys (Ctrl+O) and the questions read.
    def _flush_text(self) -> None:
        self.view.flush_text()

    @property
    def _last_tool(self) -> tuple[str, Any, str] | None:
        return self.view.last_tool

    # ------------------------------------------------------------------ questions (ui/questions.py)
    def ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Called from the worker thread; blocks it until the user answers (exit and Ctrl+C mean no)."""
        return self.questions.ask_approval(request)

    # ------------------------------------------------------------------ slash commands (ui/commands.py)
    def handle_command(self, line: str) -> None:
        """Echo `/cost` as a prompt is echoed, then run it: without the echo its output ran on from the answer
        above it (`done.` then `session …: 16,586 input`), where Claude Code shows `> /cost` first."""
        self.emit(Text(""), render.user_prompt(line))
        run_command(line, self.screen, self.agent)

    def _command_done(self, turn: int, message: str, error: str | None, *, stopped: bool = False) -> None:
        if turn == self._turn:
            if error and stopped:
                # Stopped by the user (Esc during /compact): what happened, not a failure in red ('error: cannot
                # compact: the summary was interrupted'), as a call the user refused says 'not run: you said no'.
                self.emit(render.notice(f"Interrupted: {error}"))
            elif error or message:
                self.emit(render.error_line(f"error: {error}") if error else render.notice(message))
            self._end()
            self._next_from_queue()

    def resume(self, session_id: str) -> None:
        self._begin("resuming", hint="")
        self._turn += 1
        turn = self._turn
        self._in_worker(lambda: self.agent.resume(session_id, confirm=self._confirm_foreign),
                        lambda result, error: self._resumed(turn, result, error))

    def _confirm_foreign(self, session_id: str, reason: str) -> bool:
        """In the worker: a session recorded elsewhere is resumed only when the user says yes (SPEC §9)."""
        decision = self.ask_approval(ApprovalRequest(
            tool="resume", summary=f"resume {session_id}, recorded elsewhere: {reason}",
            detail="Its history goes to the model as if you had written it. "
                   "To keep a copy of your own instead: evo-agent sessions adopt " + session_id,
            reason="recorded elsewhere"))
        return decision.answer != "no"

    def _resumed(self, turn: int, resumed: Resumed | None, error: str | None) -> None:
        if turn != self._turn:
            return
        if error:
            self.emit(render.error_line(f"error: {error}"))
        elif resumed is not None:
            self.show_resumed(resumed)
        self._end()
        self._next_from_queue()

    def show_resumed(self, resumed: Resumed) -> None:
        """What a resume did (agent/resuming.py): the restored conversation, the line, its warnings, its notice."""
        self.emit(*history_renderables(resumed.messages, width=self.width()))
        self.emit(render.notice(resumed.line))
        for line in (*resumed.warnings, resumed.notice):
            if line:
                self.emit(render.notice(line))

    async def _pick_and_resume(self) -> None:
        try:
            from .picker import pick_session  # the picker's API for a running loop (ui/picker.py)
        except ImportError:
            self.emit(render.notice("the session list is not available here: use /resume ID "
                                    "(evo-agent sessions list shows the ids)"))
            return
        empty: list[bool] = []
        try:
            async with in_terminal():
                chosen = await pick_session(self.agent.project_dir, exclude=[self.agent.session_id], team=self.team,
                                            on_empty=lambda: empty.append(True))
        except Exception as exc:  # noqa: BLE001
            self.emit(render.error_line(f"error: {exc}"))
            return
        if self._held:
            self.write("")
        if chosen:
            self.resume(chosen)
        else:  # `/resume` said nothing at all with no other session, or after Esc
            self.emit(render.notice("No other session in this project to resume." if empty
                                    else "No session chosen; this one goes on."))

    # ------------------------------------------------------------------ running
    def leave(self, code: int) -> None:
        """Every way out: stop the turn, answer a pending approval with no, end the app with `code`."""
        if self._exiting:
            return
        self.exit_code = code
        self.cancel.set()
        self.questions.drop()
        try:
            self.app.exit(result=code)
        except Exception:  # noqa: BLE001 - not running yet, or already leaving
            pass
        self._exiting = True

    def _started(self) -> None:
        self.loop = asyncio.get_running_loop()
        exit_on_signals(self.leave)  # SIGTERM 143, SIGHUP 129 (the terminal closed)
        prompt = self.initial_prompt or ""
        first = bool(prompt.strip())
        if first:
            self.loop.call_soon(self.submit, prompt)
        if self._early_keys:  # typed (and echoed) while the app started: shown in the first frame
            early_input.replay(self.app, self._early_keys, now=first)

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
        self.emit(render.welcome_line(a.model, a.provider.name, str(a.project_dir), self.width()))
        from evo_agent.agent.instructions import welcome_text

        context = welcome_text(a.instructions)
        if context:  # which instruction files the model was given, where the tools run: one line, as named
            self.emit(render.notice(terminal_line(context)))
        if self.resumed is not None:
            self.show_resumed(self.resumed)

    def run(self) -> int:
        """Run until the user leaves; returns the exit code once the live region is gone."""
        self._early_keys = early_input.take()  # the early prompt line goes; its keys are replayed in _started
        self.print_welcome()
        return asyncio.run(self.run_async())




def run_app(agent: AgentLike, *, store: Any = None, initial_prompt: str | None = None,
            resumed: Resumed | None = None, team: TeamSource | None = None) -> int:
    """The interactive app with ↑ history of the agent's project; returns 0, 130 or 128 + a signal.

    `team` (given when a team store is configured) lists the team's sessions in `/resume`'s picker (Tab).
    """
    from .prompt_history import ProjectHistory, history_path

    history = ProjectHistory(history_path(agent.project_dir))
    app = AgentApp(agent, store=store, initial_prompt=initial_prompt, resumed=resumed, history=history,
                   team=team)
    return app.run()


def _plan_part(agent: AgentLike) -> str:
    """`plan 2/5` while a plan is open (the status line), else nothing."""
    value = agent.plan_progress()
    return f"plan {value[0]}/{value[1]}" if value else ""
