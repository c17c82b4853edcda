"""An approval's command that is one very long line is seen whole before yes, like a command of many lines.

A prompt-injected model pads one line: `touch EVIL #` then thousands of blanks then `ls -la`. The terminal
wraps it into more rows than the screen holds, so the question showed blank rows and `ls -la` just above
"Yes": the part that runs had scrolled away, and yes ran it. Only newlines counted as lines not shown. Now
the preview counts the rows a line takes at the terminal's width: a line that does not fit is shown up to
what fits, the question says how much more there is, and yes waits until Ctrl+O has shown it all (the same
rule as for a command of 200 lines). Control: a short command is answered at once (tests/ui/test_tmux.py).
"""

from __future__ import annotations

import pytest

from tests.fake_model_server import text, tool_use
from tests.pty_terminal import on_a_terminal
from tests.ui.test_tmux import open_app, ready

PAD = 6000


@pytest.mark.parametrize("where", ["payload first", "payload last"])
def test_a_padded_one_line_command_waits_for_ctrl_o_before_yes(terminals, project, model_server, where):
    marker = project / "EVIL"
    payload = "touch EVIL"  # run in the project
    command = f"{payload} #{' ' * PAD}ls -la" if where == "payload first" else f"{' ' * PAD}{payload}"
    model_server.script(tool_use("bash", {"command": command}), text("Done."))
    t = open_app(terminals, project, env=model_server.env())
    ready(t)
    t.type("list the files")
    t.keys("Enter")
    screen = t.wait(r"Ctrl\+O shows all")
    if where == "payload first":
        assert payload in screen, screen  # what fits is shown from the start
    assert "more characters not shown" in screen, screen
    t.keys("Down", "Enter")  # Yes, before seeing the rest
    t.wait(r"not shown yet: Ctrl\+O shows (them|it)")
    assert not marker.exists()
    t.keys("C-o")
    screen = t.wait(r"❯ Yes\n")  # yes may be chosen now (no longer "after Ctrl+O"): every row was shown
    tail = payload if where == "payload last" else "ls -la"
    assert tail in screen, screen  # the end of the line, on screen above the menu
    t.keys("Enter")  # Yes, now
    t.wait(r"Done\.")
    assert marker.exists()


def _last_screen(output: str, columns: int = 80, rows: int = 24) -> str:
    """What a `columns`×`rows` terminal shows at the end of `output` (its lines wrapped at `columns`)."""
    kept: list[str] = []
    used = 0
    for line in reversed(output.replace("\r\n", "\n").split("\n")):
        used += max(1, -(-len(line) // columns))
        if used > rows:
            break
        kept.append(line)
    return "\n".join(reversed(kept))


@pytest.mark.parametrize("where", ["payload first", "payload last"])
def test_the_plain_repl_names_a_padded_command_where_its_question_is_asked(cli, model_server, where):
    """The line front end prints every row (the scrollback holds them), so the question repeats the call in one
    line right above `Allow?` when the command is taller than the screen; the rule it offers is named, not
    printed again at its full height."""
    command = f"touch EVIL #{' ' * PAD}ls -la" if where == "payload first" else f"{' ' * PAD}touch EVIL"
    model_server.script(tool_use("bash", {"command": command}), text("Done."))
    _, screen = on_a_terminal(cli, "--plain", steps=[(b"> ", b"list the files\r"), (b"Allow? ", b"no\r"),
                                                     (b"> ", b"\x04")], timeout=60)
    asked = screen[:screen.index("Allow? ") + len("Allow? ")]
    assert "touch EVIL" in _last_screen(asked), _last_screen(asked)
    assert not (cli.project / "EVIL").exists()


def test_the_plain_repl_asks_about_a_short_command_as_before(cli, model_server):
    model_server.script(tool_use("bash", {"command": "touch EVIL"}), text("Done."))
    _, screen = on_a_terminal(cli, "--plain", steps=[(b"> ", b"go\r"), (b"Allow? ", b"no\r"), (b"> ", b"\x04")],
                              timeout=60)
    asked = screen[:screen.index("Allow? ")]
    assert asked.count("touch EVIL") == 2 and "[Bash(touch EVIL)]" in asked  # the question and the rule offered
