"""SPEC §8's append budget round by round: one 1 KB prompt record with redaction on, against a bare
open/write/close of the same bytes, ≤ 3× in every round (issue #30 item 7: the spread, not the median).

    python benchmarks/append_rounds.py [--rounds 9] [--records 2000] [--baseline /work/main/src] [--texts plain,prose]

Two texts, each its own row: `plain`, the 1 KB prompt of SPEC §8, which holds none of redaction's
trigger literals (its fast path), and `prose`, a 1 KB request in ordinary English, which does: gitleaks'
keywords include `ey`, `sk` and `key` ("they", "ask", "key bindings"), so most real records take the
walk (every string scanned for the literals, the shapes and the rules they select).

Within a round the two alternate record by record (one `Recorder.user`, one bare append of the line it
wrote, …), so a burst of load on the shared machine falls on both alike instead of on whichever ran
in that second; each side's time is the sum of its own calls (wall, `perf_counter`) and its CPU time
(`thread_time` around each call: user + system). `--baseline SRC` runs the same rounds in a child on
another checkout's `src` (e.g. main's), interleaved round by round with this one, for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FL_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC


TEXTS = {
    "plain": ("please look at the failing test and fix it; " * 24)[:960],  # a 1 KB record, no trigger: the fast path
    "prose": ("I think they changed the way the right panel handles a resize, so could you ask the layout code "
              "why the sidebar jumps when the window gets narrow? It happened again this morning after I pulled: "
              "the tests still pass, but the header overlaps the first row of the table and the scroll position "
              "resets whenever a new message arrives. Check whether the height we compute for the status line "
              "includes the border, and if it does not, fix it there rather than in each caller. Keep the change "
              "small and explain what you find before you touch anything else; I would like to understand the "
              "cause first. If the fix needs a new test, put it next to the other layout tests and make it fail "
              "without the change. Also, the key bindings for page up and page down seem to skip two rows at a "
              "time, which might be the same bug. Thanks, and take your time with it."),  # triggers: the walk
}


def one_round(records: int, kind: str = "plain") -> dict:
    """One round in this process: (evo wall, bare wall, evo CPU, bare CPU), seconds summed over `records`."""
    from benchmarks.harness import as_after_the_first_request
    from evo_agent.session import SessionStore

    text = TEXTS[kind]
    with tempfile.TemporaryDirectory(prefix="evo-rounds-") as d:
        store = SessionStore(d, warn=lambda _: None)
        rec = store.create(model="claude-sonnet-4-5", provider="anthropic", git_branch="main")
        rec.user({"role": "user", "content": text})  # warm: the session exists, lazy parts loaded
        as_after_the_first_request()
        line = rec.path.read_bytes().split(b"\n")[-2] + b"\n"
        bare_path = os.path.join(d, "bare.jsonl")
        message = {"role": "user", "content": text}
        user, clock, cpu = rec.user, time.perf_counter, time.thread_time
        evo_w = bare_w = evo_c = bare_c = 0.0
        for _ in range(records):
            c0, t0 = cpu(), clock()
            user(message)
            t1, c1 = clock(), cpu()
            fd = os.open(bare_path, FL_APPEND, 0o600)
            os.write(fd, line)
            os.close(fd)
            t2, c2 = clock(), cpu()
            evo_w += t1 - t0
            evo_c += c1 - c0
            bare_w += t2 - t1
            bare_c += c2 - c1
        assert rec.writer.failures == 0
    return {"evo_w": evo_w / records, "bare_w": bare_w / records, "evo_c": evo_c / records,
            "bare_c": bare_c / records, "bytes": len(line)}


def _child(src: str, records: int, kind: str) -> dict:
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]);"
            "from benchmarks.append_rounds import one_round; print(json.dumps(one_round(int(sys.argv[3]), sys.argv[4])))")
    out = subprocess.run([sys.executable, "-c", code, src, str(ROOT), str(records), kind], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": src}).stdout
    return json.loads(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--records", type=int, default=2000, help="appends per round (default 2000)")
    ap.add_argument("--baseline", help="another checkout's src directory, run interleaved round by round")
    ap.add_argument("--texts", default="plain,prose", help=f"which texts, comma-separated (of {', '.join(TEXTS)})")
    args = ap.parse_args(argv)
    kinds = [k for k in args.texts.split(",") if k]
    if any(k not in TEXTS for k in kinds):
        ap.error(f"--texts: choose from {', '.join(TEXTS)}")
    sides = {"this": str(ROOT / "src")}
    if args.baseline:
        sides["baseline"] = args.baseline
    results: dict[tuple[str, str], list[dict]] = {(kind, name): [] for kind in kinds for name in sides}
    load0 = os.getloadavg()
    for r in range(args.rounds):
        for kind in kinds:
            for name, src in sides.items():
                got = _child(src, args.records, kind)
                results[kind, name].append(got)
                print(f"round {r + 1}/{args.rounds} {kind} {name}: {got['evo_w'] / got['bare_w']:.2f}×", file=sys.stderr)
    load1 = os.getloadavg()
    print(f"load average {load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} at the start, "
          f"{load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f} at the end; {args.rounds} rounds of {args.records}")
    print("| text | side | bare, wall | Recorder.user, wall | wall ratio per round: median (min–max) "
          "| CPU: bare, Recorder.user | CPU ratio per round: median (min–max) | wall ratio, round by round |")
    print("|---|---|---|---|---|---|---|---|")
    for (kind, name), rounds in results.items():
        wall = [x["evo_w"] / x["bare_w"] for x in rounds]
        cpu = [x["evo_c"] / x["bare_c"] for x in rounds if x["bare_c"] > 0]
        med = statistics.median
        print(f"| {kind} | {name} ({sides[name]}) | {med(x['bare_w'] for x in rounds) * 1e6:.1f} µs "
              f"| {med(x['evo_w'] for x in rounds) * 1e6:.1f} µs | {med(wall):.2f}× ({min(wall):.2f}–{max(wall):.2f}×) "
              f"| {med(x['bare_c'] for x in rounds) * 1e6:.1f} µs, {med(x['evo_c'] for x in rounds) * 1e6:.1f} µs "
              f"| {med(cpu):.2f}× ({min(cpu):.2f}–{max(cpu):.2f}×) | {', '.join(f'{w:.2f}' for w in wall)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
