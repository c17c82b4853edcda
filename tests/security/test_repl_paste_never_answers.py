"""A line that came with more text never answers the line REPL's approval (SPEC §9: "answered only by a
deliberate key, never by typing that was meant for the prompt").

`--plain` reads "Allow? " as a line on a terminal in line mode, where a paste arrives as typed lines. Lines
queued before the question showed were already set aside; a paste landing while it was up was read line by
line: "fix this please:" was not an answer, so the question was asked again and read the pasted "yes" as the
answer, running the command. A line with more text already queued behind it was pasted (or typed ahead
without looking): it is now set aside with the rest and the question asked again. A deliberate "yes" typed
alone still answers (the control).
"""

from __future__ import annotations

import pytest

from tests.fake_model_server import text, tool_use
from tests.pty_terminal import on_a_terminal

PASTED = {
    "a sentence, then yes": b"fix this please:\nyes\n",
    "yes, then a sentence": b"yes\nand then run the tests\n",
    "yes, then half a line": b"yes\nand then",
    "always, then a sentence": b"always\nlooks fine\n",
    "project, then a sentence": b"project\nlooks fine\n",
    "carriage returns": b"hmm\ryes\r",
}


@pytest.mark.parametrize("pasted", sorted(PASTED))
def test_a_paste_at_the_approval_never_runs_the_command(cli, model_server, project, pasted):
    model_server.script(tool_use("bash", {"command": "touch MARKER"}), *[text("ok")] * 6)
    rc, screen = on_a_terminal(cli, "--plain", steps=((b"> ", b"make the marker\r"), (b"Allow? ", PASTED[pasted]),
                                                      (b"Allow? ", b"no\r"), *[(b"> ", b"\x04")] * 4),
                               every_step=False)  # the set-aside lines run as prompts first
    assert not (project / "MARKER").exists(), screen
    assert "not taken as its answer" in screen, screen


def test_the_control_a_yes_typed_alone_runs_it(cli, model_server, project):
    model_server.script(tool_use("bash", {"command": "touch MARKER"}), text("ran it"))
    rc, screen = on_a_terminal(cli, "--plain", steps=((b"> ", b"make the marker\r"), (b"Allow? ", b"yes\r"),
                                                      (b"> ", b"\x04")))
    assert (project / "MARKER").exists(), screen


@pytest.mark.parametrize("pasted", [b"yes\r", b"always\r", b"project\r"])
def test_a_pasted_answer_alone_never_runs_the_command(cli, model_server, project, pasted):
    """A terminal marks a paste only for a program that asked it to (`ESC [?2004h`): the REPL asks while it
    reads an answer, so a paste holding "yes" and Enter reads as `ESC [200~yes`, no answer. The terminal
    here wraps the paste as a real one would, having been asked."""
    model_server.script(tool_use("bash", {"command": "touch MARKER"}), *[text("ok")] * 3)
    rc, screen = on_a_terminal(cli, "--plain", steps=((b"> ", b"make the marker\r"),
                                                      (b"Allow? ", b"\x1b[200~" + pasted + b"\x1b[201~"),
                                                      (b"Allow? ", b"no\r"), *[(b"> ", b"\x04")] * 3),
                               every_step=False)
    assert "\x1b[?2004hAllow? " in screen, screen  # asked with pastes marked: a real terminal wraps them
    assert not (project / "MARKER").exists(), screen
    assert "not taken as its answer" in screen, screen
