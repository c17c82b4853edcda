#!/usr/bin/env python3
"""`evo-agent sessions search` speed, beside `grep -r` on the same files (issue #19).

    python benchmarks/search.py                 a 1 GiB project (generated once under --cache)
    python benchmarks/search.py --mb 64         a smaller one

Generates a project of sessions (prompts, answers, tool calls, 2–20 KB tool outputs of code-like
text, a compaction now and then), then times, each as the best of 3 runs in this process:
a full scan for a word that is nowhere (the worst case: every byte is tested), with ripgrep as the
prefilter (when `rg` is on PATH) and without it, the same as `--regex`, a search that stops at 20
hits, and `rg -F -i -c` and `grep -r -F -i -c` over the same files in the same run.
Prints a Markdown table with MB/s and the ratios to ripgrep and grep.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import DEFAULT_CACHE, best_time, table
from evo_agent.session import SessionStore
from evo_agent.session.search import search_sessions

WORDS = ["def", "class", "return", "import", "self", "value", "result", "error", "retry", "upload", "test", "assert", "config", "path", "file", "request", "response", "session", "token", "model", "agent", "tool", "output", "line", "print", "status", "branch", "commit"]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def _code(rng: random.Random, size: int) -> str:
    lines, total = [], 0
    while total < size:
        line = f"    {rng.choice(WORDS)}_{rng.randrange(999)} = {rng.choice(WORDS)}({rng.randrange(99)})"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def generate(project: Path, megabytes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    store = SessionStore(project, warn=lambda line: None, redact=False)
    target = megabytes << 20
    written = 0
    while written < target:
        rec = store.create(model="m", provider="demo", git_branch=None)
        for turn in range(rng.randrange(5, 40)):
            rec.user({"role": "user", "content": _text(rng, 20)})
            tool_id = f"toolu_{turn}"
            rec.assistant({"role": "assistant", "content": [
                {"type": "text", "text": _text(rng, 60)},
                {"type": "tool_use", "id": tool_id, "name": "bash", "input": {"command": f"pytest -q tests/{turn}"}}]})
            rec.user({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": _code(rng, rng.randrange(2000, 20000))}]})
            rec.assistant({"role": "assistant", "content": [{"type": "text", "text": _text(rng, 80)}]})
            if rng.random() < 0.05:
                rec.compact_boundary(_text(rng, 200), compact_count=1, trigger="auto")
        rec.checkpoint()
        written += os.path.getsize(rec.path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=1024, help="size of the generated project (default 1024)")
    parser.add_argument("--cache", default=DEFAULT_CACHE, help="where generated projects are kept")
    parser.add_argument("--repeats", type=int, default=5, help="runs per row, the best is shown (default 5)")
    args = parser.parse_args()
    project = Path(args.cache) / f"search-{args.mb}mb"
    if not (project / ".done").exists():
        shutil.rmtree(project, ignore_errors=True)
        project.mkdir(parents=True)
        generate(project, args.mb)
        (project / ".done").write_text("ok")
    store = SessionStore(project, warn=lambda line: None)
    rows = store.list()
    sessions = [(r.id, r.dir, r.meta.resumed_from) for r in rows]
    size = sum(os.path.getsize(os.path.join(r.dir, "messages.jsonl")) for r in rows)
    mb = size / (1 << 20)

    def scan(needle: str, **kw):
        return lambda: sum(1 for _ in search_sessions(sessions, needle, limit=None, **kw))

    from evo_agent.session import search as search_module

    def pure(fn):  # the same search without the ripgrep prefilter: what runs where rg is not installed
        def run():
            saved = search_module._ripgrep
            search_module._ripgrep = lambda: None
            try:
                return fn()
            finally:
                search_module._ripgrep = saved
        return run

    timings = {
        "evo-agent search, word found nowhere (full scan)": best_time(scan("zanzibar"), repeats=args.repeats),
        "evo-agent search, same, without ripgrep (pure Python)": best_time(pure(scan("zanzibar")),
                                                                          repeats=args.repeats),
        "evo-agent search --regex, found nowhere (full scan)": best_time(scan(r"zanz[i]bar", regex=True), repeats=1),
        "evo-agent search, common word, --limit 20": best_time(
            lambda: sum(1 for _ in search_sessions(sessions, "retry", limit=20)), repeats=args.repeats),
    }
    files = [str(store.sessions_dir)]
    rg, grep = shutil.which("rg"), shutil.which("grep")
    peers = {}
    if rg:
        cmd = [rg, "--no-config", "--no-ignore", "--hidden", "-F", "-i", "-c", "zanzibar", *files]
        peers["rg"] = timings["ripgrep: rg -F -i -c (same files)"] = best_time(
            lambda: subprocess.run(cmd, capture_output=True), repeats=args.repeats)
        listed = [os.path.join(r.dir, "messages.jsonl") for r in store.list()]
        cmd_mmap = [rg, "--no-config", "--mmap", "-F", "-i", "-l", "-e", "zanzibar", "--", *listed]
        timings["ripgrep: rg --mmap -F -i -l (the transcripts named)"] = best_time(
            lambda: subprocess.run(cmd_mmap, capture_output=True), repeats=args.repeats)
    if grep:
        cmd = [grep, "-r", "-F", "-i", "-c", "zanzibar", *files]
        peers["grep"] = timings["grep -r -F -i -c (same files)"] = best_time(
            lambda: subprocess.run(cmd, capture_output=True), repeats=args.repeats)
    load = os.getloadavg()
    print(f"## Search: {len(rows):,} sessions, {mb:,.0f} MB of transcripts\n")
    print(f"Best of {args.repeats} runs each, warm page cache, measured in one run; load average "
          f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (2 cores, shared). ripgrep "
          f"{'at ' + rg if rg else 'not installed'}.\n")

    def ratio(seconds: float, peer: str) -> str:
        return f"{seconds / peers[peer][0]:.2f}×" if peer in peers else "n/a"

    rows = [(label, f"{seconds * 1000:,.0f} ms", f"{mb / seconds:,.0f}" if "limit" not in label else "—",
             ratio(seconds, "rg"), ratio(seconds, "grep")) for label, (seconds, _) in timings.items()]
    print("\n".join(table(["work", "time", "MB/s", "× ripgrep", "× grep"], rows,
                          align=["---", "---:", "---:", "---:", "---:"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
