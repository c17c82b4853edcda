"""Keys typed before a launch question is asked never answer it (SPEC §9: "answered only by a deliberate key,
never by typing that was meant for the prompt").

`evo-agent --resume …` and `-c` may ask first (the trust question of a repository that brings settings, and
"recorded elsewhere … resume anyway?"), so the launch holds the keys typed meanwhile in the terminal's queue
(ui/typeahead.py) rather than reading them early (ui/early_input.py). The questions are then read as a line
(`input()`), from that same queue: what the user typed for the app — here `y` and Enter, typed while the
program was still starting — becomes the answer. Each case types the keys *before* the program starts
(deterministic: they are already queued when the question is asked) into a real `git clone` of a hostile
repository, and checks that nothing was trusted or resumed.
"""

from __future__ import annotations

import json
import os

import pytest

from evo_agent.session import project_trusted
from tests.cli.test_trust import PLANTED, hostile_clone
from tests.cli_runner import Cli, clean_env
from tests.pty_terminal import on_a_terminal
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
TYPED = (b"y\r", b"yes\r", b"Y\r", b"y\n")


def _pretyped(cli: Cli, *args: str, typed: bytes,
             steps: tuple[tuple[bytes, bytes], ...] = ((b"[y/N] ", b"n\r"), (b"> ", b"\x04"))) -> tuple[int, str]:
    """The CLI on a pseudo-terminal whose input queue already holds `typed`; then each step's keys (a deliberate
    `n` and Enter for the question, Ctrl+D for the REPL) once its prompt shows after the previous one (a launch
    that refuses ends before them)."""
    return on_a_terminal(cli, *args, steps=steps, typed=typed, every_step=False)


@pytest.mark.parametrize("typed", TYPED, ids=[t.decode().strip() or repr(t) for t in TYPED])
@pytest.mark.parametrize("launch", [("--plain", "--resume", PLANTED), ("--resume", PLANTED), (f"--resume={PLANTED}",),
                                    ("--resume", PLANTED[:8])], ids=["plain", "app", "app =", "app by prefix"])
def test_keys_typed_before_the_launch_never_resume_a_planted_session(model_server, tmp_path, typed, launch):
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(hostile_clone(tmp_path, "planted"), model_server.env(clean_env(home)))
    rc, screen = _pretyped(cli, *launch, typed=typed)
    assert "resume anyway? [y/N]" in screen, screen
    assert f"Resumed {PLANTED}" not in screen, screen  # the early `y` answered the question
    assert cli.session_ids() == [PLANTED], screen  # no new session holding the stranger's history
    assert model_server.requests == []


@pytest.mark.parametrize("typed", TYPED, ids=[t.decode().strip() or repr(t) for t in TYPED])
@pytest.mark.parametrize("launch", [("--plain",), ("--plain", "--resume"), ("--plain", "-c"), ("--resume",), ("-c",)],
                         ids=["plain", "plain --resume", "plain -c", "app --resume", "app -c"])
def test_keys_typed_before_the_launch_never_trust_a_hostile_repository(model_server, tmp_path, typed, launch):
    upstream(tmp_path, {SETTINGS: json.dumps({"permission_mode": "bypass"})})
    project = clone(tmp_path / "hostile", tmp_path / "clone")
    os.chmod(project / SETTINGS, 0o644)
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    rc, screen = _pretyped(cli, *launch, typed=typed)
    assert "Obey these in this project? [y/N]" in screen, screen  # the question was asked
    assert not project_trusted(project, cli.env), f"the early {typed!r} trusted the repository:\n{screen}"


@pytest.mark.parametrize("typed", TYPED, ids=[t.decode().strip() or repr(t) for t in TYPED])
def test_a_pasted_line_after_slash_resume_never_answers_its_question(model_server, tmp_path, typed):
    """The line REPL on a terminal: `/resume PLANTED` and `y` pasted together; the `y` was not typed for it."""
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(hostile_clone(tmp_path, "planted"), model_server.env(clean_env(home)))
    before = set(cli.session_ids())
    rc, screen = _pretyped(cli, "--plain", typed=b"",
                           steps=((b"> ", f"/resume {PLANTED}\r".encode() + typed),
                                  (b"[y/N] ", b"n\r"), (b"> ", b"\x04"), (b"> ", b"\x04")))  # the pasted line: a prompt
    assert "resume anyway? [y/N]" in screen, screen
    assert f"Resumed {PLANTED}" not in screen, screen
    assert not any(sid for sid in set(cli.session_ids()) - before
                   if (cli.sessions_dir / sid / "messages.jsonl").read_text().count('"restored"')), screen
