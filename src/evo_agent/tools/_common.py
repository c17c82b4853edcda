"""Helpers shared by the file tools: path resolution, binary sniffing, safe wrapping.

Kept in one place so every tool resolves paths the same way (relative to the
project, never to the agent's own working directory) and fails the same way
(an `is_error` result, never an exception that would end the agent loop).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from evo_agent.session import PROJECT_DIR_NAME

from .base import ToolContext, ToolResult

# Directories no search tool descends into: git internals and the agent's own
# session store are noise for the model and can be large.
SKIP_DIRS = frozenset({".git", PROJECT_DIR_NAME})

# How many leading bytes are inspected to decide whether a file is binary.
_SNIFF_BYTES = 8192

RunFn = Callable[[dict, ToolContext], ToolResult]


def error(message: str) -> ToolResult:
    """An error result whose text is a single line, as the model sees it."""
    return ToolResult(" ".join(message.split()) or "error", is_error=True)


def guarded(tool_name: str) -> Callable[[RunFn], RunFn]:
    """Turn any unexpected exception from a tool into an `is_error` result.

    A failing tool must never end the agent loop, so even a bug in a tool
    surfaces to the model as a one-line error it can react to.
    KeyboardInterrupt/SystemExit still propagate: they mean the user wants out.
    """

    def wrap(fn: RunFn) -> RunFn:
        @functools.wraps(fn)
        def run(tool_input: dict, ctx: ToolContext) -> ToolResult:
            try:
                return fn(tool_input, ctx)
            except Exception as exc:  # noqa: BLE001 - the whole point
                return error(f"{tool_name} failed: {type(exc).__name__}: {exc}")

        return run

    return wrap


def resolve_path(ctx: ToolContext, path: str) -> Path:
    """Resolve a model-given path: `~` expanded, relative paths under the project."""
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = Path(ctx.project_dir) / p
    return p


def display_path(ctx: ToolContext, path: Path) -> str:
    """The path as shown to the model: project-relative when inside the project."""
    try:
        return path.relative_to(ctx.project_dir).as_posix() or "."
    except ValueError:
        return str(path)


def is_binary_file(path: Path) -> bool:
    """Heuristic used by git and grep: a NUL byte near the start means binary."""
    with open(path, "rb") as f:
        return b"\0" in f.read(_SNIFF_BYTES)


def walk_files(root: Path) -> Iterator[Path]:
    """Every regular file under `root` in name order, skipping SKIP_DIRS.

    Sorted so results (and therefore transcripts and the demo provider) are
    deterministic; symlinked directories are not followed, to avoid loops.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.is_file():
                yield p
