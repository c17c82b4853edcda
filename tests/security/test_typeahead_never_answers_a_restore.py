"""Keys typed ahead never answer a restore question (SPEC §9: "answered only by a deliberate key, never by
typing that was meant for the prompt").

`evo-agent --resume ID --at N --restore-files` on a terminal asks before it overwrites a file changed since
evo-agent wrote it (or one outside the project): "restore it anyway? [y/N]". The launch holds the keys typed
while it starts in the terminal's queue (ui/typeahead.py), and this question read them with a bare `input()`:
a `y` and Enter typed for the prompt, before the question existed, overwrote the user's hand edit. The trust
and resume questions of the same launch already set such keys aside (cli/main.py `_ask`).

The line REPL's `/rewind` asks its questions the same way: `/rewind`, `2` and `y` pasted together (or typed
ahead while the list was printed) restored the files without the user ever seeing the question.
"""

from __future__ import annotations

import pytest

from tests.cli.test_rewind import EDITS, _two_turns
from tests.fake_model_server import text
from tests.pty_terminal import on_a_terminal

TYPED = (b"y\r", b"yes\r", b"Y\r", b"y\n")


@pytest.mark.parametrize("typed", TYPED, ids=[t.decode().strip() or repr(t) for t in TYPED])
@pytest.mark.parametrize("front", [("--plain",), ()], ids=["plain", "app"])
def test_keys_typed_before_the_launch_never_overwrite_a_hand_edit(cli, model_server, project, typed, front):
    first, second = _two_turns(cli, model_server, project)
    (project / "a.txt").write_text("hand edit\n")
    cli.env = {**cli.env, **EDITS}
    rc, screen = on_a_terminal(cli, *front, "--resume", second, "--at", "2", "--restore-files", typed=typed,
                               steps=((b"restore it anyway? [y/N] ", b"n\r"), (b"> ", b"\x04")) if front else
                                     ((b"restore it anyway? [y/N] ", b"n\r"), (b"tokens", b"\x03\x03")))
    assert "restore it anyway? [y/N]" in screen, screen  # the question was asked
    assert (project / "a.txt").read_text() == "hand edit\n", f"the early {typed!r} answered:\n{screen}"


def test_the_control_a_deliberate_yes_restores(cli, model_server, project):
    first, second = _two_turns(cli, model_server, project)
    (project / "a.txt").write_text("hand edit\n")
    cli.env = {**cli.env, **EDITS}
    rc, screen = on_a_terminal(cli, "--plain", "--resume", second, "--at", "2", "--restore-files",
                               steps=((b"restore it anyway? [y/N] ", b"y\r"), (b"> ", b"\x04")))
    assert (project / "a.txt").read_text() == "v1\n", screen


@pytest.mark.parametrize("typed", TYPED, ids=[t.decode().strip() or repr(t) for t in TYPED])
def test_a_pasted_rewind_never_answers_its_questions(cli, model_server, project, typed):
    first, second = _two_turns(cli, model_server, project)
    cli.env = {**cli.env, **EDITS}
    model_server.script(text("unused"))
    rc, screen = on_a_terminal(cli, "--plain", "--resume", second,
                               steps=((b"> ", b"/rewind\r2\r" + typed),  # pasted, or typed ahead of the list
                                      (b"Turn [1-2", b"2\r"), (b"[y/N] ", b"n\r"), (b"> ", b"\x04"),
                                      (b"> ", b"\x04"), (b"> ", b"\x04")),
                               every_step=False)
    assert "Restore" in screen, screen
    assert (project / "a.txt").read_text() == "v2\n" and (project / "sub/b.txt").exists(), screen
