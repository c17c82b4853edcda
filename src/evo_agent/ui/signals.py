"""SIGTERM and SIGHUP for the app (prompt_toolkit on asyncio): leave cleanly from inside its event loop; Ctrl+Z's stop.

A Python-level signal handler would raise inside the app's event loop (a
traceback, a terminal left in raw mode, or an app left running without its
terminal). The loop's own handlers run as ordinary callbacks instead, so the
app can cancel what it does and restore the terminal before it exits.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from typing import Any

from evo_agent.exit_codes import EXIT_HANGUP, EXIT_TERMINATED

# The signals that end the app, and the exit code each ends it with (their one home: exit_codes.py).
SIGNAL_EXITS: dict[int, int] = {signal.SIGTERM: EXIT_TERMINATED, signal.SIGHUP: EXIT_HANGUP}
EXIT_SIGNALS = tuple(SIGNAL_EXITS)


class SignalExit(Exception):
    """An app ended by SIGTERM or SIGHUP; `exit_code` is the signal's (SIGNAL_EXITS; cli/errors.py reads it)."""

    def __init__(self, exit_code: int) -> None:
        super().__init__("terminated" if exit_code == EXIT_TERMINATED else "the terminal went away")
        self.exit_code = exit_code


def exit_on_signals(leave: Callable[[int], None]) -> None:
    """Call `leave(exit code)` in the running event loop when SIGTERM or SIGHUP arrives (SIGNAL_EXITS)."""
    try:
        loop = asyncio.get_running_loop()
        for signum in EXIT_SIGNALS:
            loop.add_signal_handler(signum, leave, SIGNAL_EXITS[signum])
    except (NotImplementedError, RuntimeError, ValueError):
        pass  # not the main thread, or no signals here: the default handlers stay


def suspend_to_shell(app: Any) -> None:
    """Ctrl+Z: stop the prompt_toolkit `app` (its terminal put back first) until the shell's `fg` continues it.

    Only on a terminal: on a pipe (a test driving the app, a program feeding it) no shell brings it back, and the
    SIGTSTP goes to the whole process group the app shares with its caller."""
    from prompt_toolkit.utils import suspend_to_background_supported

    try:
        on_a_terminal = os.isatty(app.input.fileno())
    except (AttributeError, OSError, ValueError, NotImplementedError):
        on_a_terminal = False
    if on_a_terminal and suspend_to_background_supported():
        app.suspend_to_background()
