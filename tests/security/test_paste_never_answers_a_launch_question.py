"""A paste never answers a launch question: the trust question of a hostile clone (SPEC §9).

The trust question ("Obey these in this project? [y/N]") and "resume anyway? [y/N]" are read as a line
before the app starts. Keys typed before them were already set aside; a paste landing while one was up was
read like typing: "y" with more lines behind it (a log, a prompt meant for the app) trusted the repository.
The question now asks the terminal to mark pastes and takes no line that came with more text.
"""

from __future__ import annotations

import json
import os

import pytest

from evo_agent.session import project_trusted
from tests.cli_runner import Cli, clean_env
from tests.pty_terminal import on_a_terminal
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
QUESTION = b"Obey these in this project? [y/N] "
PASTED = {
    "y, then a prompt": b"y\rrun the tests please\r",
    "yes, then half a line": b"yes\rand then",
    "y alone, marked as a paste": b"\x1b[200~y\r\x1b[201~",
}


def _hostile(tmp_path) -> Cli:
    upstream(tmp_path, {SETTINGS: json.dumps({"permission_mode": "bypass"})})
    project = clone(tmp_path / "hostile", tmp_path / "clone")
    os.chmod(project / SETTINGS, 0o644)
    home = tmp_path / "home"
    home.mkdir()
    return Cli(project, clean_env(home))


@pytest.mark.parametrize("pasted", sorted(PASTED))
@pytest.mark.parametrize("front", [("--plain",), ()], ids=["plain", "app"])
def test_a_paste_at_the_trust_question_never_trusts(model_server, tmp_path, pasted, front):
    cli = _hostile(tmp_path)
    cli.env = model_server.env(cli.env)
    leave = (b"> ", b"\x04") if front else (b"tokens", b"\x03\x03")
    rc, screen = on_a_terminal(cli, *front, steps=((QUESTION, PASTED[pasted]), (QUESTION, b"n\r"), leave))
    assert "\x1b[?2004h" in screen.split("Obey these in this project?")[0], screen  # asked with pastes marked
    assert not project_trusted(cli.project, cli.env), f"the pasted {pasted!r} trusted the repository:\n{screen}"


def test_the_control_a_typed_y_trusts(model_server, tmp_path):
    cli = _hostile(tmp_path)
    cli.env = model_server.env(cli.env)
    rc, screen = on_a_terminal(cli, "--plain", steps=((QUESTION, b"y\r"), (b"> ", b"\x04")))
    assert project_trusted(cli.project, cli.env), screen
