"""The app's input parser (ui/paste.py) reads what prompt_toolkit's reads, however the terminal splits it.

PasteParser replaces prompt_toolkit's quadratic handling of a bracketed paste; these check it never changes
what a key or a paste is: for any input cut into any reads, the key presses are prompt_toolkit's own, so a
paste stays one BracketedPaste (which never answers a question) and the keys after its end mark stay keys.
What it costs against prompt_toolkit's: benchmarks/paste.py (docs/benchmarks.md).
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.input.vt100_parser import Vt100Parser

from evo_agent.ui.paste import PasteParser

PIECES = ["\x1b[200~", "\x1b[201~", "a", "y", "\r", "\n", "\x1b", "[", "2", "0", "1", "~", "\x1b[B", "é", "\x1b[2"]


def _keys(parser_type: type[Vt100Parser], reads: list[str]) -> list[tuple[str, str]]:
    got: list[tuple[str, str]] = []
    parser = parser_type(lambda press: got.append((str(press.key), press.data)))
    for read in reads:
        parser.feed(read)
    parser.flush()
    return got


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.lists(st.integers(0, 200), max_size=12))
def test_any_input_in_any_reads_gives_prompt_toolkits_keys(pieces, cuts):
    data = "".join(pieces)
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    reads = [data[a:b] for a, b in itertools.pairwise(bounds)]
    assert _keys(PasteParser, reads) == _keys(Vt100Parser, reads)


def test_a_paste_read_1_kb_at_a_time_is_one_paste_and_the_keys_after_it_are_keys():
    body = "y\r" + "x" * 100_000 + "\x1b[B\r"
    data = "\x1b[200~" + body + "\x1b[201~" + "\x1b[B"
    reads = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    keys = _keys(PasteParser, reads)
    assert keys[0] == ("Keys.BracketedPaste", body) and [k for k, _ in keys[1:]] == ["Keys.Down"]
