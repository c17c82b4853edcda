"""Keep the keys a user types while the app starts (stdlib only: it runs before anything slow is imported).

A terminal in its normal (canonical, echoing) mode shows early keys above the app and hands a typed
Enter over as a newline. `hold_keys()` switches the terminal, as soon as the command line is known
to start the app, to the mode prompt_toolkit will use: no echo, no line buffering, Enter kept as
Enter (no CR→NL translation). Keys then wait, unechoed, in the terminal's input queue until the app
reads them; Ctrl+C still interrupts. The returned function (also registered with atexit) puts the
terminal back as it was.
"""

from __future__ import annotations

import atexit
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    pass

__all__ = ["bracket_pastes", "hold_keys", "waiting_keys"]


def hold_keys(stream=None, *, signals: bool = True) -> Callable[[], None] | None:  # noqa: ANN001 - a file object
    """Switch the terminal on `stream` (stdin) to no-echo, non-canonical input; None if it is no terminal.

    `signals=False` also makes Ctrl+C a key instead of SIGINT (ui/early_input.py reads it, as the app does).
    """
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        return None
    stream = stream or sys.stdin
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, AttributeError, termios.error):
        return None
    held = list(saved)
    held[0] &= ~(termios.ICRNL | termios.IXON)                      # iflag: Enter stays \r
    held[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN)     # lflag: no echo, no line editing; ISIG kept
    if not signals:
        held[3] &= ~termios.ISIG
    held[6] = list(saved[6])
    held[6][termios.VMIN] = 1
    held[6][termios.VTIME] = 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, held)  # TCSANOW: what was typed already stays queued
    except (OSError, termios.error):
        return None
    done = False

    def restore() -> None:
        nonlocal done
        if done:
            return
        done = True
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (OSError, termios.error):
            pass

    atexit.register(restore)
    return restore


def bracket_pastes(on: bool) -> None:
    """While a question's answer is read as a line: the terminal marks a paste (`ESC [200~` … `ESC [201~`), so
    a pasted "y" reads as `ESC [200~y`, which is no answer, and its end mark queued behind it shows it came
    with more (cli/main.py `_ask`, cli/approvals.py). Without this a paste holding "y" and Enter was typing."""
    import os

    try:
        if os.isatty(1):
            os.write(1, b"\x1b[?2004h" if on else b"\x1b[?2004l")
    except OSError:
        pass


def waiting_keys(fd: int, saved: list, *, flush: bool = False, limit: int = 1 << 20) -> bytes:
    """What the terminal on `fd` already holds in its input queue (at most `limit` bytes), read without waiting
    in non-canonical mode (in line mode a half line is invisible), then the terminal put back to `saved` (its
    `tcgetattr`). `flush`: what is left past `limit` is discarded. A question reads its answer only after this."""
    import os
    import termios

    drain: list = [list(a) if isinstance(a, list) else a for a in saved]  # tcgetattr's: ints, then cc
    drain[3] &= ~(termios.ICANON | termios.ECHO)
    drain[6][termios.VMIN] = 0
    drain[6][termios.VTIME] = 0
    data = bytearray()
    try:
        termios.tcsetattr(fd, termios.TCSANOW, drain)
        while len(data) < limit and (chunk := os.read(fd, 4096)):
            data += chunk
        if flush:
            termios.tcflush(fd, termios.TCIFLUSH)
    except (OSError, termios.error):
        pass
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
        except (OSError, termios.error):
            pass
    return bytes(data)
