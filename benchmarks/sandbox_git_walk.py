"""What `--sandbox` adds to each approved command: the walk for every nested `.git` (before and after it).

    .venv/bin/python benchmarks/sandbox_git_walk.py [--calls N]

The writable sandbox binds every `.git` below the project read-only, and reports one a command created, so
each sandboxed bash call walks the project's directories twice (tools/sandbox.find_git_dirs: os.scandir, no
stat per file, nothing under a `.git` entered). Rows: synthetic trees of D directories holding 10 files each
(one in 100 directories a nested repository), then the bare `bwrap … true` a sandboxed call already pays.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median_time, table
from evo_agent.tools.sandbox import SandboxError, check_sandbox, find_git_dirs


def _tree(directories: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="evo-bench-gitwalk-"))
    for i in range(directories):
        d = root / f"d{i // 100}" / f"e{i % 100}"
        d.mkdir(parents=True)
        for j in range(10):
            (d / f"f{j}.txt").write_text("x\n")
        if i % 100 == 0:
            (d / ".git" / "objects").mkdir(parents=True)
    return root


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args(argv)
    rows = []
    bwrap_ms = None
    for directories in (100, 1_000, 10_000):
        root = _tree(directories)
        walk_ms = median_time(lambda root=root: find_git_dirs(root), args.calls) * 1000
        if bwrap_ms is None:
            try:
                sandbox = check_sandbox(root)
                argv = sandbox.wrap(["true"], git_dirs=[])
                bwrap_ms = median_time(lambda argv=argv: subprocess.run(argv), args.calls) * 1000
            except SandboxError:
                bwrap_ms = float("nan")
        rows.append([f"{directories:,} dirs / {directories * 10:,} files", f"{walk_ms:.2f} ms",
                     f"{2 * walk_ms:.2f} ms", f"{len(find_git_dirs(root))}"])
        subprocess.run(["rm", "-rf", str(root)], check=True)
    print("\n".join(table(["project", "one walk", "per sandboxed call (2 walks)", ".git found"], rows)))
    print(f"bwrap … true, for scale: {bwrap_ms:.1f} ms")


if __name__ == "__main__":
    main()
