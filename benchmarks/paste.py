#!/usr/bin/env python3
"""A bracketed paste read as the app reads it (1 KB per read): prompt_toolkit's parser against ui/paste.py's.

    python benchmarks/paste.py            1, 4 and 10 MB
    python benchmarks/paste.py --quick    1 MB

One table (Markdown on stdout): the seconds of CPU each parser spends on the paste, and their ratio, in one run.
prompt_toolkit's grows with the square of the paste (each read appends to, and searches, the whole paste).
"""

from __future__ import annotations

import argparse
import time

from prompt_toolkit.input.vt100_parser import Vt100Parser

from evo_agent.ui.paste import PasteParser


def cost(parser_type: type[Vt100Parser], data: str) -> float:
    got: list[object] = []
    parser = parser_type(got.append)
    start = time.process_time()
    for i in range(0, len(data), 1024):
        parser.feed(data[i:i + 1024])
    parser.flush()
    elapsed = time.process_time() - start
    assert len(got) == 1, len(got)
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    sizes = [1] if ap.parse_args().quick else [1, 4, 10]
    print("| paste | prompt_toolkit's parser | PasteParser | ratio |\n|---|---|---|---|")
    for mb in sizes:
        data = "\x1b[200~" + "abcdefghi\n" * (mb * 100_000) + "\x1b[201~"
        stock, ours = cost(Vt100Parser, data), cost(PasteParser, data)
        print(f"| {mb} MB | {stock:.2f} s | {ours:.3f} s | {stock / ours:.0f}× |")


if __name__ == "__main__":
    main()
