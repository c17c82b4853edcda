"""The `grep` tool: search file contents with a regular expression, on RE2.

RE2 (google-re2) matches in time linear in the text, as ripgrep's engine (Claude Code's Grep) does:
Python `re` backtracks, and a pattern a prompt injection chose (`(a+)+$`) froze the agent in a C loop
Ctrl+C could not interrupt. The price is ripgrep's: no lookaround, no backreferences (one clear error
line says so). Each line is matched without its line break, so `$` means the end of the line.

Files git ignores are skipped as ripgrep skips them (ignore.py) unless
`include_ignored` is true. Output is `path:lineno:line`, the format models already know from grep -rn,
so matches can be fed straight to read_file/edit_file. Binary files and the
`.git`/`.evo-agent` directories are skipped, and output is capped so one
search cannot flood the context.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ._common import bounded_lines, display_path, error, guarded, is_binary_bytes, open_regular, resolve_path
from .base import Tool, ToolContext, ToolFacts, ToolResult
from .confine import inside_project, is_within, real

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from .ignore import IgnoreRules

MAX_MATCHES = 500
MAX_OUTPUT_CHARS = 50_000
MAX_LINE_CHARS = 1000


def _files(root: Path, rules: IgnoreRules | None) -> Iterator[Path]:
    """Every regular file under `root` in name order, without what `rules` ignore (symlinked dirs not followed)."""
    from .ignore import walk

    for dirpath, _dirnames, filenames in walk(root, rules):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file():
                yield path


@guarded("grep")
def run_grep(tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
    pattern = tool_input.get("pattern")
    if not isinstance(pattern, str) or pattern == "":
        return error("pattern must be a non-empty string")
    path_arg = tool_input.get("path")
    if path_arg is not None and not isinstance(path_arg, str):
        return error("path must be a string")
    regex = _compile(pattern)
    if isinstance(regex, str):
        return error(regex)
    whole = _whole_file(pattern)

    root = resolve_path(ctx, path_arg) if path_arg else ctx.work_dir
    if not root.exists():
        return error(f"path not found: {display_path(ctx, root)}")
    if not root.is_file() and not root.is_dir():
        return error(f"{display_path(ctx, root)} is not a regular file or a directory (a FIFO, device or socket); "
                     "not searched")
    include_ignored = tool_input.get("include_ignored") is True
    from .ignore import IgnoreRules  # at the first call: not before a launch's first request (issue #30)

    files = [root] if root.is_file() else _files(root, None if include_ignored else IgnoreRules(ctx.project_dir))

    out: list[str] = []
    size = 0
    capped = False
    for file in files:
        if ctx.cancel.is_set():
            return error("interrupted")
        try:
            if _escapes(file, root, ctx):
                continue  # a symlink out of what was searched (and approved): never read through it
            raw = open_regular(file)
            if raw is None:
                continue  # a FIFO, device or socket (swapped in since the walk): an open would wait forever
            if is_binary_bytes(raw.read(8192)):
                raw.close()
                continue
            raw.seek(0)
            if whole is not None and not _may_match(whole, raw):
                raw.close()
                continue
            shown = display_path(ctx, file)
            with io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as f:
                for n, (line, _length) in enumerate(bounded_lines(f), start=1):  # (a longer line: its start)
                    if not regex.search(line):
                        continue
                    line = line.rstrip("\r")
                    if len(line) > MAX_LINE_CHARS:
                        line = line[:MAX_LINE_CHARS] + " [... line truncated]"
                    entry = f"{shown}:{n}:{line}"
                    if len(out) >= MAX_MATCHES or size + len(entry) + 1 > MAX_OUTPUT_CHARS:
                        capped = True
                        break
                    out.append(entry)
                    size += len(entry) + 1
        except OSError:
            continue  # unreadable file (permissions, vanished): not the model's problem
        if capped:
            break

    if not out:
        hint = "" if include_ignored or root.is_file() else \
            " (files git ignores are skipped; include_ignored: true searches them)"
        return ToolResult(f"No matches for {pattern}{hint}")
    text = "\n".join(out)
    if capped:
        text += (
            f"\n[stopped after {len(out)} matches (limit {MAX_MATCHES} matches / "
            f"{MAX_OUTPUT_CHARS} characters); narrow the pattern or path]"
        )
    return ToolResult(text)


# What RE2 says of a construct that needs backtracking: lookahead/lookbehind `(?=`, `(?!`, `(?<=`, `(?<!`, and a
# backreference `\1`, `(?P=name)`, `\k<name>` (RE2 reads `\1` and `\k` as unknown escapes).
_BACKTRACKING = re.compile(r"invalid perl operator: \(\?(<?[=!]|P$|P=)|invalid escape sequence: \\[1-9k]")


def _compile(pattern: str) -> Any:
    """`pattern` compiled by RE2 (UTF-8, no logging to stderr), or the one line that says why it cannot be."""
    import re2  # at the first search: not before a launch's first request (issue #30)

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        why = " ".join(why.split())
        if _BACKTRACKING.search(why):
            return (f"invalid regex {pattern!r}: lookaround and backreferences are not supported (the search is "
                    "linear-time, as ripgrep's); match the surrounding text itself, or search for a simpler "
                    "pattern and read the lines")
        if why.endswith("invalid escape sequence: \\Z"):
            why += " (RE2 spells the end of the text \\z; $ is the end of the line)"
        return f"invalid regex {pattern!r}: {why}"


# Files up to this size are first searched whole (one RE2 call instead of one per line: RE2's Python binding
# costs a few µs a call), and skipped when nothing matches.
WHOLE_FILE_BYTES = 8 << 20
# What makes a match in a line no match in the whole text (`\A`, `\z`, multiline turned off): no whole-file search.
_LINE_BOUND = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-")


def _whole_file(pattern: str) -> Any:
    """`pattern` in multiline mode for a whole file, where a line's match is a match too (`^`, `$` and `\b` mean
    the same at a line's ends); None when the pattern could tell the difference."""
    if _LINE_BOUND.search(pattern):
        return None
    compiled = _compile(f"(?m){pattern}")
    return None if isinstance(compiled, str) else compiled


def _may_match(whole: Any, raw: io.BufferedReader) -> bool:
    """Whether a line of the file (at the start of `raw`, left there) may match: False only when the whole text,
    line breaks read as the line loop reads them, has no match."""
    data = raw.read(WHOLE_FILE_BYTES + 1)
    raw.seek(0)
    if len(data) > WHOLE_FILE_BYTES:
        return True
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    return whole.search(text) is not None


def _escapes(file: Path, root: Path, ctx: ToolContext) -> bool:
    target = real(file)
    return not inside_project(ctx.project_dir, target) and not is_within(target, real(root))


def _label(tool_input: dict[str, Any]) -> str | None:
    """`"def main" in src`: the pattern quoted (its spaces stay visible), then where it searches."""
    pattern, where = tool_input.get("pattern"), tool_input.get("path")
    if not isinstance(pattern, str):
        return None
    return json.dumps(pattern, ensure_ascii=False) + (f" in {where}" if isinstance(where, str) and where else "")


FACTS = ToolFacts("grep", kind="read", approval="read", label_arg="pattern", label=_label, path_arg="path")

GREP_TOOL = Tool(
    name=FACTS.name,
    facts=FACTS,
    description=(
        "Search file contents for a regular expression (RE2 syntax, as ripgrep: no lookaround or "
        "backreferences; inline flags such as (?i) work). path is a file or directory "
        "(default: the working directory). Prints `path:line:text` for each matching line; "
        "skips binary files, what git ignores (unless include_ignored is true), .git and .evo-agent; "
        "at most 500 matches."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression (RE2 syntax)."},
            "path": {"type": "string", "description": "File or directory to search."},
            "include_ignored": {"type": "boolean",
                                "description": "Also search files .gitignore excludes (default false)."},
        },
        "required": ["pattern"],
    },
    run=run_grep,
)
