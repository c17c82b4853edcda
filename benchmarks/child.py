"""What a fresh child process of `run.py --child SPEC` runs: one measured call, printed as one JSON line.

Each measurement gets its own interpreter so imports, caches and the peak-RSS counter of one never
colour the next; the harness (`harness.run_measured`) takes the times and the memory growth.
"""

from __future__ import annotations

from benchmarks import listing, picker, resume
from benchmarks.harness import run_measured


def child_main(spec: dict) -> None:
    """Build the call `spec` names (kind "resume" or "list", impl), then measure or profile it."""
    kind, impl = spec["kind"], spec["impl"]
    out: dict = {}
    if kind == "resume":
        work = resume.child_work(spec, out)
    elif kind == "list":
        work = (picker.child_work if impl == "picker" else listing.child_work)(spec, out)
    else:
        raise SystemExit(f"unknown kind {kind}")
    run_measured(work, spec, out, gc_off=impl in ("floor", "floor_drop"))
