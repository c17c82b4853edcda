"""Characters no editor shows, written as visible escapes (SPEC §9: what reaches the model unseen).

Text a person approves or reads in an editor can carry characters no editor shows, which a model reads all the
same: tag characters (U+E0000-E007F, "ASCII smuggling": each spells an ASCII character invisibly), runs of
zero-width characters or of variation selectors (steganography), bidi embeddings, overrides and isolates
(text that reads differently from what it is). `reveal_invisible` writes each as a visible escape
(`\\U000e0041`, `\\u200b`), keeping what real text uses them for: an emoji ZWJ sequence (a single ZWJ after an
emoji), a ZWNJ/ZWJ inside Persian or Indic words (a single one after a letter beyond ASCII), the subdivision
flags (England, Scotland, Wales: the only RGI tag sequences), one variation selector (an emoji's VS16, an
ideographic variation; not one after ASCII but a keycap's digit, `#`, `*`, nor one after a Latin, Greek or
Cyrillic letter, where no variation sequence exists), one LRM/RLM/ALM (which only set the direction of neutral
characters), one soft hyphen, a blank braille cell beside other braille, a leading BOM.

Blank fillers that are not format characters are written as escapes too (U+034F COMBINING GRAPHEME JOINER, the
Hangul fillers U+115F/U+1160/U+3164/U+FFA0, the Khmer inherent vowels U+17B4/U+17B5, a lone U+2800 BRAILLE PATTERN
BLANK), and none of them counts as the visible letter an exception needs: otherwise "filler, one ZWSP" repeated
carried bits past the "single one after a letter" exception (tests/security/test_invisible_evasions.py).

Used on project instructions and Auto Memory (what the model is given and what the user is shown of them) and
in the trust question; the terminal sanitiser (evo_agent.safe_text) handles control sequences.
"""

from __future__ import annotations

import re

__all__ = ["find_as_revealed", "reveal_invisible"]

_TAG_FLAGS = ("gbeng", "gbsct", "gbwls")
_INVISIBLE = (
    "(?P<flag>\U0001f3f4(?:" + "|".join("".join(chr(0xE0000 + ord(c)) for c in f) for f in _TAG_FLAGS) + ")\U000e007f)"
    "|(?P<always>[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u206a-\u206f\u2061-\u2064\u180e\ufff9-\ufffb"
    "\u034f\u115f\u1160\u3164\uffa0\u17b4\u17b5\U0001d173-\U0001d17a\U0001bca0-\U0001bca3])"
    "|(?P<zw>[\u200b-\u200d\u2060\ufeff]+)"
    "|(?P<vs>[\ufe00-\ufe0f\U000e0100-\U000e01ef]+)"
    "|(?P<mark>[\u200e\u200f\u061c\u00ad]+)"
    "|(?P<braille>\u2800+)"
)
# Not letters, though no format characters either: blank, so never the visible letter an exception needs.
_BLANK = frozenset("\u034f\u115f\u1160\u3164\uffa0\u17b4\u17b5\u2800")
# Scripts with no variation sequences: a selector after one of their letters only hides bits.
_NO_VARIATION = ("LATIN", "GREEK", "CYRILLIC", "ARMENIAN")
_invisible_re: re.Pattern[str] | None = None


def _escape(chars: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars)


def _visible_letter(char: str) -> bool:
    """A character beyond ASCII that shows (an emoji, a letter, a combining mark), never a format character."""
    import unicodedata

    return (bool(char) and not char.isascii() and not char.isspace() and char not in _BLANK
            and unicodedata.category(char) != "Cf")


def _varies(char: str) -> bool:
    """Whether a variation selector after `char` can be real text: an emoji, a symbol, an ideograph, a keycap."""
    import unicodedata

    if char and char in "0123456789#*":
        return True
    return _visible_letter(char) and not unicodedata.name(char, "").startswith(_NO_VARIATION)


def _braille_beside(text: str, start: int, end: int) -> bool:
    """Whether braille other than the blank cell is next to `text[start:end]` (braille art's spaces)."""
    return any("\u2801" <= c <= "\u28ff" for c in (text[start - 1:start], text[end:end + 1]) if c)


def reveal_invisible(text: str) -> tuple[str, int]:
    """(`text` with each invisible character that has no legitimate use there written as an escape, how many).

    The escapes are plain ASCII, so what the model is given and what a person is shown say the same thing."""
    escaped = _escaped_at(text)
    if not escaped:
        return text, 0
    pieces, last = [], 0
    for at, escape in escaped:
        pieces += [text[last:at], escape]
        last = at + 1
    pieces.append(text[last:])
    return "".join(pieces), len(escaped)


def _escaped_at(text: str) -> list[tuple[int, str]]:
    """(index in `text`, its escape) for each character reveal_invisible writes as an escape, in order."""
    global _invisible_re
    if text.isascii():
        return []
    if _invisible_re is None:
        _invisible_re = re.compile(_INVISIBLE)
    escaped: list[tuple[int, str]] = []
    for match in _invisible_re.finditer(text):
        found = match.group()
        if match.group("flag"):
            continue
        at = match.start()
        before = text[at - 1] if at else ""
        if match.group("zw") and len(found) == 1 and (
                (found == "\ufeff" and at == 0) or (found != "\ufeff" and _visible_letter(before))):
            continue  # a BOM; a ZWJ in an emoji sequence, a ZWNJ in a Persian word
        if match.group("vs") and len(found) == 1 and _varies(before):
            continue  # an emoji's VS16, a keycap's (`1️⃣`), an ideographic variation
        if match.group("mark") and len(found) == 1:
            continue  # an RLM after Hebrew, a soft hyphen inside a word: one at a time
        if match.group("braille") and _braille_beside(text, at, match.end()):
            continue  # the blank cells of braille art
        escaped += [(at + i, _escape(c)) for i, c in enumerate(found)]
    return escaped


def find_as_revealed(text: str, needle: str) -> list[tuple[int, int]]:
    """The spans of `text` that read as `needle` once revealed: where a model that was shown `text` through
    reveal_invisible (a memory file's view) quotes it back, escapes and all, in an edit's old_str.

    Non-overlapping, left to right, as `str.count` counts; an occurrence that starts or ends inside one
    character's escape is no span of `text` and is skipped. `needle` is matched against the whole text's
    revealed form: what is escaped depends on the neighbours, and that form is what the model saw."""
    if not needle:
        return []
    revealed, _ = reveal_invisible(text)
    # Revealed offset -> text offset at each character boundary; inside an escape there is none.
    to_text: dict[int, int] = {}
    shift, last = 0, 0
    for at, escape in _escaped_at(text):
        for i in range(last, at + 1):
            to_text[i + shift] = i
        shift += len(escape) - 1
        last = at + 1
    for i in range(last, len(text) + 1):
        to_text[i + shift] = i
    spans, start = [], 0
    while (pos := revealed.find(needle, start)) != -1:
        end = pos + len(needle)
        if pos in to_text and end in to_text:
            spans.append((to_text[pos], to_text[end]))
            start = end
        else:
            start = pos + 1
    return spans
