#!/usr/bin/env python3
"""Reading the git branch at session start: HEAD read from disk vs spawning git (SPEC §2 `git_branch`).

    python benchmarks/git_branch.py [--repeat N]

Prints a table: median microseconds per call of `git_branch_of` (reads `.git/HEAD`,
following a worktree's `gitdir:` file) and of `git_branch_by_spawning` (`git symbolic-ref`,
the old way's cost: one process), in a fresh repository, a linked worktree and a
subdirectory, and the ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median_time
from evo_agent.session.project import git_branch_by_spawning, git_branch_of


def _median_us(fn, arg, repeat: int) -> float:
    return median_time(lambda: fn(arg), repeat) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
        subprocess.run([*git, "worktree", "add", "-q", "-b", "feature", str(Path(tmp) / "wt")], check=True)
        deep = repo / "a" / "b" / "c"
        deep.mkdir(parents=True)
        cases = [("repository root", repo), ("linked worktree", Path(tmp) / "wt"), ("3 levels down", deep)]
        print(f"{'where':<18} {'read HEAD (µs)':>15} {'spawn git (µs)':>15} {'ratio':>8}")
        for name, where in cases:
            assert git_branch_of(where) == git_branch_by_spawning(where), name
            read = _median_us(git_branch_of, where, args.repeat)
            spawn = _median_us(git_branch_by_spawning, where, max(5, args.repeat // 5))
            print(f"{name:<18} {read:>15.1f} {spawn:>15.1f} {spawn / read:>7.0f}×")


if __name__ == "__main__":
    main()
