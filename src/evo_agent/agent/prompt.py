"""The system prompt: who the agent is, where it works, which tools it has.

The system prompt is not part of the transcript (it is rebuilt per process),
so it may mention the date and the platform without hurting resume fidelity.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from datetime import date
from pathlib import Path

SYSTEM_TEMPLATE = """\
You are evo-agent, a coding agent that works in a terminal on the user's project.

Project directory: {project_dir}
Platform: {platform}
Today: {today}

You act through tools; relative paths are resolved against the project directory.
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


def build_system_prompt(project_dir: Path | str, tool_specs: Iterable[dict]) -> str:
    lines = []
    for spec in tool_specs:
        description = " ".join(str(spec.get("description", "")).split())
        first = description.split(". ")[0].rstrip(".")
        lines.append(f"- {spec.get('name')}: {first}.")
    return SYSTEM_TEMPLATE.format(
        project_dir=str(project_dir),
        platform=f"{platform.system()} {platform.release()}".strip(),
        today=date.today().isoformat(),
        tools="\n".join(lines) or "- (none)",
    )
