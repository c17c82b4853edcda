"""What a command run unasked costs now that unasked means sandboxed (issue #26).

    .venv/bin/python benchmarks/readonly_sandbox.py [--calls N]

Each row runs one auto-approved command through the real `run_bash`, N times, in a git
repository of 200 files: as the model wrote it (`bash -c COMMAND`, what ran unasked before
#26), as the checked plan without the sandbox (absolute programs, safe PATH, git's safe -c
flags: where bubblewrap cannot run), and as the plan in the read-only bubblewrap sandbox (the
default). It prints the medians and the ratios to the first column, and what planning costs
(the allowlist check, glob expansion, and for git the one `git config` read of filter drivers).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median_time, table
from evo_agent.tools import ToolContext
from evo_agent.tools import sandbox as sandbox_module
from evo_agent.tools.bash import run_bash
from evo_agent.tools.confine import real
from evo_agent.tools.shell_readonly import plan_read_only

COMMANDS = ["ls", "cat README.md | wc -l", "grep -rn needle src", "git status", "git log --oneline -5"]


def _repo(files: int) -> Path:
    project = Path(tempfile.mkdtemp(prefix="evo-bench-ro-"))
    (project / "src").mkdir()
    for i in range(files):
        (project / "src" / f"m{i}.py").write_text(f"x = {i}\n" + ("# needle\n" if i % 10 == 0 else ""))
    (project / "README.md").write_text("a readme\n" * 20)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "-c", "user.email=b@e", "-c", "user.name=bench", "commit", "-qm", "init"], cwd=project,
                   check=True)
    return project


def _ms(fn, calls: int) -> float:
    return median_time(fn, calls) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--files", type=int, default=200)
    args = parser.parse_args(argv)
    project = _repo(args.files)
    sandboxed = sandbox_module.read_only_sandbox(project)
    if sandboxed is None:
        print("(bubblewrap cannot run here: the sandboxed column is missing)")
    rows = []
    for command in COMMANDS:
        plan = plan_read_only(command, project)
        assert not isinstance(plan, str), plan
        before = _ms(lambda c=command: run_bash({"command": c}, ToolContext(project)), args.calls)
        sandbox_module._read_only[str(real(project))] = None  # the plan alone, as without bwrap
        bare = _ms(lambda c=command, p=plan: run_bash({"command": c}, ToolContext(project, read_only=p)), args.calls)
        sandbox_module._read_only[str(real(project))] = sandboxed
        boxed = (_ms(lambda c=command, p=plan: run_bash({"command": c}, ToolContext(project, read_only=p)), args.calls)
                 if sandboxed is not None else None)
        planning = median_time(lambda c=command: plan_read_only(c, project), args.calls * 5) * 1e6
        rows.append((f"`{command}`".replace("|", "\\|"), f"{before:.1f}", f"{bare:.1f} ({bare / before:.2f}×)",
                     f"{boxed:.1f} ({boxed / before:.2f}×)" if boxed is not None else "—", f"{planning:.0f}"))
    print("\n".join(table([f"auto-approved command, median of {args.calls} (ms)", "as written (before #26)",
                           "checked plan, no sandbox", "plan in the read-only sandbox", "planning (µs)"], rows,
                          align=["---", "--:", "--:", "--:", "--:"])))


if __name__ == "__main__":
    main()
