"""`evo-agent --resume` (the session picker) as a user meets it: the real console script in tmux.

At 80×24 and 120×40 (and the smallest supported, 60×15): rows in update order showing the update
time, typing filters, Home/End, Enter resumes the chosen session, Esc cancels with exit 0 and
leaves no picker on the screen, a first prompt holding an OSC-0 title sequence does not retitle the
terminal, and closing the terminal (tmux window killed, SIGHUP, or reads failing with EIO) ends
the process.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from evo_agent.session import SessionStore
from evo_agent.ui.picker import format_updated
from tests.tmux_terminal import EVO

from ..helpers import wait_for
from .picker_helpers import BASE_MS, DAY_MS, plant, three_out_of_order

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SIZES = [(80, 24), (120, 40)]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_"))}
    env.update(EVO_AGENT_PROVIDER="demo", TERM="xterm-256color")
    return env


class Pane:
    """One tmux session running `evo-agent --resume` (exec'd, so `pid` is evo-agent's own), on a tmux server of its
    own (`-L`): a session added to a server already running (the default one, another test run's) gets that server's
    environment, not this test's, and its picker then found none of the sessions planted here."""

    def __init__(self, project: Path, pid_file: Path, size: tuple[int, int], env: dict[str, str] | None = None) -> None:
        self.name = f"picker-{os.getpid()}-{time.monotonic_ns()}"
        self.socket = self.name
        command = f"sh -c 'echo $$ > {pid_file}; exec {EVO} --resume'; echo EXITED-$?; sleep 60"
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1]),
                        "-c", str(project), command], check=True, env={**clean_env(), **(env or {})})
        wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the pid file")
        self.pid = int(pid_file.read_text())

    @property
    def tmux(self) -> list[str]:
        return ["tmux", "-L", self.socket]

    def screen(self, *, attributes: bool = False) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-t", self.name, "-p", *(["-e"] if attributes else [])],
                              capture_output=True, text=True).stdout

    def lines(self) -> list[str]:
        return self.screen().splitlines()

    def wait(self, pattern: str, timeout: float = 30) -> str:
        found: list[str] = []

        def seen() -> bool:
            screen = self.screen()
            found[:] = [screen]
            return re.search(pattern, screen) is not None

        try:
            wait_for(seen, timeout=timeout, what=pattern, interval=0.05)
        except AssertionError:
            raise AssertionError(f"{pattern!r} never appeared on screen:\n{found[0] if found else ''}") from None
        return found[0]

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True)

    def title(self) -> str:
        return subprocess.run([*self.tmux, "display-message", "-t", self.name, "-p", "#{pane_title}"],
                              capture_output=True, text=True).stdout.strip()

    def kill(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaped yet counts: it runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


@pytest.fixture
def pane_for(tmp_path):
    panes: list[Pane] = []

    def start(project: Path, size: tuple[int, int], env: dict[str, str] | None = None) -> Pane:
        pane = Pane(project, tmp_path / f"pid{len(panes)}", size, env)
        panes.append(pane)
        return pane

    yield start
    for pane in panes:
        pane.kill()
        if not gone(pane.pid):
            os.kill(pane.pid, signal.SIGKILL)


@pytest.fixture
def planted(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    store = SessionStore(project)
    return project, store, three_out_of_order(store)


def row_of(lines: list[str], prompt: str) -> int:
    matches = [i for i, line in enumerate(lines) if f'"{prompt[:20]}' in line]  # cut with … at 60 columns
    assert len(matches) == 1, "\n".join(lines)
    return matches[0]


@pytest.mark.parametrize("size", SIZES + [(60, 15)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_rows_in_update_order_filter_home_end_and_esc_cancels(planted, pane_for, size):
    project, store, (readme, parser, upload) = planted
    pane = pane_for(project, size)
    pane.wait(r'"fix the flaky upload')
    lines = pane.lines()
    order = [row_of(lines, s.prompt) for s in (readme, parser, upload)]
    assert order == sorted(order), "\n".join(lines)  # newest update first, not creation order
    for s in (readme, parser, upload):
        row = lines[row_of(lines, s.prompt)]
        assert format_updated(s.updated_ms) in row and format_updated(s.created_ms) not in row
        assert "「" not in row
    assert lines[order[0]].startswith("> ")  # the highlight
    assert re.search(r"\s6\s+6\.2k\s", lines[order[0]])  # 3 exchanges: 6 messages, 6,150 tokens
    if size[0] >= 72:
        assert "feature/par" in lines[order[1]]  # cut to its column; the preview names it whole
    assert "branch docs" in pane.screen()
    assert "Shortened it to four lines." in pane.screen()  # the preview of the highlighted session
    assert "> now shorten the install part" in pane.screen()

    pane.keys("End")
    pane.wait(r'> \S.*"fix the flaky upload')
    pane.keys("Home")
    pane.wait(r'> \S.*"add a README section"')
    pane.keys("parser", literal=True)
    screen = pane.wait(r"1 of 3 sessions")
    assert '"refactor the parser"' in screen and '"add a README section"' not in screen
    pane.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")
    pane.wait(r"3 sessions")
    pane.keys("Escape")
    screen = pane.wait(r"EXITED-\d+")
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-2:] == ["No session chosen; nothing was resumed.", "EXITED-0"], screen
    assert "Resume a session" not in screen and "refactor the parser" not in screen  # the picker erased itself


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_enter_resumes_the_highlighted_session(planted, pane_for, size):
    project, store, (readme, parser, upload) = planted
    pane = pane_for(project, size)
    pane.wait(r'"fix the flaky upload')
    pane.keys("Down")
    pane.wait(r'> \S.*"refactor the parser"')
    pane.keys("Enter")
    pane.wait(r"messages restored")

    def resumed_from() -> set[str]:
        sources = set()
        for path in store.sessions_dir.glob("*/messages.jsonl"):
            for line in path.read_text().splitlines()[:2]:
                record = json.loads(line)
                if record.get("type") == "resume_marker":
                    sources.add(record["from_session_id"])
        return sources

    wait_for(lambda: resumed_from() == {parser.id}, what="a new session resumed from the chosen one")
    assert "Resume a session" not in pane.screen()


def test_a_title_sequence_in_a_first_prompt_does_not_retitle_the_terminal(tmp_path, pane_for):
    project = tmp_path / "proj"
    project.mkdir()
    store = SessionStore(project)
    plant(store, created_ms=BASE_MS, updated_ms=BASE_MS + DAY_MS, prompt="retitle \x1b]0;PWNED\x07 now",
          answer="and \x1b]0;PWNED-TOO\x07 here")
    pane = pane_for(project, (80, 24))
    screen = pane.wait(r'"retitle \^\[\]0;PWNED\^G now"')
    assert "and ^[]0;PWNED-TOO^G here" in screen  # the preview too
    assert "PWNED" not in pane.title()
    pane.keys("Escape")
    pane.wait(r"EXITED-0")
    assert "PWNED" not in pane.title()


def test_killing_the_terminal_ends_the_picker(planted, pane_for):
    project, _, _ = planted
    pane = pane_for(project, (80, 24))
    pane.wait(r'"fix the flaky upload')
    pane.kill()  # the window and its pty are gone: SIGHUP, then EIO
    wait_for(lambda: gone(pane.pid), timeout=10, what="evo-agent to exit after its terminal went away")


def test_sighup_ends_the_picker_with_129_and_one_line(planted, pane_for):
    project, _, _ = planted
    pane = pane_for(project, (80, 24))
    pane.wait(r'"fix the flaky upload')
    os.kill(pane.pid, signal.SIGHUP)
    screen = pane.wait(r"EXITED-\d+")
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-2:] == ["evo-agent: the terminal went away", "EXITED-129"], screen
    assert "Traceback" not in screen


def test_reads_failing_with_eio_end_the_picker_without_a_sighup(planted):
    """A terminal that vanishes without a SIGHUP reaching the process (it is not the controlling
    terminal here) leaves reads failing with EIO: the picker ends instead of spinning on them."""
    project, _, _ = planted
    master, slave = pty.openpty()
    proc = subprocess.Popen([EVO, "--resume"], cwd=project, stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                            env=clean_env(), start_new_session=True)  # no controlling terminal: no SIGHUP
    os.close(slave)
    try:
        seen = b""

        def drawn() -> bool:
            nonlocal seen
            while select.select([master], [], [], 0)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    return False
            return b"fix the flaky upload test" in seen

        wait_for(drawn, timeout=30, what="the picker to draw")
        os.close(master)
        master = -1
        assert proc.wait(timeout=10) == 129
        assert proc.stderr.read().decode().strip().splitlines()[-1] == "evo-agent: the terminal went away"
    finally:
        if master >= 0:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("no_color", [False, True], ids=["colours", "NO_COLOR"])
def test_the_picker_paints_in_the_terminals_own_colours(planted, pane_for, no_color):
    project, _, _ = planted
    pane = pane_for(project, (80, 24), {"NO_COLOR": "1"} if no_color else {"COLORTERM": "truecolor"})
    pane.wait(r'"fix the flaky upload')
    screen = pane.screen(attributes=True)
    params = [p for sgr in re.findall(r"\x1b\[([\d;]*)m", screen) for p in sgr.split(";") if p]
    assert "7" in params  # the highlight: reverse video, which needs no colour
    colours = [p for p in params if p not in ("0", "1", "2", "3", "4", "7", "22", "23", "24", "27", "39", "49")]
    assert colours == [], screen  # no foreground or background colour of its own, only the defaults
    pane.keys("Escape")
    pane.wait(r"EXITED-0")


def test_typing_finds_a_session_by_what_was_said_in_it(planted, pane_for):
    project, store, (readme, parser, upload) = planted
    deep = plant(store, created_ms=BASE_MS + 7 * DAY_MS, updated_ms=BASE_MS + 7 * DAY_MS, prompt="tidy the logs",
                 answer="The culprit was the zebra-unicorn cache.", suffix="000000a4")
    pane = pane_for(project, (80, 24))
    pane.wait(r'"fix the flaky upload')
    pane.keys("unicorn", literal=True)
    screen = pane.wait(r'> .*content: "…[a-z-]*unicorn cache\."')  # no title matches: the content match, highlighted
    assert "1 of 4 sessions (1 by content)" in screen
    assert "found in an answer: The culprit was the zebra-unicorn cache." in screen
    assert all(len(line) <= 80 for line in screen.splitlines())
    pane.keys("Enter")
    pane.wait(r"messages restored")

    def resumed_from() -> set[str]:
        return {json.loads(line)["from_session_id"] for path in store.sessions_dir.glob("*/messages.jsonl")
                for line in path.read_text().splitlines()[:2] if json.loads(line).get("type") == "resume_marker"}

    wait_for(lambda: resumed_from() == {deep.id}, what="a new session resumed from the content match")
