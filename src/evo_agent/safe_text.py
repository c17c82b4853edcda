"""One terminal sanitiser for everything that reaches a terminal from a transcript, a model or a tool.

A transcript is data written by a model, a tool or (for a planted session) a stranger. Printed raw,
its escape sequences could retitle the terminal (OSC 0), write the clipboard (OSC 52), plant links
(OSC 8) or clear the screen (CSI 2J); bidi overrides (U+202E) make text read differently from what
it is. Every front end (the app, the picker, the REPL, `-p` to a terminal, `sessions show`/`list`)
passes such text through `terminal_safe` first. This module imports nothing from evo_agent.
"""

from __future__ import annotations

import re

__all__ = ["terminal_line", "terminal_safe"]

# C0 controls but tab and newline, DEL, C1 controls, the bidi embedding/override/isolate marks, and lone
# surrogates (a JSON `"\ud800"` decodes to one; no UTF-8 stream can encode it, so printing one, or writing it
# into a file as UTF-8, raised UnicodeEncodeError: a teammate's first prompt crashed every fetch of the session).
_CONTROL = r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_control_re: re.Pattern[str] | None = None  # compiled at the first call: `-p hi` sends its request without it


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # ESC -> ^[, BEL -> ^G: visible and harmless
    if code == 0x7F:
        return "^?"
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every control sequence made visible and harmless (newline and tab kept).

    With `keep_newlines=False` a newline becomes `^J` too (for one-line fields such as ids and names).
    """
    if not keep_newlines:
        text = text.replace("\n", "^J")
    global _control_re
    if _control_re is None:
        _control_re = re.compile(_CONTROL)
    return _control_re.sub(_visible, text)


def terminal_line(text: object) -> str:
    """`text` as one terminal-safe line: a field that is one line (a name, a branch, a path, the line a failing
    command ends with) shows a newline in it as `^J`, so a name chosen by someone else cannot print a line
    evo-agent never wrote (a forged table row, a forged `evo-agent: …` line)."""
    return terminal_safe(str(text), keep_newlines=False)
