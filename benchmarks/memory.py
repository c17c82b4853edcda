#!/usr/bin/env python3
"""Auto Memory's cost: the indexes read at session start, and one write through the memory tool's store.

    python benchmarks/memory.py [--repeat N]

Prints a table: median milliseconds to compute a scope's index (what every session start pays, per scope)
with 10, 200 and 1,000 topic files, and to plan and apply one `create` (temp file, fsync, rename, the index
rewritten, fsync of the directory) in a scope holding that many.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import median_time
from evo_agent.session import MemoryStore


def topic(n: int) -> str:
    return f"---\nname: Topic {n}\ndescription: what topic {n} holds and when it helps\ntype: project\n---\nBody {n}.\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print(f"{'topic files':>12} {'index (ms)':>11} {'create (ms)':>12}")
    for count in (10, 200, 1000):
        index_ms, create_ms = measure(count, args.repeat)
        print(f"{count:>12,} {index_ms:>11.2f} {create_ms:>12.2f}")


def measure(count: int, repeat: int) -> tuple[float, float]:
    """(median ms of one scope's index, of one create) in a scope of `count` topic files."""
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(tmp, user_dir=Path(tmp) / "user")
        directory = store.directory("project")
        directory.mkdir(parents=True)
        for n in range(count):
            (directory / f"t{n:04}.md").write_text(topic(n))
        index_ms = median_time(lambda: store.index("project"), repeat) * 1e3
        made = iter(range(10**6))

        def create() -> None:
            n = next(made)
            store.apply(store.plan("create", {"path": f"/memories/project/new{n}.md", "file_text": topic(n)}))

        return index_ms, median_time(create, repeat) * 1e3

if __name__ == "__main__":
    main()
