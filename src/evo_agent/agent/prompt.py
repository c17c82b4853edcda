"""The system prompt: who the agent is, where it works, which tools it has.

Fixed for a whole conversation (SPEC §12): every request of a session, and the first one after
a resume, must begin with the same bytes so that the prompt cache holds. So the prompt is a pure
function of facts the transcript records — the project directory (every record's `cwd`), the
working directory and the project instructions (the `instructions` record, agent/instructions.py),
the tools (the agent version's), the operating system's name, and the day the conversation started
(the creation time in the id of its resume chain's first session, `root_session_id`, in UTC) — never
of today's date or a kernel version.

The fixed context (the project instructions' block) comes last, after the template: what a session
was given at its start, in the order the sections are passed to `build_system_prompt(context=…)`.
What changes mid-session reaches the model as a `reminder` in the next user message, never as an
edit of this text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

SYSTEM_TEMPLATE = """\
You are evo-agent, a coding agent that works in a terminal on the user's project.

Project directory: {project_dir}
Working directory: {cwd}
Platform: {platform}
Conversation started: {started} (UTC)

You act through tools. Commands run in the working directory (where the user started you, inside the
project), and relative paths are resolved against it.
Available tools:
{tools}

How to work:
- Look before you change: read the relevant files (read_file, grep, glob) before editing them.
- Prefer edit_file for small changes to existing files and write_file for new files.
- Run commands with bash (tests, builds, git status); check their exit codes.
- Keep changes focused on what was asked; do not invent files or APIs you have not seen.
- A tool result marked as an error is information: read it and adapt, do not repeat the same call blindly.
- If the user interrupted a turn ("[Request interrupted by user]"), do not resume that work unless asked.
- When you are done, answer briefly: what you found or changed, and anything the user must do next.
"""


def _system() -> str:
    """`platform.system()` without importing `platform` (~3 ms before the first request): on POSIX it is
    `os.uname().sysname`, which is all platform.system() reads there."""
    if hasattr(os, "uname"):
        return os.uname().sysname
    import platform

    return platform.system()


def started_day(created_ms: int | None) -> str:
    """The UTC day of a conversation's first session (its id's creation time), e.g. 2026-12-04."""
    if created_ms is None:
        return "unknown"
    return time.strftime("%Y-%m-%d", time.gmtime(created_ms / 1000))  # time, not datetime: start-up (issue #30)


def build_system_prompt(project_dir: Path | str, tool_specs: Iterable[dict[str, Any]], started_ms: int | None = None, *,
                        cwd: Path | str | None = None, context: Iterable[str] = ()) -> str:
    """The system prompt of a conversation started at `started_ms` (see the module docstring: no clock read here).

    `cwd`: the working directory (default: the project). `context`: the session's fixed sections (the
    project instructions' block), each appended after a blank line; empty ones are skipped.
    """
    lines = []
    for spec in tool_specs:
        description = " ".join(str(spec.get("description", "")).split())
        first = description.split(". ")[0].rstrip(".")
        lines.append(f"- {spec.get('name')}: {first}.")
    text = SYSTEM_TEMPLATE.format(
        project_dir=str(project_dir),
        cwd=str(cwd if cwd is not None else project_dir),
        platform=_system() or "unknown",
        started=started_day(started_ms),
        tools="\n".join(lines) or "- (none)",
    )
    return "".join([text, *(f"\n{section.strip()}\n" for section in context if section and section.strip())])
