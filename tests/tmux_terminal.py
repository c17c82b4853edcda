"""A real terminal for the app's tests: one tmux server per Terminal (`-L`), nothing leaks.

Used by tests/ui/test_tmux.py and tests/sync/test_picker_team.py (the picker's own tmux tests drive
its panes directly); EVO, the console script, by those and tests/ui/test_picker_tmux.py;
the `terminals` fixture (tests/plugins/terminals.py) closes every one a test opened.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

EVO = str(Path(sys.executable).with_name("evo-agent"))


class Terminal:
    """One tmux window running `evo-agent ARGS; echo EXITED-$?` in `project`.

    `job_control`: the window runs an interactive shell (prompt `$ `) and evo-agent is typed into it, as a
    user starts it, so Ctrl+Z can stop it and `fg` bring it back (a plain `sh -c` has no job control: its
    stopped child could never be continued, and the kernel drops a terminal stop sent to it). The shell
    echoes nothing when it ends: the test types `echo EXITED-$?` itself."""

    def __init__(self, project: Path, args: list[str], *, size=(80, 24), env: dict | None = None,
                 pid_file: Path | None = None, job_control: bool = False) -> None:
        self.socket = f"evo-{os.getpid()}-{time.monotonic_ns()}"
        self.name = "app"
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC_", "OPENAI_", "EVO_AGENT_")) and k not in ("COLUMNS", "LINES")}
        base.setdefault("EVO_AGENT_PROVIDER", "demo")
        base.update(env or {})
        base.pop("NO_COLOR", None) if "NO_COLOR" not in (env or {}) else None
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in base.items() if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        program = " ".join([shlex.quote(EVO), *map(shlex.quote, args)])
        if pid_file is not None:
            program = f"sh -c {shlex.quote(f'echo $$ > {pid_file}; exec {program}')}"
        command = f"env {exports} {program}; echo EXITED-$?; sleep 120"
        if job_control:
            command = f"env {exports} PS1='$ ' HISTFILE=/dev/null bash --norc --noprofile -i"
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1]), "-c", str(project),
                  command)
        if job_control:
            self.wait(r"(?m)^\$$")  # the shell's prompt (tmux drops its trailing blank)
            self.type(program)
            self.keys("Enter")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-t", self.name, "-p")

    def scrollback(self) -> str:
        return self.tmux("capture-pane", "-t", self.name, "-p", "-S", "-")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)

    def wait(self, pattern: str, timeout: float = 40, *, where: str = "screen") -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen() if where == "screen" else self.scrollback()
            if re.search(pattern, shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"{pattern!r} never appeared:\n{self.scrollback()}")

    def last_lines(self, n: int) -> list[str]:
        return [x for x in self.screen().splitlines() if x.strip()][-n:]

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def open_app(terminals: list[Terminal], project, *args: str, **kwargs) -> Terminal:
    """The real console script in a private tmux at the test's size, closed by the `terminals` fixture."""
    t = Terminal(project, list(args), **kwargs)
    terminals.append(t)
    return t


def ready(t: Terminal) -> None:
    """Wait until the app reads keys: its welcome drawn (`/help for help`, or `/help` on a narrow screen), then the
    status line."""
    t.wait(r"· /help")
    t.wait(r"tokens · context")
