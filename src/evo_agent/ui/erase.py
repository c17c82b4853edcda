"""Erasing the live region without the terminal saving it: `\\x1b[J` at the screen's home position is a clear.

prompt_toolkit erases its region (to draw it again, or to print above it) by going to its first row and
sending `\\x1b[J` (erase to the end of the screen). When that row is the top of the screen (after Ctrl+L, after
the terminal narrowed under a tall region, or when the region fills the screen), tmux takes the erase for a
`clear` and scrolls the whole screen into the scrollback first (its `scroll-on-clear`): a copy of the prompt
box, its rules and the status line stayed in the scrollback above what was printed next. `erase_down_in_place`
erases the same cells with an erase of the line and an erase from the line below, never from the home.
"""

from __future__ import annotations

from prompt_toolkit.output import Output
from prompt_toolkit.output.vt100 import Vt100_Output

__all__ = ["ERASE_DOWN", "erase_down_in_place"]

# Every prompt_toolkit call of erase_down is at column 0 (renderer.py: after moving to x=0): erase this line, then
# from the start of the next one to the end of the screen (at the bottom row the cursor cannot go down, and the
# erase of that row again is harmless), and come back (DECSC/DECRC: the position, as VT100 has it).
ERASE_DOWN = "\x1b7\x1b[2K\x1b[B\x1b[J\x1b8"


def erase_down_in_place(output: Output) -> None:
    """Make `output`'s erase_down the one above (a VT100 output; another kind is left as it is)."""
    if isinstance(output, Vt100_Output):
        output.erase_down = lambda: output.write_raw(ERASE_DOWN)  # type: ignore[method-assign]
