"""What the bash tool's safety costs per call: the reaper (parent death) and the sandbox (bubblewrap).

    .venv/bin/python benchmarks/bash_tool.py [--calls N]

Runs `true` through the real `run_bash` N times per row and prints the median and the ratio to
a plain `bash -c` (the tool before issue #15), plus the read-only classifier's cost per command.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median_time, table
from evo_agent.tools import ToolContext
from evo_agent.tools import bash as bash_tool
from evo_agent.tools import reaper as reaper_module
from evo_agent.tools.sandbox import SandboxError, check_sandbox
from evo_agent.tools.shell_readonly import read_only_reason


def _median_ms(fn, calls: int) -> float:
    return median_time(fn, calls) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    calls = parser.parse_args().calls
    project = Path(tempfile.mkdtemp(prefix="evo-bench-bash-"))
    reaper = reaper_module.reaped_call  # bash.py looks it up in the module at each call
    rows: list[tuple[str, float]] = []

    reaper_module.reaped_call = lambda argv, _project: reaper_module.ReapedCall(argv)
    rows.append(("plain bash -c (before #15)", _median_ms(lambda: bash_tool.run_bash({"command": "true"}, ToolContext(project)), calls)))
    reaper_module.reaped_call = reaper
    rows.append(("with the reaper (default)", _median_ms(lambda: bash_tool.run_bash({"command": "true"}, ToolContext(project)), calls)))
    try:
        sandbox = check_sandbox(project)
        ctx = ToolContext(project, sandbox=sandbox)
        rows.append(("reaper + --sandbox", _median_ms(lambda: bash_tool.run_bash({"command": "true"}, ctx), calls)))
    except SandboxError as exc:
        print(f"(sandbox row skipped: {exc})")
    base = rows[0][1]
    print("\n".join(table([f"bash tool, `true`, median of {calls}", "ms", "× plain"],
                          [(label, f"{ms:.1f}", f"{ms / base:.2f}") for label, ms in rows])))
    commands = ["git status", "cat README.md | wc -l", "grep -rn foo src", "rm -rf build; make"]
    per = _median_ms(lambda: [read_only_reason(c, project) for c in commands], calls * 10) / len(commands)
    print(f"\nread-only classifier: {per * 1000:.0f} µs per command")


if __name__ == "__main__":
    main()
