"""Evasions of `reveal_invisible` (SPEC §9: what reaches the model unseen): invisible characters it did not know,
and known ones smuggled past its "legitimate use" exceptions by an invisible carrier.

The exceptions keep a single zero-width character after a visible letter (a ZWNJ in Persian) and a single variation
selector after an emoji or an ideograph. An attacker puts an invisible character that is not a format character in
front (U+034F COMBINING GRAPHEME JOINER, a Hangul filler, U+2800 BRAILLE PATTERN BLANK): the run reads as "letter,
then one joiner" each time and was kept whole, bits and all. Fillers of their own (U+115F, U+1160, U+3164, U+FFA0,
U+17B4/5, U+2800) spell bits too, as do runs of soft hyphens and of direction marks, and selectors after Latin or
Cyrillic letters (no variation sequence exists there: only steganography uses them). Each hostile text is planted in
a cloned repository's AGENTS.md and must reach the model escaped; real text keeps every character.
"""

from __future__ import annotations

import pytest

from evo_agent.agent.instructions import discover
from evo_agent.session import reveal_invisible

from .hostile import clone, upstream

BITS = "01101110" * 4


def carried(carrier: str, zero: str = "\u200b", one: str = "\u200c") -> str:
    """BITS as single zero-width characters, each after an invisible `carrier`."""
    return "".join(carrier + (one if b == "1" else zero) for b in BITS)


def fillers(zero: str, one: str) -> str:
    return "".join(one if b == "1" else zero for b in BITS)


HIDDEN = {
    "cgj-carries-zero-width": f"Use 4{carried(chr(0x34F))} spaces.",
    "hangul-filler-carries-zero-width": f"Use 4{carried(chr(0x3164))} spaces.",
    "halfwidth-filler-carries-word-joiner": f"Use 4{carried(chr(0xFFA0), chr(0x2060), chr(0x200D))} spaces.",
    "braille-blank-carries-zero-width": f"Use 4{carried(chr(0x2800))} spaces.",
    "khmer-vowel-carries-zero-width": f"Use 4{carried(chr(0x17B4))} spaces.",
    "cgj-carries-variation-selector": "Use 4" + "".join("\u034f" + chr(0xFE00 + int(b)) for b in BITS) + " spaces.",
    "cgj-run": f"Use 4{fillers(chr(0x34F), chr(0x34F) * 2)} spaces.",
    "hangul-fillers": f"Use 4{fillers(chr(0x115F), chr(0x1160))}{fillers(chr(0x3164), chr(0xFFA0))} spaces.",
    "khmer-inherent-vowels": f"Use 4{fillers(chr(0x17B4), chr(0x17B5))} spaces.",
    "braille-blanks": f"Use 4{fillers(chr(0x2800), chr(0x2800) * 2)} spaces.",
    "soft-hyphen-run": f"Use 4{fillers(chr(0xAD), chr(0xAD) * 2)} spaces.",
    "direction-mark-run": f"Use 4 {fillers(chr(0x200E), chr(0x200F))} spaces.",
    "musical-format": "Use 4\U0001d173\U0001d174\U0001d175\U0001d17a spaces.",
    "shorthand-format": "Use 4\U0001bca0\U0001bca1\U0001bca2\U0001bca3 spaces.",
    "selectors-after-cyrillic": "Иди " + "".join("д" + chr(0xFE00 + int(b, 2)) for b in ("0110", "1110") * 8),
    "supplement-selectors-after-latin": "Usé " + "".join("é" + chr(0xE0100 + i) for i in range(32)),
}

# Characters the exceptions must not keep raw once the hostile text is revealed.
INVISIBLE = set("\u034f\u115f\u1160\u3164\uffa0\u17b4\u17b5\u2800\u00ad\u200b\u200c\u200d\u2060\u200e\u200f"
                "\U0001d173\U0001d174\U0001d175\U0001d17a\U0001bca0\U0001bca1\U0001bca2\U0001bca3"
                + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))

LEGIT = ("Persian: می\u200cخواهم, Devanagari: क्\u200dष, Hebrew: שלום\u200f!, hyphenation: Silben\u00adtrennung, "
         "heart: ❤\ufe0f, keycap: 1\ufe0f\u20e3, fire heart: ❤\ufe0f\u200d🔥, ideograph: 葛\U000e0100, "
         "braille art: ⣿\u2800⣿\u2800\u2800⣀, Korean: 한국어, Khmer: ខ្មែរ.")


@pytest.mark.parametrize("spelling", sorted(HIDDEN))
def test_every_carried_or_filler_spelling_is_written_as_escapes(spelling):
    shown, count = reveal_invisible(HIDDEN[spelling])
    assert count > 0, repr(shown)
    assert not set(shown) & INVISIBLE, repr(shown)


def test_real_text_keeps_every_character():
    assert reveal_invisible(LEGIT) == (LEGIT, 0)


@pytest.mark.parametrize("spelling", ["cgj-carries-zero-width", "hangul-fillers", "braille-blank-carries-zero-width",
                                      "selectors-after-cyrillic"])
def test_a_cloned_agents_md_reaches_the_model_escaped(tmp_path, monkeypatch, spelling):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    project = clone(upstream(tmp_path, {"AGENTS.md": f"# Style\n\n{HIDDEN[spelling]}\n\n{LEGIT}\n"}),
                    tmp_path / "clone")
    found = discover(project)
    assert LEGIT in found.text and sum(s.hidden for s in found.sources) > 0
    assert not set(found.text.replace(LEGIT, "")) & INVISIBLE, repr(found.text)
