"""The line REPL: prompts in, streamed answers out, slash commands handled here.

Used with --plain and whenever stdin is not a terminal (it works with piped
input: one prompt or command per line). Slash commands never reach the model.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from evo_agent import __version__
from evo_agent.agent import Agent
from evo_agent.agent.callbacks import resumed_line, started_line
from evo_agent.agent.instructions import Instructions, init_prompt, welcome_text
from evo_agent.agent.memory_context import remember_line
from evo_agent.safe_text import terminal_safe
from evo_agent.session import SessionError, SessionStore, one_line
from evo_agent.ui.commands import help_text, is_command, lookup

from .approvals import ReplApprovals
from .errors import EXIT_INTERRUPTED, CommandError
from .runtime import (
    Console,
    Signals,
    Terminated,
    crash_line,
    run_compact,
    run_turn,
)
from .sessions.listing import pick_session
from .trust import allow_foreign, live_note

HELP_TEXT = help_text(
    "In the REPL /resume and /rewind without an argument show a numbered list.\n"
    "Ctrl+C interrupts the running turn; Ctrl+C at the prompt (or twice) leaves.")

TOOL_LINE_CHARS = 100


def _summary(tool_input: dict) -> str:
    where = tool_input.get("path") or tool_input.get("old_path")
    if isinstance(where, str) and where.startswith("/memories"):  # the memory tool: `create /memories/…`
        return _tool_line(f"{tool_input.get('command')} {where}")
    for key in ("command", "path", "pattern", "description", "focus"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return _tool_line(value)
    return _tool_line(", ".join(f"{k}={v!r}" for k, v in tool_input.items()))


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

    def on_text(self, text: str) -> None:
        # Character by character, so a sequence split across two chunks is made harmless all the same.
        self.console.write(terminal_safe(text) if self._to_terminal else text)

    def on_thinking(self, text: str) -> None:
        pass

    def on_tool_start(self, tool_id: str, name: str, tool_input: dict) -> None:
        label = f"{terminal_safe(name, keep_newlines=False)}({_summary(tool_input)})"
        self._labels[tool_id] = label
        self._last_started = tool_id
        self.console.line(f"⏺ {label}")

    def on_tool_end(self, tool_id: str, text: str, is_error: bool, duration: float) -> None:
        lines = [line for line in (text or "").splitlines() if line.strip()]
        first = _tool_line(lines[0]) if lines else "(no output)"
        more = f" … (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        label = self._labels.pop(tool_id, "")
        owner = f"{label}: " if label and tool_id != self._last_started else ""
        self._last_started = ""  # whatever ends next is no longer right below its call
        self.console.line(f"  ⎿ {owner}{'error: ' if is_error else ''}{first}{more}")

    def on_notice(self, text: str) -> None:
        self.console.line(terminal_safe(text))


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


class Repl:
    def __init__(self, agent: Agent, store: SessionStore, console: Console, signals: Signals, *, tty: bool) -> None:
        self.agent = agent
        self.store = store
        self.console = console
        self.signals = signals
        self.tty = tty
        self.callbacks = ConsoleCallbacks(console)
        self.approvals = ReplApprovals(console, signals, self.read, interactive=tty)
        self.callbacks.on_approval = self.approvals.on_approval  # type: ignore[attr-defined]

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
            self.console.line(
                f"evo-agent {__version__} · {self.agent.provider.name}/{self.agent.model} · "
                f"session {self.agent.session_id} · permissions: {self.agent.permission_mode} · /help for commands"
            )
            context = welcome_text(getattr(self.agent, "instructions", None) or Instructions())
            if context:  # which instruction files the model was given, where the tools run
                self.console.line(terminal_safe(context, keep_newlines=False))
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
                    line = self.read("> " if self.tty else "")
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

    def turn(self, prompt: str) -> None:
        outcome = run_turn(self.agent, prompt, self.callbacks, self.signals, self.approvals.service)
        self.console.end_line()
        if outcome.error is not None:
            self.console.error(str(outcome.error))
        elif outcome.crash is not None:
            self.console.err_line(crash_line(outcome.crash))
        elif outcome.result is not None and outcome.result.cancelled:
            self.console.line("(interrupted)")

    # ---- slash commands
    def command(self, text: str) -> int | None:
        name, _, arg = text.partition(" ")
        name, arg = name.lower(), arg.strip()
        name = lookup(name) or name  # the command table (ui/commands.py) knows the aliases
        handlers: dict[str, Callable[[str], Any]] = {
            "/exit": lambda _: 0,
            "/help": self.cmd_help,
            "/cost": self.cmd_cost,
            "/plan": self.cmd_plan,
            "/init": self.cmd_init,
            "/memory": self.cmd_memory,
            "/remember": self.cmd_remember,
            "/permissions": self.cmd_permissions,
            "/mcp": self.cmd_mcp,
            "/clear": self.cmd_clear,
            "/resume": self.cmd_resume,
            "/compact": self.cmd_compact,
            "/rename": self.cmd_rename,
            "/rewind": self.cmd_rewind,
        }
        handler = handlers.get(name)
        if handler is None:
            self.console.error(f"unknown command {name} (try /help)")
            return None
        return handler(arg)

    def cmd_help(self, _arg: str) -> None:
        self.console.line(HELP_TEXT)

    def cmd_init(self, _arg: str) -> None:
        """Ask the model to write the project's AGENTS.md: an ordinary turn, its write approved as any other."""
        self.turn(init_prompt(self.agent.project_dir))

    def cmd_plan(self, _arg: str) -> None:
        self.console.line(terminal_safe(self.agent.plan_text()))

    def cmd_memory(self, arg: str) -> None:
        self.console.line(terminal_safe(self.agent.memory_text(arg)))

    def cmd_remember(self, arg: str) -> None:
        line, ok = remember_line(self.agent, arg)
        (self.console.line if ok else self.console.error)(terminal_safe(line))

    def cmd_cost(self, _arg: str) -> None:
        self.console.line(self.agent.cost_text())

    def cmd_mcp(self, arg: str) -> None:
        """`/mcp`: each server's state; `/mcp reconnect NAME` starts it again (waits at most its start timeout)."""
        verb, _, name = arg.partition(" ")
        if verb == "reconnect" and name.strip():
            self.console.line(terminal_safe(self.agent.mcp_reconnect(name.strip())))
        elif arg:
            self.console.error("usage: /mcp [reconnect NAME]")
        else:
            self.console.line(terminal_safe(self.agent.mcp_text()))

    def cmd_permissions(self, _arg: str) -> None:
        self.console.line(self.agent.permissions_text())

    def cmd_compact(self, arg: str) -> None:
        outcome = run_compact(self.agent, arg or None, self.signals)
        if outcome.error is not None:
            self.console.error(f"cannot compact: {outcome.error}")
        elif outcome.crash is not None:
            self.console.err_line(crash_line(outcome.crash))
        elif outcome.result is not None:
            self.console.line(outcome.result.describe())

    def cmd_rename(self, arg: str) -> None:
        if not arg:
            current = self.agent.name
            self.console.line(f"This session is named {terminal_safe(current)!r}." if current
                              else "This session has no name. Usage: /rename NAME")
            return
        try:
            name = self.agent.rename(arg)
        except ValueError as exc:
            self.console.error(str(exc))
            return
        self.console.line(f"Session {self.agent.session_id} is now named {terminal_safe(name)!r} "
                          f"(evo-agent --resume {terminal_safe(name)!r} finds it).")

    def cmd_rewind(self, arg: str) -> None:
        from evo_agent.agent.file_restore import (
            BASH_NOTE,
            pending_changes,
            pending_plan_updates,
            restore_files,
            restore_plan,
        )
        from evo_agent.session import prompt_turns

        turns = prompt_turns(self.agent.recorder.path)
        if not turns:
            self.console.line("Nothing to rewind: no prompt in this session yet.")
            return
        if not arg:
            self.console.line("Go back to before which prompt? (newest first; a new session starts there, "
                              f"this one stays resumable. {BASH_NOTE})")
            for turn in reversed(turns[-20:]):
                self.console.line(f"{turn.number:>4}. {terminal_safe(turn.text[:70], keep_newlines=False)}")
            answer = self.read(f"Turn [1-{len(turns)}, Enter to cancel] ")
            arg = (answer or "").strip()
            if not arg:
                self.console.line("Rewind cancelled.")
                return
        if not arg.isdigit() or not 1 <= int(arg) <= len(turns):
            self.console.error(f"no turn {terminal_safe(arg, keep_newlines=False)}: choose 1 to {len(turns)}")
            return
        number, source = int(arg), self.agent.session_id
        changes = pending_changes(self.store, source, number)
        plan_updates = pending_plan_updates(self.store, source, number)
        try:
            self.agent.rewind(number)
        except SessionError as exc:
            self.console.error(str(exc))
            return
        self.console.line(f"Rewound to before turn {number}: new session {self.agent.session_id} "
                          f"({len(self.agent.messages)} messages; the previous one: evo-agent --resume {source})")
        if changes:
            answer = self.read(f"Restore {len(changes)} file{'s' if len(changes) != 1 else ''} changed since? [y/N] ")
            if (answer or "").strip().lower() in ("y", "yes"):
                yes = lambda question: (self.read(question) or "").strip().lower() in ("y", "yes")  # noqa: E731
                restore_files(changes, self.console.line, yes, project_dir=self.agent.project_dir)
        if plan_updates:
            answer = self.read(f"Put the Session Plan back as it was before turn {number} "
                               f"({len(plan_updates)} change{'s' if len(plan_updates) != 1 else ''} since)? [y/N] ")
            if (answer or "").strip().lower() in ("y", "yes"):
                restore_plan(self.agent.project_dir, plan_updates, self.console.line)

    def cmd_clear(self, _arg: str) -> None:
        self.agent.clear()
        self.console.line(started_line(self.agent))

    def cmd_resume(self, arg: str) -> None:
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
            source = self.store.resolve(arg)
            confirmed = allow_foreign(self.store, source, interactive=self.tty, ask=self.read)
            note = live_note(self.store, source)
            resumed = self.agent.resume(source, allow_foreign=confirmed)
        except (SessionError, CommandError) as exc:
            self.console.error(str(exc))
            return
        self.console.end_line()
        self.console.write(restored_view(resumed.loaded.messages, tty=self.tty))
        if note:
            self.console.err_line(note)
        self.console.line(resumed_line(resumed.loaded.session_id, resumed.loaded.restored_count, self.agent.session_id))
        if resumed.loaded.warning:
            self.console.err_line(resumed.loaded.warning)
        if resumed.notice:  # summarised: it was over the compaction threshold
            self.console.line(resumed.notice)
