"""Streamed Markdown cut into whole blocks that can be printed for good while the rest still arrives.

The app prints finished output into the terminal's scrollback and keeps only the unfinished tail of
an answer in its small live region. What is finished is what markdown-it says: the answer's unprinted
text is parsed (the answer's own parser, `ui/answer.py`), and every top-level block before the last
one is complete, since another block has begun after it. The last block stays live however long it
grows (the live region shows its end), so a list keeps one numbering and one width, and a code block
with a fence inside a longer fence is one block. Only complete lines decide: a half-received line
(`2` that becomes `2. b`) never ends a list early.

Printed separately, two pieces would lose the blank line Rich puts between blocks: each `Piece` says
whether one goes before it, so the pieces of an answer look exactly like the whole answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["MarkdownStream", "Piece", "top_level_blocks"]


@dataclass(frozen=True)
class Piece:
    """Whole Markdown blocks to print; `gap_before`: a blank line goes between it and what came before."""

    text: str
    gap_before: bool = False


def top_level_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, token type) of each top-level block markdown-it finds in `text`, in order."""
    from .answer import _PARSER  # the answer's own parser (imported at the first answer, not at start-up)

    tokens: list[Any] = _PARSER.parse(text)
    return [(t.map[0], t.type) for t in tokens if t.level == 0 and t.nesting >= 0 and t.map is not None
            and not t.type.endswith("_close")]


_OPEN_WITH_A_BLANK = frozenset({"bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"})


class MarkdownStream:
    """Feed fragments; get back the `Piece`s that are finished; `tail` is what stays live."""

    def __init__(self) -> None:
        self._pending = ""   # text not printed yet: it starts at the first line of a block
        self._parsed_lines = 0   # complete lines of `_pending` when it was last parsed
        self._printed_any = False
        self._last_type = ""   # the type of the last block printed (a rule takes no blank line after it)

    @property
    def tail(self) -> str:
        """The unprinted text, as the live region shows it."""
        return self._pending

    @property
    def empty(self) -> bool:
        return not self._pending

    def feed(self, fragment: str) -> list[Piece]:
        self._pending += fragment
        complete = self._pending[: self._pending.rfind("\n") + 1]
        lines = complete.count("\n")
        if lines == self._parsed_lines:  # no new complete line: nothing can have finished
            return []
        first_new, self._parsed_lines = self._parsed_lines, lines
        if _inside_fence(complete, first_new, complete.split("\n")[first_new:lines]):
            return []
        blocks = top_level_blocks(complete)
        if len(blocks) < 2:
            return []
        last_start = blocks[-1][0]
        cut = _offset_of_line(complete, last_start)
        piece = self._piece(complete[:cut], blocks[0][1], blocks[-2][1])
        self._pending = self._pending[cut:]
        self._parsed_lines = lines - last_start
        return [piece]

    def finish(self) -> list[Piece]:
        """Everything left, as one last piece."""
        text, self._pending, self._parsed_lines = self._pending, "", 0
        blocks = top_level_blocks(text) if text.strip() else []
        pieces = [self._piece(text, blocks[0][1] if blocks else "", "")] if text.strip() else []
        self._printed_any = False  # what follows (a tool call, then more text) starts afresh
        return pieces

    def _piece(self, text: str, first_type: str, last_type: str) -> Piece:
        # Rich's own spacing: a rule ends with a blank line; a list, a quote or a table begins with one.
        gap = self._printed_any and self._last_type != "hr" and first_type not in _OPEN_WITH_A_BLANK
        piece = Piece(text, gap_before=gap)
        self._printed_any, self._last_type = True, last_type
        return piece


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _inside_fence(text: str, first_new: int, new_lines: list[str]) -> bool:
    """Whether `text` is an open fenced code block that none of its new lines could close.

    Then no block can have ended, and the parse is skipped: streaming a long code block stays linear.
    Any line that might close the fence (even one indented too far) means: parse.
    """
    opener = _FENCE.match(text)
    if opener is None:
        return False
    mark = opener.group(1)
    if mark[0] == "`" and "`" in text[opener.end():].split("\n", 1)[0]:
        return False  # not an opener (a backtick in its info string): a paragraph
    closer = mark[0] * len(mark)
    candidates = new_lines[1:] if first_new == 0 else new_lines
    return not any(line.lstrip(" ").startswith(closer) for line in candidates)


def _offset_of_line(text: str, line: int) -> int:
    """The index in `text` where line number `line` (from 0) begins."""
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset
