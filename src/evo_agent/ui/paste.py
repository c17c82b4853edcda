"""A paste collected in pieces: prompt_toolkit's own input parser made a 10 MB paste freeze the app.

prompt_toolkit reads the terminal 1 KB at a time and, inside a bracketed paste, appends each read to the
whole paste so far and searches all of it for the end mark again: quadratic, about 70 s of a frozen app
for a 10 MB paste (a log, a dump) before the first key after it was seen. `PasteParser` keeps the reads
in a list and looks for the end mark only in what is new (and the few characters before it), so a paste
costs its length once; outside a paste it is prompt_toolkit's parser unchanged.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

__all__ = ["PasteParser", "collect_pastes_in_pieces"]

_END = "\x1b[201~"


class PasteParser(Vt100Parser):
    """Vt100Parser whose paste is a list of reads; `_paste_buffer` holds only the last few characters, where
    an end mark split between two reads begins."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pieces: list[str] = []  # empty outside a paste: prompt_toolkit enters one with _paste_buffer ""

    def feed(self, data: str) -> None:
        if not self._in_bracketed_paste:
            super().feed(data)
            return
        window = self._paste_buffer + data
        at = window.find(_END)
        if at < 0:
            split = max(len(window) - (len(_END) - 1), 0)
            self._pieces.append(window[:split])
            self._paste_buffer = window[split:]
            return
        content = "".join(self._pieces) + window[:at]
        self._pieces, self._paste_buffer, self._in_bracketed_paste = [], "", False
        self.feed_key_callback(KeyPress(Keys.BracketedPaste, content))
        self.feed(window[at + len(_END):])


def collect_pastes_in_pieces(app_input: Any) -> None:
    """Give a prompt_toolkit Vt100Input the PasteParser (any other input, e.g. a test's pipe, is left as is)."""
    parser = getattr(app_input, "vt100_parser", None)
    if type(parser) is Vt100Parser:
        app_input.vt100_parser = PasteParser(parser.feed_key_callback)
