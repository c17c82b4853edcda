#!/usr/bin/env python3
"""`evo-agent sessions list` at 10,000 sessions: the command from launch to exit, warm and "cold" (issue #30 item 5).

    python benchmarks/list.py                          10,000 generated sessions, 9 interleaved runs per row
    python benchmarks/list.py --baseline /work/main/src   the same rows for another source tree, interleaved
    python benchmarks/list.py --sessions 1000 --runs 3
    python benchmarks/list.py --warm-limit-only --runs 15   only the first row (the issue's target), more runs

Each row runs the console script's code (`python -c "from evo_agent.cli.entry import main; main()"`,
bytecode precompiled into a private PYTHONPYCACHEPREFIX, as an installed package has it) in a fresh process and times
launch to exit; the median wall and CPU time (user + system of the child) are shown with the range.
Rows: `sessions list --limit 20` (the first screen: `SessionStore.newest(21)`) and the whole
`sessions list` (every row printed: `list()`, through the listing index when it is fresh).

"Cold" cannot be measured as a cold boot (dropping the kernel's caches needs root). Two
approximations are measured instead: *first listing* (the listing index deleted before every run,
so the run reads every meta.json and writes the index again) and *data evicted*
(`posix_fadvise(DONTNEED)` on every meta.json, transcript and index file before every run, so their
data pages come from the disk again; inodes and directory entries stay cached). The load average
is printed beside the table: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks import ROOT
from benchmarks.harness import DEFAULT_CACHE, table
from benchmarks.listing import session_tree


def evict(paths: list[str]) -> None:
    """Drop the page cache of `paths` (clean pages only: what an unprivileged process can do)."""
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def files_of(project: Path, index_dir: Path) -> list[str]:
    sessions = project / ".evo-agent" / "sessions"
    out = [str(p) for p in index_dir.rglob("*.json")] if index_dir.exists() else []
    for entry in os.scandir(sessions):
        if entry.is_dir():
            out += [os.path.join(entry.path, "meta.json"), os.path.join(entry.path, "messages.jsonl")]
    return out


def run(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall s, child CPU s) of one run to exit; raises when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.decode(errors='replace')[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cell(samples: list[tuple[float, float]]) -> str:
    walls = [w for w, _ in samples]
    cpus = [c for _, c in samples]
    return (f"{statistics.median(walls) * 1000:,.0f} ms [{min(walls) * 1000:,.0f}–{max(walls) * 1000:,.0f}], "
            f"CPU {statistics.median(cpus) * 1000:,.0f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline", help="another source tree (its src/ directory) to measure beside this one")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="where generated sessions are kept")
    ap.add_argument("--warm-limit-only", action="store_true", help="only `sessions list --limit 20`, warm")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="evo-list-bench-"))
    try:
        project, _ = session_tree(Path(args.cache), args.sessions, False, work)
        trees = {"this tree": str(ROOT / "src")}
        if args.baseline:
            trees = {"baseline": args.baseline, **trees}
        envs = {}
        for name, src in trees.items():
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "COLUMNS")}
            env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=str(work / f"pycache-{len(envs)}"),
                       XDG_CACHE_HOME=str(work / f"cache-{len(envs)}"))
            subprocess.run([sys.executable, "-m", "compileall", "-q", src], env=env, stdout=subprocess.DEVNULL,
                           check=True)
            envs[name] = env
        # The console script's own entry (cli/entry.py), as `evo-agent` runs it: `-m evo_agent.cli.main` would
        # compile cli/main.py (run as __main__, never cached) on every run, ~70 M instructions no user pays.
        base = [sys.executable, "-c", "from evo_agent.cli.entry import main; main()", "sessions", "list"]
        rows = {"`sessions list --limit 20`, warm": (base + ["--limit", "20"], None),
                "`sessions list` (all rows), warm": (base, None),
                "`sessions list --limit 20`, data evicted": (base + ["--limit", "20"], "evict"),
                "`sessions list`, data evicted": (base, "evict"),
                "`sessions list`, first listing (no index)": (base, "no-index")}
        if args.warm_limit_only:
            rows = dict(list(rows.items())[:1])
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for label, (cmd, state) in rows.items():
            for env in envs.values():
                run(cmd, env, project)  # warm-up; writes the index where there is one
            for i in range(args.runs):
                for name, env in envs.items():
                    index_dir = Path(env["XDG_CACHE_HOME"])
                    if state == "no-index":
                        shutil.rmtree(index_dir, ignore_errors=True)
                    elif state == "evict":
                        evict(files_of(project, index_dir))
                    print(f"{label} {name} {i + 1}/{args.runs}", file=sys.stderr)
                    results.setdefault((label, name), []).append(run(cmd, env, project))
        load = os.getloadavg()
        print(f"## `sessions list`, {args.sessions:,} sessions\n")
        print(f"Launch to exit in a fresh process: median of {args.runs} interleaved runs [range], and the "
              f"child's CPU time; load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end "
              "(2 cores, shared).\n")
        head = ["command", *trees]
        if args.baseline:
            head.append("this ÷ baseline")
        out = []
        for label in rows:
            line = [label] + [cell(results[(label, name)]) for name in trees]
            if args.baseline:
                a = statistics.median(w for w, _ in results[(label, "this tree")])
                b = statistics.median(w for w, _ in results[(label, "baseline")])
                line.append(f"{a / b:.2f}×")
            out.append(line)
        print("\n".join(table(head, out)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
