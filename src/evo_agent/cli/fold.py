"""A launch question's text folded to the terminal's width between words, each folded line indented.

The questions asked before the app starts (the trust question, "resume anyway?") are printed as plain lines
and read with `input()`. Printed as they are, the terminal cut them wherever the screen ended: in the middle
of `somewhere` or of `${GITHUB_TOKEN}`, the next piece at column 0 under the indented list it belonged to, so
the rules and servers a person is asked to judge read as a wall of text. Claude Code's and Codex's questions
wrap between words. Nothing is dropped: a fold replaces one space (a run of spaces stays, as written), and a
word wider than the line is cut where the line ends and goes on, indented, on the next. Stdlib only: the
question comes before anything heavy is imported.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["cells", "fold"]

HANG = 2  # a folded line is indented this much further than the line it belongs to
_WORD = re.compile(r"(?:[^ ]| {2,})+")  # a word: anything but a single space (a run of spaces is kept in it)


def cells(text: str) -> int:
    """The terminal cells `text` takes: two for a wide (CJK, emoji) character, none for a combining mark."""
    total = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def _cut(word: str, room: int) -> tuple[str, str]:
    """The longest start of `word` that takes at most `room` cells (at least one character), and the rest."""
    used = 0
    for i, char in enumerate(word):
        used += cells(char)
        if used > room and i:
            return word[:i], word[i:]
    return word, ""


def _fold_line(line: str, width: int) -> list[str]:
    indent = " " * min(len(line) - len(line.lstrip(" ")), width // 2)
    hang = indent + " " * HANG
    out: list[str] = []
    current, used, words = indent, len(indent), 0
    for match in _WORD.finditer(line, len(indent)):
        word, size = match.group(), cells(match.group())
        if words and used + 1 + size > width:  # the word starts the next line, in place of the space
            out.append(current)
            current, used, words = hang, len(hang), 0
        elif words:
            current, used = current + " ", used + 1
        while used + size > width:  # wider than a whole line: cut where the line ends, go on below
            piece, word = _cut(word, max(width - used, 1))
            out.append(current + piece)
            current, used, size = hang, len(hang), cells(word)
        current, used, words = current + word, used + size, words + 1
    out.append(current)
    return out


def fold(text: str, width: int | None) -> str:
    """`text` with each line longer than `width` cells folded between words (None or a tiny width: as it is).

    A trailing space (a question's `[y/N] `, where the answer is typed) is kept."""
    if width is None or width < 20:
        return text
    tail = text[len(text.rstrip(" ")):]
    # The question's last words and its answers stay on one line (`resume anyway? [y/N]`, not `resume` / `anyway?`).
    glued = _ASKED.sub(lambda m: m.group().replace(" ", _GLUE) if cells(m.group()) <= width - 2 * HANG else m.group(),
                       text.rstrip(" "))
    lines = glued.split("\n")
    folded = [piece for line in lines for piece in (_fold_line(line, width) if cells(line) > width else [line])]
    return "\n".join(folded).replace(_GLUE, " ") + tail


_GLUE = "\ue000"  # a space that does not fold (a private-use character: never in the text shown)
_ASKED = re.compile(r"\S+ \S+\? \[[^\]\n]*\]$")
