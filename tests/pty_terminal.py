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

from tests.cli_runner import COMMAND, Cli


def on_a_terminal(cli: Cli, *args: str, steps: list[tuple[bytes, bytes]] | tuple[tuple[bytes, bytes], ...],
                  typed: bytes = b"", every_step: bool = True, timeout: float = 40) -> tuple[int, str]:
    """Run `evo-agent ARGS` on a terminal until it exits; its exit code and everything it printed.

    `typed`: keys already in the terminal's input queue when the program starts (typed before the launch).
    `steps`: (prompt, keys) in order: once `prompt` shows after the previous step's, its `keys` are typed.
    `every_step`: each prompt must show (else an AssertionError naming it); False: the program may end
    before the later ones (a launch that refuses before its REPL starts).
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
                os.write(master, keys)
        assert not (every_step and pending), f"never saw {pending[0][0]!r} in {screen!r}"
        return proc.wait(10), screen.decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
