#!/usr/bin/env python3
"""evo-agent speed benchmarks: the table of SPEC §8, side by side with the seed and the peers.

    python benchmarks/run.py             full run (~10 min on 2 cores); writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick     no 1 GiB transcript, fewer repeats (~2 min once the cache exists)
    python benchmarks/run.py --smoke --out /tmp/r.md    tiny sizes, for tests/benchmarks/test_smoke.py
    python -m benchmarks ...             the same

The areas live beside this file (append.py, resume.py, listing.py, picker.py), the shared harness
in harness.py; this file is the entry point: arguments, the run, the report.

What is measured (the method section of RESULTS.md says it in prose):

- append: cost per 1 KB record of `Recorder.user()` (all bookkeeping) against a bare
  open/write/close of the same bytes, the seed's design (the same append plus meta.json
  rewritten atomically after every record, stdlib json), the OpenAI Agents SDK's
  `SQLiteSession.add_items` and LangGraph's `SqliteSaver.put` (a checkpoint holding the
  whole message list, as LangGraph stores state), for conversations of 10, 1,000, 10,000
  messages: the cost of the last messages of a conversation of that length;
- resume: `load_for_resume` of generated transcripts (10 MiB, 100 MiB, 1 GiB) with the last
  compact_boundary in the final 1 MiB and with none, against the seed's full stdlib-json
  parse and the peers' load of the same history; wall time and peak-RSS growth, each in a
  fresh child process;
- listing: for 1,000 / 10,000 / 100,000 generated sessions, fresh meta.json and with 10% missing
  or stale (the first listing after the damage, which rebuilds and writes back, and the next):
  the whole `SessionStore.list()`, the library's first screen `SessionStore.newest(30)`, and the
  prompt_toolkit picker's first paint (pipe input, in-memory terminal), against the seed's read-every-meta.json
  listing; each in a fresh child process.

Generated inputs are cached under --cache (default /tmp/evo-agent-bench-cache) and reused.
Peers that are not installed are skipped, never fatal (pip install -e '.[bench]').
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# `python benchmarks/run.py`: make the package beside this file importable; importing it puts src/ first
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import ROOT, harness
from benchmarks.append import bench_append
from benchmarks.child import child_main
from benchmarks.harness import DEFAULT_CACHE, log, machine_info, parse_count, parse_size, run_child, warm
from benchmarks.listing import LIST_GEN_VERSION, bench_list, redamage
from benchmarks.peers import PEERS, peer_status
from benchmarks.report import render, verdicts
from benchmarks.resume import bench_resume, transcript

__all__ = ["main", "transcript"]  # transcript: startup.py does `from run import transcript`


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="no 1 GiB transcript, fewer repeats")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (tests); writes only to --out")
    ap.add_argument("--sizes", nargs="+", help="transcript sizes for resume, e.g. 10M 100M 1G")
    ap.add_argument("--messages", nargs="+", help="conversation lengths for append, e.g. 10 1000 10000")
    ap.add_argument("--sessions", nargs="+", help="session counts for listing, e.g. 1000 10k 100k")
    ap.add_argument("--repeats", type=int, help="repeats per measurement")
    ap.add_argument("--only", default="append,resume,list", help="comma-separated subset of append,resume,list")
    ap.add_argument("--no-peers", action="store_true", help="skip the OpenAI Agents SDK and LangGraph columns")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-page-cache resume rows")
    ap.add_argument("--cache", default=DEFAULT_CACHE, help="where generated inputs are kept")
    ap.add_argument("--out", help="where to write the report (default benchmarks/RESULTS.md; --smoke: nowhere)")
    ap.add_argument("--rerender", metavar="JSON", help="rebuild the report from a saved raw-results file")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child_main(json.loads(args.child))
        return 0
    if args.rerender:
        d = json.loads(Path(args.rerender).read_text())

        def keys_to_int(x):  # JSON turned the int keys of the append tables into strings
            if isinstance(x, dict):
                return {(int(k) if isinstance(k, str) and k.isdigit() else k): keys_to_int(v) for k, v in x.items()}
            return [keys_to_int(v) for v in x] if isinstance(x, list) else x
        peers = {k: tuple(v) for k, v in d["peers"].items()}
        out = Path(args.out) if args.out else ROOT / "benchmarks" / "RESULTS.md"
        return report_from(d["mode"], d["info"], peers, keys_to_int(d["app"]), d["res"], d["lst"], d["elapsed"], out)

    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    defaults = {
        "full": (["10", "1000", "10000"], ["10M", "100M", "1G"], ["1000", "10000", "100000"], 7),
        "quick": (["10", "1000", "10000"], ["10M", "100M"], ["1000", "10000"], 3),
        "smoke": (["10", "50"], ["1M"], ["50"], 1),
    }[mode]
    messages = [parse_count(x) for x in (args.messages or defaults[0])]
    sizes = [parse_size(x) for x in (args.sizes or defaults[1])]
    sessions = [parse_count(x) for x in (args.sessions or defaults[2])]
    repeats = args.repeats or defaults[3]
    only = set(args.only.split(","))
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="evo-bench-scratch-", dir=cache))
    out = Path(args.out) if args.out else (None if args.smoke else ROOT / "benchmarks" / "RESULTS.md")

    t0 = time.perf_counter()
    info = machine_info(cache)
    peers = {p: (None, "--no-peers") for p in PEERS} if args.no_peers else peer_status()
    for name, (ver, why) in peers.items():
        if not ver:
            log(f"peer {name} skipped: {why}")
    try:
        harness.WARMUP = mode == "full"
        min_small = {"full": 15, "quick": 9, "smoke": 1}[mode]
        app = bench_append(messages, repeats, peers, scratch, min_small=min_small) if "append" in only else None
        res = (bench_resume(sizes, repeats, peers, cache, cold=not (args.no_cold or args.smoke), smoke=args.smoke)
               if "resume" in only else None)
        lst = bench_list(sessions, repeats, cache, scratch) if "list" in only else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    if res:
        for row in res["rows"]:
            row["evo_path"] = res["transcripts"][f"{row['size']}-{row['variant']}"]["path"]
    if lst:
        for row in lst["rows"]:
            row["project"] = str(cache / f"list-v{LIST_GEN_VERSION}" /
                                 f"{row['sessions']}-{'stale10' if row['stale'] else 'fresh'}" / "project")
    info["load average"] += (", at end " + " / ".join(f"{x:.2f}" for x in os.getloadavg())
                             + " (1/5/15 min; anything above 0 is other work sharing the 2 cores)")
    raw = cache / f"last-{mode}.json"
    raw.write_text(json.dumps({"mode": mode, "info": info, "peers": peers, "app": app, "res": res, "lst": lst,
                               "elapsed": time.perf_counter() - t0}, default=str))
    log(f"raw results in {raw}")
    return report_from(mode, info, peers, app, res, lst, time.perf_counter() - t0, out)


def report_from(mode, info, peers, app, res, lst, elapsed, out, profiles: dict | None = None) -> int:
    vds = verdicts(app, res, lst, info.get("page_fault_us", float("nan")))
    for v in vds:
        if v["met"] is False and v["case"] and mode != "smoke":
            log(f"profiling the missed target: {v['target']}")
            if v["case"].get("project") and Path(v["case"]["project"]).parent.joinpath("damage.json").exists():
                redamage(Path(v["case"]["project"]))  # profile the first listing after the damage
            if v["case"].get("path"):
                warm(Path(v["case"]["path"]))  # as the timed runs had it: in the page cache
            v["profile"] = run_child(dict(v["case"], profile=True))["profile"]
    report = render(mode, info, peers, app, res, lst, vds, elapsed)
    print(report)
    if out:
        out.write_text(report, encoding="utf-8")
        log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
