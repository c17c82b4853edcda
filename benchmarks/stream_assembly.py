#!/usr/bin/env python3
"""Folding a streamed answer: seconds per answer as its deltas double (a hostile or a very verbose endpoint).

    python benchmarks/stream_assembly.py [--repeat N]

Prints three tables: for 10,000 to 80,000 text deltas of 40 characters (one Messages API stream), the best time
`MessageAssembler` takes to fold them and build the answer; for 2,000 to 16,000 tool calls in one chat
completions stream, `ChatStreamAssembler`'s; for one streamed line of 100,000 to 800,000 bytes sent in one-byte
chunks, `wire.Response.readline`'s; each with the ratio to the row before. Linear work doubles (×2); adding each
delta to the block's string, finding a call's chunks by a scan of every call, adding each chunk to the line (the
code before 2026-12-05) were quadratic: ×4 per row, a minute at 80,000 deltas or 16,000 calls, and a server
sending a few hundred MB of either held the CPU for hours.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the benchmarks package; it puts src/ first

from benchmarks.harness import best_time, fmt_ms, table
from evo_agent.providers.anthropic_stream import MessageAssembler
from evo_agent.providers.openai_stream import ChatStreamAssembler
from evo_agent.providers.wire import read_response

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


def fold_calls(calls: int) -> int:
    assembler = ChatStreamAssembler()
    for index in range(calls):
        call = {"index": index, "id": f"call_{index}", "function": {"name": "read_file", "arguments": "{}"}}
        assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return len(assembler.response().message["content"])


def read_chunked_line(size: int) -> int:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = b"1\r\nx\r\n" * size + b"1\r\n\n\r\n0\r\n\r\n"
    response = read_response(io.BufferedReader(io.BytesIO(head + body)))
    return len(response.readline(size + 2)) - 1


def _rows(fold_fn, counts: tuple[int, ...], per: int, repeat: int) -> list[list[str]]:
    rows, before = [], None
    for count in counts:
        seconds, length = best_time(lambda n=count: fold_fn(n), repeat)
        assert length == count * per
        rows.append([f"{count:,}", fmt_ms(seconds), f"×{seconds / before:.1f}" if before else "—"])
        before = seconds
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text_rows = _rows(fold, (10_000, 20_000, 40_000, 80_000), 40, args.repeat)
    print("\n".join(table(["text deltas", "fold + answer", "vs the row before"], text_rows, "--:")))
    print()
    call_rows = _rows(fold_calls, (2_000, 4_000, 8_000, 16_000), 1, args.repeat)
    print("\n".join(table(["tool calls", "fold + answer", "vs the row before"], call_rows, "--:")))
    print()
    line_rows = _rows(read_chunked_line, (100_000, 200_000, 400_000, 800_000), 1, args.repeat)
    print("\n".join(table(["line bytes in 1-byte chunks", "readline", "vs the row before"], line_rows, "--:")))

if __name__ == "__main__":
    main()
