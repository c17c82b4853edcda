"""Bash words as bash sees them, for the permission checks (issue #26).

`split_words(command)` cuts a command line into `Word`s and operators the way bash's tokenizer
does for the subset the checks accept: single and double quotes (inside which nothing expands,
since `$`, backticks and `\\` are refused before), blanks, and the operator characters
`| & ; ( ) < >`. A `Word` remembers which of its parts were quoted, so a glob character counts
only where bash would expand it (`'*.py'` is a literal, `*.py` a pattern).

`expand(word, root)` is the word after bash's pathname expansion, done here instead of by bash:
matches sorted, dot files only for a pattern that starts with a dot (bash's default), the
pattern itself when nothing matches (bash without nullglob). The checks then run the expansion,
never the pattern, so what was checked is what runs.

`protected_dir(command, root)` names `.git` or `.evo-agent` when some word of some command
(an option's value included) may be a path inside one of them: resolved (`..`, symlinks) from
the project, and each path segment compared as bash would match it (`.evo-agen?` is `.evo-agent`).
"""

from __future__ import annotations

import fnmatch
import glob
import os
from dataclasses import dataclass
from pathlib import Path

from .confine import AGENT_DIR, SENSITIVE_DIRS, is_within, real

OPERATOR_CHARS = frozenset("|&;()<>\n")
BLANKS = frozenset(" \t")
GLOB_CHARS = frozenset("*?[")
PROTECTED_DIRS = (AGENT_DIR, *SENSITIVE_DIRS)


class ShellSyntaxError(ValueError):
    """The command cannot be cut into words (an unbalanced quote)."""


@dataclass(frozen=True)
class Word:
    parts: tuple[tuple[str, bool], ...]  # (text, quoted)

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.parts)

    @property
    def is_pattern(self) -> bool:
        """Whether bash would expand it as a pathname pattern (an unquoted `*`, `?` or `[`)."""
        return any(not quoted and GLOB_CHARS & set(text) for text, quoted in self.parts)

    def starts_unquoted(self, chars: str) -> bool:
        """Whether the word's first character is one of `chars`, unquoted (`~`, `#`: bash reads them)."""
        for text, quoted in self.parts:
            if text:
                return not quoted and text[0] in chars
        return False

    def glob_pattern(self) -> str:
        """The pattern with its quoted parts escaped, as Python's glob reads it."""
        return "".join(glob.escape(text) if quoted else text for text, quoted in self.parts)


def split_words(command: str) -> list[Word | str]:
    """Words and operator strings (`|`, `&&`, `;`, `>`...), in order; ShellSyntaxError on an open quote."""
    out: list[Word | str] = []
    parts: list[tuple[str, bool]] = []
    current: list[str] = []
    in_word = False
    i, n = 0, len(command)

    def flush_part(quoted: bool = False) -> None:
        if current:
            parts.append(("".join(current), quoted))
            current.clear()

    while i < n:
        char = command[i]
        if char in "'\"":
            end = command.find(char, i + 1)
            if end < 0:
                raise ShellSyntaxError(f"no closing quote ({char})")
            flush_part()
            parts.append((command[i + 1:end], True))
            in_word = True
            i = end + 1
            continue
        if char in BLANKS or char in OPERATOR_CHARS:
            flush_part()
            if in_word:
                out.append(Word(tuple(parts)))
                parts = []
                in_word = False
            if char in OPERATOR_CHARS:
                j = i
                while j < n and command[j] in OPERATOR_CHARS and command[j] != "\n":
                    j += 1
                out.append(command[i:max(j, i + 1)])
                i = max(j, i + 1)
            else:
                i += 1
            continue
        current.append(char)
        in_word = True
        i += 1
    flush_part()
    if in_word:
        out.append(Word(tuple(parts)))
    return out


def expand(word: Word, root: Path | str) -> tuple[list[str], bool]:
    """(the words bash would pass for `word`, whether they are pathname matches) — see the module docstring."""
    if not word.is_pattern:
        return [word.text], False
    pattern = word.glob_pattern()
    try:
        matches = sorted(glob.glob(pattern, root_dir=root))
    except (OSError, ValueError):
        matches = []
    if not matches:
        return [word.text], False
    return matches, True


def _segment_may_be(segment: str, name: str, is_pattern: bool) -> bool:
    if not is_pattern or not GLOB_CHARS & set(segment):
        return segment == name
    if name.startswith(".") and not segment.startswith("."):
        return False  # bash's `*` never matches a leading dot
    return fnmatch.fnmatchcase(name, segment)


def protected_dir(command: str, root: Path | str, cwd: Path | str | None = None) -> str | None:
    """`.git` or `.evo-agent` when a word of `command` may be a path inside it (see the module docstring).

    `cwd`: where the command runs (the start directory; default `root`), what its relative paths mean."""
    try:
        tokens = split_words(command)
    except ShellSyntaxError:
        tokens = [Word(((w, False),)) for w in command.replace("'", " ").replace('"', " ").split()]
    project = real(root)
    base = real(cwd) if cwd is not None else project
    for token in tokens:
        if isinstance(token, str):
            continue
        for candidate in _path_candidates(token.text):
            found = _protected_candidate(candidate, token.is_pattern, project, base)
            if found:
                return found
    return None


def _path_candidates(text: str) -> list[str]:
    """The word, and what follows `=` or a short option's letter (`--output=.git/x`, `-o.git/x`)."""
    out = [text]
    if text.startswith("-"):
        out.append(text.partition("=")[2])
        out.append(text[2:])
    elif "=" in text:
        out.append(text.partition("=")[2])
    return [c for c in out if c]


def _protected_candidate(candidate: str, is_pattern: bool, project: Path, base: Path) -> str | None:
    segments = [s for s in candidate.split("/") if s]
    for name in PROTECTED_DIRS:
        if any(_segment_may_be(s, name, is_pattern) for s in segments):
            return name
    if "$" in candidate or "`" in candidate:
        return None
    paths = [candidate]
    if is_pattern:
        try:
            paths += glob.glob(candidate, root_dir=base)
        except (OSError, ValueError):
            pass
    for path in paths:
        full = real(os.path.join(base, os.path.expanduser(path)))
        for name in PROTECTED_DIRS:
            if is_within(full, project / name):
                return name
    return None


__all__ = ["ShellSyntaxError", "Word", "expand", "protected_dir", "split_words"]
