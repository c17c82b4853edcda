"""The CLI on a pseudo-terminal (stdin, stdout and stderr), driven by what it prints: for the questions the
line front ends ask on a terminal (trust, foreign sessions) and the keys typed before a launch.

Used by tests/cli/test_trust.py, tests/security/ and tests/sync/test_authors.py. The app's screen (what a
person sees at 80×24) is tests/tmux_terminal.py's.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import termios
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli_runner import COMMAND, Cli


def on_a_terminal(cli: Cli, *args: str, steps: list[tuple[bytes, bytes]] | tuple[tuple[bytes, bytes], ...],
                  typed: bytes = b"", every_step: bool = True, timeout: float = 40,
                  before_keys: Callable[[int], None] | None = None) -> tuple[int, str]:
    """Run `evo-agent ARGS` on a terminal until it exits; its exit code and everything it printed.

    `typed`: keys already in the terminal's input queue when the program starts (typed before the launch).
    `steps`: (prompt, keys) in order: once `prompt` shows after the previous step's, its `keys` are typed.
    `every_step`: each prompt must show (else an AssertionError naming it); False: the program may end
    before the later ones (a launch that refuses before its REPL starts).
    `before_keys(pid)`: called before each step's keys are typed (`waiting`: until it waits for input).
    """
    master, slave = pty.openpty()
    if typed:
        os.write(master, typed)  # in the queue when anything reads it

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([*COMMAND, *args], cwd=cli.project, env=cli.env, stdin=slave, stdout=slave,
                            stderr=slave, preexec_fn=controlling_terminal)
    os.close(slave)
    screen = b""
    seen = 0  # where the next step's prompt is looked for: a prompt shown twice answers two steps
    pending = list(steps)
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None or select.select([master], [], [], 0)[0]:
            assert time.monotonic() < deadline, f"still running; waiting for {pending[:1]!r} in {screen!r}"
            if select.select([master], [], [], 0.05)[0]:
                try:
                    screen += os.read(master, 65536)
                except OSError:  # the program ended: its side of the terminal is closed
                    break
            if pending and pending[0][0] in screen[seen:]:
                prompt, keys = pending.pop(0)
                seen = screen.index(prompt, seen) + len(prompt)
                if keys and before_keys is not None:
                    before_keys(proc.pid)
                os.write(master, keys)
        assert not (every_step and pending), f"never saw {pending[0][0]!r} in {screen!r}"
        return proc.wait(10), screen.decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def waiting(pid: int, timeout: float = 20.0) -> None:
    """Wait until the program is alone in its terminal's session and its main thread is blocked waiting
    (Linux: /proc): for input at the prompt (`select`), for a turn's worker (a futex).

    A terminal's Ctrl+C goes to its foreground group: to a tool's process too while it is forked but has not
    yet left for a session of its own. And CPython's readline only looks at a signal that interrupts its
    `select`: a Ctrl+C that lands while it still echoes the last key is seen at the next key. A person's Ctrl+C
    never comes that soon; a test's, sent as soon as the screen shows something, can.
    """
    wchan = Path(f"/proc/{pid}/wchan")
    deadline = time.monotonic() + timeout
    while not (wchan.read_text().startswith(("poll_schedule_timeout", "do_select", "core_sys_select", "futex"))
               and _session_members(pid) == [pid]):
        assert time.monotonic() < deadline, f"{pid} never waited alone (wchan {wchan.read_text()!r})"
        time.sleep(0.01)


def _session_members(sid: int) -> list[int]:
    """The processes in session `sid` (field 6 of /proc/PID/stat, after the parenthesised name)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[3]) == sid:
            members.append(int(stat.parent.name))
    return members
