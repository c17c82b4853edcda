"""The sanitiser's promise, for any text at all (hypothesis): what `terminal_line` returns is one line a terminal
draws as text, and honest text comes back unchanged.

Every sink of a one-line field (a name, a branch, a path, the line a failing command ends with) relies on it:
no C0 control (the newline and carriage return included), no DEL, no C1 control (U+0080-U+009F: an 8-bit CSI,
OSC, DCS), no bidi embedding, override or isolate, no lone surrogate survives; running it twice changes nothing (a field shown
through two layers is not escaped twice); text without such characters, letters of any script, emoji and the
tab included, is returned as it is. `terminal_safe` keeps newlines and tabs and is otherwise the same.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.safe_text import terminal_line, terminal_safe

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SURROGATES = [chr(c) for c in range(0xD800, 0xE000)]  # lone: no UTF-8 stream can carry one (a terminal write raised)
UNSAFE = frozenset([chr(c) for c in range(0x20) if c != 0x09] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
                   + list(BIDI) + SURROGATES)
# Text drawn mostly from the characters that matter, and from anything else Unicode holds (lone surrogates too).
TRICKS = st.sampled_from(sorted(UNSAFE) + ["[", "]", "\\", ";", "^", "\t", "\u200b", "é", "ж", "漢", "🙂"])
TEXT = st.lists(st.one_of(TRICKS, st.characters(codec=None)), max_size=60).map("".join)


@settings(max_examples=400)
@given(TEXT)
def test_a_terminal_line_holds_no_control_and_is_stable(text):
    line = terminal_line(text)
    assert not UNSAFE & set(line), repr(line)
    assert terminal_line(line) == line and terminal_safe(line) == line


@settings(max_examples=400)
@given(TEXT)
def test_terminal_safe_keeps_only_newlines_and_tabs(text):
    shown = terminal_safe(text)
    assert not (UNSAFE - {"\n"}) & set(shown), repr(shown)
    assert shown.count("\n") == text.count("\n")


@settings(max_examples=400)
@given(st.text(st.characters(codec=None).filter(lambda c: c not in UNSAFE), max_size=60))
def test_text_without_controls_is_returned_as_it_is(text):
    assert terminal_line(text) == text and terminal_safe(text) == text


def test_each_trick_is_shown_as_visible_text():
    assert terminal_line("a\nb\rc\x1b]0;t\x07\x9b2J\u202e\u2066") == "a^Jb^Mc^[]0;t^G\\x9b2J\\u202e\\u2066"
    assert terminal_line("ветка/修正 🙂\tok") == "ветка/修正 🙂\tok"
