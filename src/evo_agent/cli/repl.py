"""The line REPL: prompts in, streamed answers out, slash commands handled here.

Used with --plain and whenever stdin is not a terminal (it works with piped
input: one prompt or command per line). Slash commands never reach the model.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, assert_never

from evo_agent import __version__
from evo_agent.agent import Agent
from evo_agent.agent.events import (
    Notice,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolNamed,
    ToolStarted,
    TurnEvent,
)
from evo_agent.agent.instructions import welcome_text
from evo_agent.exit_codes import DOUBLE_CTRL_C_SECONDS
from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionError, SessionStore, one_line
from evo_agent.tools import call_argument
from evo_agent.ui.commands import is_command, run_command
from evo_agent.ui.typeahead import bracket_pastes

from .approvals import ReplApprovals
from .errors import EXIT_INTERRUPTED, CommandError
from .runtime import (
    Console,
    Signals,
    Terminated,
    crash_line,
    run_interruptible,
    run_turn,
)
from .sessions.listing import pick_session
from .trust import foreign_confirm

if TYPE_CHECKING:
    from evo_agent.agent.resuming import Resumed

TOOL_LINE_CHARS = 100


def _summary(name: str, tool_input: dict) -> str:
    """What a call's line shows in its parentheses: the tool's own label (tools.call_argument), as the app's."""
    return _tool_line(call_argument(name, tool_input))


def _tool_line(text: str) -> str:
    """One shortened line of a tool's input or output, its control sequences made visible (safe_text)."""
    return terminal_safe(one_line(text, TOOL_LINE_CHARS), keep_newlines=False)


class ConsoleCallbacks:
    """Shows a turn as it happens: streamed text, one line per tool call and result.

    Parallel calls (subagents) may finish in any order: a result that does not
    belong to the call shown just above it names its call.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self._labels: dict[str, str] = {}
        self._last_started = ""
        try:
            self._to_terminal = bool(console.out.isatty())
        except (AttributeError, ValueError, OSError):
            self._to_terminal = False

    def on_event(self, event: TurnEvent) -> None:
        match event:
            case TextDelta(text=text):
                # Character by character, so a sequence split across two chunks is made harmless all the same.
                self.console.write(terminal_safe(text) if self._to_terminal else text)
            case ToolStarted(depth=0):
                self._tool_started(event.tool_id, event.name, dict(event.input))
            case ToolFinished(depth=0):
                self._tool_finished(event.tool_id, event.text, event.is_error)
            case Notice(text=text) | Retrying(text=text):
                self.console.line(terminal_safe(text))
            case ThinkingDelta() | ToolNamed() | ToolStarted() | ToolFinished():
                pass  # no thinking, no pending line, no subagent's calls in the REPL
            case _:
                assert_never(event)  # a new kind of event: mypy (and tests/agent/test_events.py) say where

    def _tool_started(self, tool_id: str, name: str, tool_input: dict) -> None:
        label = f"{terminal_safe(name, keep_newlines=False)}({_summary(name, tool_input)})"
        self._labels[tool_id] = label
        self._last_started = tool_id
        self.console.line(f"⏺ {label}")

    def _tool_finished(self, tool_id: str, text: str, is_error: bool) -> None:
        lines = [line for line in (text or "").splitlines() if line.strip()]
        first = _tool_line(lines[0]) if lines else "(no output)"
        more = f" … (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        label = self._labels.pop(tool_id, "")
        owner = f"{label}: " if label and tool_id != self._last_started else ""
        self._last_started = ""  # whatever ends next is no longer right below its call
        self.console.line(f"  ⎿ {owner}{'error: ' if is_error else ''}{first}{more}")


def restored_view(messages: list, *, tty: bool) -> str:
    """The restored conversation as text for the REPL (colours only on a terminal), see ui/transcript_view.py."""
    import io
    import shutil

    from rich.text import Text

    from evo_agent.ui.render import make_console
    from evo_agent.ui.transcript_view import history_renderables

    out = io.StringIO()
    width = shutil.get_terminal_size((80, 24)).columns if tty else 80
    console = make_console(out, width=width, force_terminal=tty, color_system="auto" if tty else None)
    for item in history_renderables(messages):
        console.print(item, soft_wrap=isinstance(item, Text))
    return out.getvalue()


def show_resumed(console: Console, resumed: Resumed, *, tty: bool, view: bool = True, to_stderr: bool = False) -> None:
    """What the command line shows after a resume (launch or /resume): the restored conversation, the line,
    its warnings (stderr), what became of the history. Print mode (`to_stderr`, no view) keeps stdout the answer."""
    say = console.err_line if to_stderr else console.line
    if view:
        console.write(restored_view(resumed.messages, tty=tty))
    say(resumed.line)
    for warning in resumed.warnings:
        console.err_line(warning)
    if resumed.notice:  # summarised: it was over the compaction threshold
        say(resumed.notice)


class Repl:
    """The line REPL; also the `Screen` its slash commands are written against (ui/screen.py)."""

    keys_help = ("In the REPL /resume and /rewind without an argument show a numbered list.\n"
                 "Ctrl+C interrupts the running turn; Ctrl+C twice at the prompt leaves.")

    def __init__(self, agent: Agent, store: SessionStore, console: Console, signals: Signals, *, tty: bool) -> None:
        self.agent = agent
        self.store = store
        self.console = console
        self.signals = signals
        self.tty = tty
        self.callbacks = ConsoleCallbacks(console)
        self.approvals = ReplApprovals(console, signals, self.read_answer, interactive=tty)
        self.callbacks.on_approval = self.approvals.on_approval  # type: ignore[attr-defined]
        self._exit_code: int | None = None   # set by a slash command that leaves (Screen.exit)
        self._ctrl_c_at = -DOUBLE_CTRL_C_SECONDS  # the last Ctrl+C at the idle prompt: a second soon after leaves

    # ---- input
    def read(self, prompt: str) -> str | None:
        """One line of input, or None at EOF. KeyboardInterrupt/Terminated propagate."""
        if self.tty:
            try:
                return input(prompt)
            except EOFError:
                self.console.write("\n")  # the cursor is still after the prompt
                return None
            except BaseException:
                self.console.write("\n")  # after the ^C the terminal echoed
                raise
        line = sys.stdin.readline()
        if not line:
            return None
        return line.rstrip("\n").rstrip("\r")

    def read_answer(self, prompt: str) -> str | None:
        """A question's answer line, on a terminal without GNU readline (no editing needed for a word).

        CPython's readline prints the prompt and then waits in `select` on stdin alone, without the GIL: a
        Ctrl+C landing between the two is not seen until the next key, so "Allow? ^C" could hang. A plain
        read lets the SIGINT handler run before the read or interrupts it. KeyboardInterrupt propagates.
        """
        if not self.tty:
            return self.read(prompt)
        bracket_pastes(True)
        self.console.write(prompt)
        try:
            line = sys.stdin.readline()
        except BaseException:
            self.console.write("\n")  # after the ^C the terminal echoed
            raise
        finally:
            bracket_pastes(False)
        if not line:
            self.console.write("\n")  # EOF: the cursor is still after the prompt
            return None
        self.console.at_line_start = True  # the terminal echoed the Enter
        return line.rstrip("\n").rstrip("\r")

    def _read_answer(self, prompt: str) -> str | None:
        """A question's answer: what was typed (or pasted) before it is set aside, never taken as the answer."""
        self.approvals._set_aside_typeahead()
        return self.read_answer(prompt)

    # ---- the loop
    def run(self, initial_prompt: str | None = None) -> int:
        """Returns the exit code; the caller prints the exit hint.

        `initial_prompt` (`evo-agent "PROMPT"`) runs first.
        """
        if self.tty:
            try:
                import readline  # noqa: F401 - line editing and history for input()
            except ImportError:
                pass
        # Piped, the welcome goes to stderr (as `codex exec`'s header): a script reading stdout gets the answers.
        say = self.console.line if self.tty else self.console.err_line
        say(f"evo-agent {__version__} · {self.agent.provider.name}/{self.agent.model} · "
            f"session {self.agent.session_id} · permissions: {self.agent.permission_mode} · /help for commands")
        context = welcome_text(self.agent.instructions)
        if context:  # which instruction files the model was given, where the tools run
            say(terminal_safe(context, keep_newlines=False))
        try:
            if initial_prompt:
                if self.tty:
                    self.console.line(f"> {initial_prompt}")
                self.turn(initial_prompt)
            while True:
                line: str | None
                if self.approvals.set_aside:  # typed while a question was up: the next prompt, now
                    line = self.approvals.set_aside.pop(0)
                    self.console.line(f"> {terminal_safe(line, keep_newlines=False)}")
                else:
                    try:
                        line = self.read("> " if self.tty else "")
                    except KeyboardInterrupt:
                        if self._ctrl_c_leaves():
                            raise
                        continue
                    self._ctrl_c_at = -DOUBLE_CTRL_C_SECONDS  # a line was entered: the next Ctrl+C is a first again
                if line is None:
                    return 0
                text = line.strip()
                if not text:
                    continue
                if is_command(line):
                    code = self.command(text)
                    if code is not None:
                        return code
                    continue
                self.turn(line)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
        except Terminated as exc:
            return exc.exit_code
        finally:
            self.approvals.closed = True

    def _ctrl_c_leaves(self) -> bool:
        """A Ctrl+C at the idle prompt: on a terminal the first clears the line and arms, a second within
        DOUBLE_CTRL_C_SECONDS leaves (as the app, ui/keys.py); piped, the first leaves (a script's SIGINT means stop).

        A Ctrl+C that interrupted a turn went to the turn (cli/runtime.py) and did not arm: the next one here is a
        first one, so interrupting and then clearing the prompt does not end the session."""
        now = time.monotonic()
        if not self.tty or now - self._ctrl_c_at < DOUBLE_CTRL_C_SECONDS:
            return True
        self._ctrl_c_at = now
        self.console.line("(Press Ctrl+C again to exit)")
        return False

    def turn(self, prompt: str) -> None:
        outcome = run_turn(self.agent, prompt, self.callbacks, self.signals, self.approvals.service)
        self.console.end_line()
        if outcome.error is not None:
            self.console.error(str(outcome.error))
        elif outcome.crash is not None:
            self.console.err_line(crash_line(outcome.crash))
        elif outcome.result is not None and outcome.result.cancelled:
            self.console.line("(interrupted)")

    # ---- slash commands (ui/commands.py), through the Screen this REPL implements (ui/screen.py)
    def command(self, text: str) -> int | None:
        """Do a slash command; the exit code when it says to leave, else None."""
        self._exit_code = None
        run_command(text, self, self.agent)
        return self._exit_code

    def notice(self, text: str) -> None:
        self.console.line(terminal_safe(text))

    def notice_command(self, text: str, command: str) -> None:
        self.console.line(terminal_safe(text))
        self.console.line("  " + terminal_safe(command, keep_newlines=False))

    def error(self, text: str) -> None:
        self.console.error(terminal_safe(text))

    def failed(self, text: str) -> None:
        self.console.error(terminal_safe(text))

    def ask_yes_no(self, question: str) -> bool:
        """`/rewind`'s questions: lines pasted or typed with the command are set aside, never the answer."""
        return (self._read_answer(f"{question} [y/N] ") or "").strip().lower() in ("y", "yes")

    def ask_line(self, question: str) -> str | None:
        return self._read_answer(f"{question} ") or ""

    def show_history(self, messages: Sequence[dict[str, Any]]) -> None:
        self.console.end_line()
        self.console.write(restored_view(list(messages), tty=self.tty))

    def run_work(self, label: str, work: Callable[[threading.Event], None], *, interruptible: bool,
                 failure: str = "") -> None:
        """Interruptible work runs in a worker thread like a turn (Ctrl+C stops it); the rest here, at once
        (it may read answers from the terminal)."""
        prefix = f"{failure}: " if failure else ""
        if interruptible:
            outcome = run_interruptible(work, self.signals)
            if outcome.error is not None:
                self.console.error(f"{prefix}{outcome.error}")
            elif outcome.crash is not None:
                self.console.err_line(crash_line(outcome.crash))
            return
        try:
            work(threading.Event())
        except Exception as exc:  # noqa: BLE001 - a SessionError, a refused rewind: one line
            self.console.error(terminal_safe(f"{prefix}{' '.join(str(exc).split())}"))

    def send_prompt(self, prompt: str, *, shown: str) -> None:
        self.turn(prompt)  # the typed line (`/init`) is on the screen already

    def edit_prompt(self, text: str) -> None:
        """Nothing: a line read by input() cannot be handed text to edit (the /rewind list shows the prompt)."""

    def exit(self, code: int) -> None:
        self._exit_code = code

    def resume(self, arg: str) -> None:
        """`/resume [ID|NAME]`: without one, a numbered list to pick from."""
        if not arg:
            rows = [r for r in self.store.list() if r.id != self.agent.session_id]
            if not rows:
                self.console.line("No other session to resume in this project.")
                return
            chosen = pick_session(rows, self.console.line, self.read)
            if chosen is None:
                self.console.line("Resume cancelled.")
                return
            arg = chosen
        try:
            resumed = self.agent.resume(arg, confirm=foreign_confirm(interactive=self.tty, ask=self._read_answer))
        except (SessionError, CommandError) as exc:
            self.console.error(str(exc))
            return
        self.console.end_line()
        show_resumed(self.console, resumed, tty=self.tty)
