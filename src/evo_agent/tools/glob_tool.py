"""The `glob` tool: list project files matching a pattern such as `src/**/*.py`.

Implemented on os.walk (not pathlib.glob) so that `.git`, `.evo-agent` and
what git ignores (ignore.py; `include_ignored` lists it too) are pruned
instead of walked and filtered, and the walk starts at the pattern's
literal prefix. Results are sorted by path, not by modification time: a stable
order keeps transcripts and the offline demo provider deterministic, and makes
the 500-result cap predictable.

Semantics: `*`, `?` and `[...]` match within one path segment (dotfiles
included); `**` as a whole segment matches zero or more directories.
Directories that match are listed with a trailing `/`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

from ._common import error, guarded
from .base import Tool, ToolContext, ToolFacts, ToolResult

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

MAX_RESULTS = 500
_MAGIC = frozenset("*?[")


def _is_magic(segment: str) -> bool:
    return any(c in _MAGIC for c in segment)


def _matcher(pattern: tuple[str, ...]) -> Callable[[tuple[str, ...]], bool]:
    """A function telling whether a tuple of path segments matches `pattern`."""

    def matches(parts: tuple[str, ...]) -> bool:
        @cache
        def m(i: int, j: int) -> bool:
            if i == len(pattern):
                return j == len(parts)
            if pattern[i] == "**":
                return any(m(i + 1, k) for k in range(j, len(parts) + 1))
            return j < len(parts) and fnmatchcase(parts[j], pattern[i]) and m(i + 1, j + 1)

        return m(0, 0)

    return matches


@guarded("glob")
def run_glob(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = tool_input.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        return error("pattern must be a non-empty string")
    expanded = os.path.expanduser(pattern.strip())
    absolute = os.path.isabs(expanded)
    segments = [s for s in expanded.split("/") if s not in ("", ".")]
    if not segments:
        return error(f"pattern {pattern!r} names no files")

    # Walk from the longest literal prefix; the rest is matched per segment.
    prefix: list[str] = []
    while len(segments) > 1 and not _is_magic(segments[0]):
        prefix.append(segments.pop(0))
    rest = tuple(segments)
    base = (Path("/") if absolute else ctx.work_dir).joinpath(*prefix)
    matches = _matcher(rest)
    max_depth = None if "**" in rest else len(rest)

    from .ignore import IgnoreRules, walk  # at the first call: not before a launch's first request (issue #30)

    include_ignored = tool_input.get("include_ignored") is True
    rules = None if include_ignored else IgnoreRules(ctx.project_dir)
    found: list[str] = []
    if base.is_dir():
        for dirpath, dirnames, filenames in walk(base, rules):
            if ctx.cancel.is_set():
                return error("interrupted")
            rel_dir = Path(dirpath).relative_to(base).parts
            for name, is_dir in [(d, True) for d in dirnames] + [(f, False) for f in filenames]:
                parts = rel_dir + (name,)
                if matches(parts):
                    shown = "/".join(prefix + list(parts))
                    if absolute:
                        shown = "/" + shown
                    found.append(shown + ("/" if is_dir else ""))
            if max_depth is not None and len(rel_dir) + 1 >= max_depth:
                dirnames[:] = []

    if not found:
        hint = "" if include_ignored else " (files git ignores are skipped; include_ignored: true searches them)"
        return ToolResult(f"No files match {pattern}{hint}")
    found.sort()
    text = "\n".join(found[:MAX_RESULTS])
    if len(found) > MAX_RESULTS:
        text += f"\n[showing the first {MAX_RESULTS} of {len(found)} matches; use a narrower pattern]"
    return ToolResult(text)


def search_root(tool_input: dict[str, Any]) -> str:
    """The literal directory a pattern starts from (what the permission gate judges): `src` for `src/**/*.py`;
    "/" for a pattern that climbs out (`..`) after a wildcard, so it is judged as outside the project."""
    pattern = str(tool_input.get("pattern") or "")
    segments = os.path.expanduser(pattern.strip()).split("/")
    prefix: list[str] = []
    for i, seg in enumerate(segments):
        if any(c in seg for c in "*?["):
            if ".." in segments[i:]:
                return "/"
            break
        prefix.append(seg)
    joined = "/".join(prefix)
    return joined if joined else ("/" if pattern.startswith("/") else ".")


FACTS = ToolFacts("glob", kind="read", approval="read", label_arg="pattern", path_of=search_root)

GLOB_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Find files by glob pattern relative to the working directory, e.g. `**/*.py` or "
        "`src/*/test_*.py`. `**` matches any number of directories. Skips what git ignores "
        "(.gitignore, .git/info/exclude) unless include_ignored is true, and always .git and "
        ".evo-agent. Results are sorted by path, at most 500."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern."},
            "include_ignored": {"type": "boolean",
                                "description": "Also list files .gitignore excludes (default false)."},
        },
        "required": ["pattern"],
    },
    run=run_glob,
)
