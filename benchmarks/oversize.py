#!/usr/bin/env python3
"""Oversized histories: resuming a transcript with no compaction at all, evo-agent beside Claude Code.

    python benchmarks/oversize.py                    1 GiB, one run per program
    python benchmarks/oversize.py --mib 256
    python benchmarks/oversize.py --smoke            evo-agent only, 6 MiB (tests/benchmarks)

`evo-agent --resume ID -p hi` and `claude -p --resume ID hi` each resume a history of --mib MiB
in which nothing was ever compacted (evo-agent: benchmarks/run.py's generator, variant `none`;
Claude Code: a session it recorded itself, grown with copies of its turns, as benchmarks/startup.py
grows it, without the final compaction). Both talk to startup.py's loopback fake with `limits=True`:
it answers like the real Messages API at its limits (413 over 32 MiB, 400 "prompt is too long"
over 200,000 tokens estimated as bytes / 4), so a program that sends the history whole fails as it
would against the real API. Reported per program: time to the first request and to the exit, peak
RSS (wait4's ru_maxrss of the process), the requests sent (count, largest body, statuses), the exit
code and last line, and the bytes the resume wrote (the new session file; the source untouched).
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup import Claude, Evo, Fake, MiB, install_peers

TIMEOUT_S = 900.0


# Spawns the program and reports its peak RSS: a small process of its own, because ru_maxrss survives
# execve, so a child forked straight from this (large) process would report this process's size.
SPAWNER = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[2:]).returncode; "
           "open(sys.argv[1], 'w').write(f'{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {rc}')")


def run_measured(cmd: list[str], env: dict, cwd: Path, fake: Fake, timeout: float = TIMEOUT_S) -> dict:
    """One run to its exit: times (first request, exit), peak RSS, the requests it sent, its outcome."""
    seen = len(fake.answers)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as report:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", SPAWNER, report.name, *cmd], env=env, cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        elapsed = time.monotonic() - t0
        first = fake.first_after(t0, 0)
        rss, status = (report.read().split() + ["", f"killed after {timeout:.0f} s"])[:2]
        out.seek(0)
        err.seek(0)
        stdout, stderr = (f.read()[-4000:].decode("utf-8", "replace") for f in (out, err))
    answers = fake.answers[seen:]
    text = stdout if (status == "0" or not stderr.strip()) and stdout.strip() else stderr  # the answer, else why not
    lines = [line.strip() for line in text.splitlines() if line.strip() and "Resume this session" not in line]
    return {
        "first_request_s": first[0] - t0 if first else None,
        "exit_s": elapsed,
        "rss_mib": int(rss) / 1024 if rss else None,
        "rc": status,
        "requests": answers,
        "last_line": lines[-1][:120] if lines else "",
    }


def tree_bytes(root: Path) -> dict[Path, int]:
    return {p: p.stat().st_size for p in root.rglob("*.jsonl*") if p.is_file()}


def written(before: dict[Path, int], after: dict[Path, int]) -> int:
    """Bytes added to the store by one run (new files and growth of old ones)."""
    return sum(size - before.get(path, 0) for path, size in after.items() if size > before.get(path, 0))


def measure(program, root: Path, source: Path, fake: Fake) -> dict:  # noqa: ANN001 - startup.Program
    stat = source.stat()
    before = tree_bytes(root)
    result = run_measured(program.resume_cmd(), program.env(), program.project, fake)
    after = tree_bytes(root)
    result["written"] = written(before, after)
    now = source.stat()
    result["source_grew"] = now.st_size - stat.st_size
    result["source_untouched"] = (now.st_size, now.st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    return result


def row(name: str, r: dict) -> str:
    sizes = [n for _, n, _ in r["requests"]]
    statuses = sorted({s for _, _, s in r["requests"]})
    sent = (f"{len(sizes)} ({', '.join(map(str, statuses))}); largest {max(sizes) / MiB:.2f} MiB"
            if sizes else "none")
    first = f"{r['first_request_s']:.1f} s" if r["first_request_s"] is not None else "–"
    rss = f"{r['rss_mib']:.0f} MiB" if r["rss_mib"] else "–"
    outcome = f"exit {r['rc']}: {r['last_line']}".replace("|", "\\|")
    kept = ("source untouched" if r["source_untouched"] else
            f"appended to the source ({_size(r['source_grew'])})" if r["source_grew"] > 0 else "source CHANGED")
    return (f"| {name} | {first} | {r['exit_s']:.1f} s | {rss} | {sent} | {_size(r['written'])}, {kept} "
            f"| {outcome} |")


def _size(n: int) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n / 1024:.1f} KiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="size of the resumed history (default 1024)")
    ap.add_argument("--cache", default="/tmp/evo-agent-bench-cache", help="generated transcripts and npm peers")
    ap.add_argument("--no-peers", action="store_true", help="evo-agent only")
    ap.add_argument("--peers-bin", help="node_modules/.bin of installed peers (default: npm install into --cache)")
    ap.add_argument("--smoke", action="store_true", help="evo-agent only, 6 MiB (for tests)")
    ap.add_argument("--out", help="also write the table (Markdown) to this file")
    ap.add_argument("--evo-src", action="append", default=[], metavar="SRC",
                    help="also run evo-agent from this source tree (e.g. an older commit's src/, exported "
                         "with git archive): a before/after row")
    args = ap.parse_args(argv)
    if args.smoke:
        args.mib, args.no_peers = 6, True  # over the 4 MiB resume window: the windowed path
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="evo-oversize-"))
    fake = Fake(limits=True)
    size = args.mib * MiB
    rows: list[str] = []
    try:
        evo = Evo(work, fake, size, cache, variant="none")
        source = Path(evo.resume_info["path"])
        print(f"evo-agent: resuming {source.stat().st_size / MiB:.0f} MiB ...", file=sys.stderr)
        rows.append(row("evo-agent", measure(evo, evo.project / ".evo-agent", source, fake)))
        for src in args.evo_src:
            print(f"evo-agent from {src}: resuming ...", file=sys.stderr)
            rows.append(row(f"evo-agent ({src})", measure(_from_source(evo, src), evo.project / ".evo-agent",
                                                           source, fake)))
        if not args.no_peers:
            rows.append(_claude_row(cache, work, fake, size, args.peers_bin))
    finally:
        fake.stop()
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    lines = [
        f"## Oversized history: resume of {size // MiB} MiB with no compaction, `-p hi`",
        "",
        f"One run each against the loopback fake with the API's limits (413 over 32 MiB, 400 over 200k tokens); "
        f"load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} at the end (2 cores shared).",
        "",
        "| program | first request | to exit | peak RSS | requests (statuses); largest body | written by the resume "
        "| outcome |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def _from_source(evo: Evo, src: str) -> Evo:
    """The same evo-agent run (project, transcript, env) with the package imported from `src`."""
    other = copy.copy(evo)
    other.exe = [sys.executable, "-m", "evo_agent.cli"]
    other._env = dict(evo.env(), PYTHONPATH=str(Path(src).resolve()))
    return other


def _claude_row(cache: Path, work: Path, fake: Fake, size: int, peers_bin: str | None) -> str:
    bin_dir, why = (Path(peers_bin), "") if peers_bin else install_peers(cache)
    if bin_dir is None:
        return f"| Claude Code | {why} | | | | | |"
    try:
        print(f"Claude Code: growing a {size // MiB} MiB session ...", file=sys.stderr)
        claude = Claude(bin_dir, work, fake, size, boundary=False)
    except Exception as exc:
        return f"| Claude Code | could not run: {exc} | | | | | |"
    root = claude.home / ".claude" / "projects"
    source = next(root.rglob(f"{claude.resume_id}.jsonl"))
    print(f"Claude Code {claude.version}: resuming {source.stat().st_size / MiB:.0f} MiB ...", file=sys.stderr)
    return row(f"Claude Code {claude.version}", measure(claude, root, source, fake))


if __name__ == "__main__":
    sys.exit(main())
