"""A regular expression compiled at its first use, not when its module is imported.

Compiling is ~0.1–3 ms a pattern, and a `-p hi` launch imported some fifty module-level patterns
before its first request, most of which it never used (SPEC §8, issue #30). A module writes
`NAME = lazy_re(r"...", flags)` where it wrote `re.compile(...)`, and calls the methods it used
(`match`, `fullmatch`, `search`, `sub`, `findall`, `finditer`); the first call compiles.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any


class LazyPattern:
    """`re.compile(pattern, flags)`, done by the first method call (two threads may both compile: harmless)."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return compiled

    @property
    def pattern(self) -> str:
        return self._pattern

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def __repr__(self) -> str:
        return f"lazy_re({self._pattern!r}, {self._flags})"


def lazy_re(pattern: str, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """`re.compile(pattern, flags)` at the first use of the result (see the module docstring)."""
    return LazyPattern(pattern, int(flags))
