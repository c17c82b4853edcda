"""The slash commands (ui/commands.py): what a submitted line means, and each command written once.

Every command in the table runs against the `Screen` interface (ui/screen.py): here against a
recording Screen, then through the line REPL and through the app, on a real agent each time; what
the command said on the recording Screen is what both front ends show.
"""

from __future__ import annotations

import inspect
import io
import re
import threading
from pathlib import Path

import pytest

from evo_agent.cli.repl import Repl
from evo_agent.cli.runtime import Console, Signals
from evo_agent.ui import app as app_module
from evo_agent.ui.app_screen import AppScreen
from evo_agent.ui.commands import COMMANDS, is_command, run_command
from evo_agent.ui.screen import Screen
from tests.builders import make_agent, make_git_project
from tests.scripted_provider import ScriptedProvider, reply

from .test_app import ENTER, running


@pytest.mark.parametrize("line", ["/help", "/exit", "/compact focus on tests", "/nope", "/rename a/b", "/COST"])
def test_commands(line):
    assert is_command(line)


@pytest.mark.parametrize("line", [
    "/home/me/err.log what is this?", "/tmp/x", " /help", "\t/help", "//help", "/ help", "hello /help",
    "/etc/passwd", "/1abc", "",
])
def test_prompts(line):
    assert not is_command(line)


# One line per command of the table: adding a command means a row here too.
LINES = {
    "/resume": "/resume nosuchsession", "/clear": "/clear", "/compact": "/compact", "/rename": "/rename kept",
    "/rewind": "/rewind", "/init": "/init", "/plan": "/plan", "/memory": "/memory",
    "/remember": "/remember Always use pnpm", "/cost": "/cost", "/status": "/status", "/permissions": "/permissions",
    "/mcp": "/mcp",
    "/help": "/help", "/exit": "/exit",
}
SESSION_ID = re.compile(r"\d{13}_[0-9a-f]{8}")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class RecordingScreen:
    """Our own Screen, recording each call; work runs at once, questions are answered no."""

    keys_help = ""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def notice(self, text: str) -> None:
        self.calls.append(("notice", text))

    def notice_command(self, text: str, command: str) -> None:
        self.calls.append(("notice", f"{text}\n  {command}"))

    def error(self, text: str) -> None:
        self.calls.append(("error", text))

    def failed(self, text: str) -> None:
        self.calls.append(("failed", text))

    def ask_yes_no(self, question: str) -> bool:
        self.calls.append(("ask_yes_no", question))
        return False

    def ask_line(self, question: str) -> str | None:
        self.calls.append(("ask_line", question))
        return ""

    def show_history(self, messages) -> None:
        self.calls.append(("show_history", str(len(messages))))

    def run_work(self, label, work, *, interruptible, failure=""):
        try:
            work(threading.Event())
        except Exception as exc:
            self.failed(f"{failure}: {exc}" if failure else str(exc))

    def send_prompt(self, prompt: str, *, shown: str) -> None:
        self.calls.append(("send_prompt", shown))

    def edit_prompt(self, text: str) -> None:
        self.calls.append(("edit_prompt", text))

    def resume(self, session: str) -> None:
        self.calls.append(("resume", session))

    def exit(self, code: int) -> None:
        self.calls.append(("exit", str(code)))


def test_every_command_of_the_table_has_a_line_here_and_no_front_end_handles_one_itself():
    assert set(LINES) == {c.name for c in COMMANDS}
    assert all(callable(c.run) for c in COMMANDS)
    import evo_agent.cli.repl as repl_module

    for module in (repl_module, app_module):  # no `== "/name"`, `"/name": …` or list of names: no dispatch by name
        source = Path(module.__file__).read_text()
        dispatch = [c.name for c in COMMANDS
                    if re.search(rf"==\s*[\"']{c.name}[\"']|[\"']{c.name}[\"']\s*[:,)]", source)]
        assert not dispatch, module.__name__


@pytest.mark.parametrize("screen", [RecordingScreen, AppScreen, Repl])
def test_both_front_ends_and_the_fake_implement_the_whole_screen(screen):
    members = {name for name in vars(Screen) if not name.startswith("_")} | {"keys_help"}
    for name in members:
        assert hasattr(screen, name), f"{screen.__name__} lacks {name}"
        if callable(getattr(Screen, name, None)):
            assert _shape(getattr(screen, name)) == _shape(getattr(Screen, name)), name


def _shape(method) -> list[str]:
    """A method's parameters as a caller sees them: how many positional ones, the keyword-only ones by name."""
    parameters = list(inspect.signature(method).parameters.values())[1:]
    return [p.name if p.kind is p.KEYWORD_ONLY else p.kind.name for p in parameters]


def _agent(parent: Path, name: str, *, answers: bool = True):
    where = parent / name.strip("/")
    where.mkdir(parents=True)
    project = make_git_project(where)
    provider = ScriptedProvider(reply("Written.")) if name == "/init" and answers else ScriptedProvider()
    agent, store = make_agent(project, provider, mode="ask")
    return agent, store, project


def _said(text: str, agent, project: Path) -> str:
    """`text` with what differs between two agents (the session ids, the project's path) put the same."""
    return SESSION_ID.sub("SID", text.replace(str(project), "PROJECT"))


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
async def test_each_command_says_the_same_through_the_repl_and_the_app(command, tmp_path):
    line = LINES[command]
    agent, _, project = _agent(tmp_path / "recorded", command, answers=False)
    recorded = RecordingScreen()
    run_command(line, recorded, agent)
    assert recorded.calls and all(kind != "failed" or "cannot compact" in text for kind, text in recorded.calls)
    shown = [_said(t, agent, project) for kind, t in recorded.calls if kind in ("notice", "error", "failed")]
    expected = [row.strip() for text in shown for row in text.splitlines() if row.strip()]
    if command == "/help":
        expected = [row for row in expected if row.startswith("/")]  # the keys paragraph is each front end's own
    assert expected or command in ("/exit", "/init", "/resume")

    # The line REPL, in-process, its output captured.
    agent, store, project = _agent(tmp_path / "repl", command)
    out, err = io.StringIO(), io.StringIO()
    repl = Repl(agent, store, Console(out, err), Signals(), tty=False)
    code = repl.command(line)
    repl_text = _said(out.getvalue() + err.getvalue(), agent, project)
    assert code == (0 if command == "/exit" else None)
    assert all(row in repl_text for row in expected), repl_text

    # The app, on a pipe.
    agent, store, project = _agent(tmp_path / "app", command)
    async with running(agent, store=store) as run:
        run.type(line + ENTER)
        if command == "/exit":
            await run.until(run.task.done)
            assert run.app.exit_code == 0
        elif command == "/init":
            await run.until(lambda: "Written." in run.printed and not run.app.running)
        elif command == "/resume":
            await run.until(lambda: "nosuchsession" in run.printed.split("/resume", 1)[-1])
        else:
            # The app wraps a notice between words at its width: compared as words, not as screen lines.
            await run.until(lambda: all(_words(row) in _words(_said(run.printed, agent, project)) for row in expected))
    if command == "/init":
        assert "Written." in repl_text and "› /init" in run.printed
    if command == "/resume":
        assert recorded.calls == [("resume", "nosuchsession")] and "nosuchsession" in repl_text


@pytest.mark.parametrize("keys", [pytest.param("app", id="app"), pytest.param("repl", id="repl")])
def test_help_fits_an_80_column_terminal_in_both_front_ends(keys):
    """/help at 80×24: a row wider than the terminal wraps mid-word, so every row fits in 80 cells."""
    from rich.cells import cell_len

    from evo_agent.ui.commands import help_text
    from evo_agent.ui.keys import KEYS_HELP

    text = help_text(KEYS_HELP if keys == "app" else Repl.keys_help)
    assert [line for line in text.splitlines() if cell_len(line) > 80] == []
