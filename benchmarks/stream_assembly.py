#!/usr/bin/env python3
"""Folding a streamed answer: seconds per answer as its deltas double (a hostile or a very verbose endpoint).

    python benchmarks/stream_assembly.py [--repeat N]

Prints a table: for 10,000 to 80,000 text deltas of 40 characters (one Messages API stream), the best time
`MessageAssembler` takes to fold them and build the answer, and the ratio to the row before. Linear work
doubles (×2); adding each delta to the block's string (the assembler before 2026-12-05) was quadratic: ×4–5
per row, 64 s at 80,000 deltas, and a server sending a few hundred MB of deltas held the CPU for hours.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import best_time, fmt_ms, table
from evo_agent.providers.anthropic_stream import MessageAssembler

START = json.dumps({"type": "message_start", "message": {"id": "m", "role": "assistant", "content": [], "usage": {}}})
BLOCK = json.dumps({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
DELTA = json.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 40}})
STOP = json.dumps({"type": "message_stop"})


def fold(deltas: int) -> int:
    assembler = MessageAssembler()
    assembler.feed("message_start", START)
    assembler.feed("content_block_start", BLOCK)
    for _ in range(deltas):
        assembler.feed("content_block_delta", DELTA)
    assembler.feed("message_stop", STOP)
    return len(assembler.response().message["content"][0]["text"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows, before = [], None
    for deltas in (10_000, 20_000, 40_000, 80_000):
        seconds, length = best_time(lambda n=deltas: fold(n), args.repeat)
        assert length == deltas * 40
        rows.append([f"{deltas:,}", fmt_ms(seconds), f"×{seconds / before:.1f}" if before else "—"])
        before = seconds
    print("\n".join(table(["text deltas", "fold + answer", "vs the row before"], rows, "--:")))


if __name__ == "__main__":
    main()
