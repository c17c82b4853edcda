"""What a user may type as a remote search: any text is answered or refused in one line, never blamed on the store.

Real cluster and the real console script: a search text of bytes that are not UTF-8 (as a shell passes them)
failed with "the team store … failed: 'utf-8' codec can't encode …", and one of thousands of words waited out the
idle window ("the server sent nothing for 30s"). The controls: texts with regex and tsquery syntax are words.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import COMMAND, Cli

from .test_cli import team_cli


@pytest.fixture
def alice(tmp_path: Path, sync_url: str) -> tuple[Cli, str]:
    cli = team_cli(tmp_path, "alice", "git@github.com:team/app.git", sync_url, EVO_AGENT_SYNC_TIMEOUT="10")
    return cli, cli.run("-p", "the wombat plan, step (2) of 3*").hint_id()


def _search(cli: Cli, text: str | bytes) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, "sessions", "search", "--remote", text], cwd=cli.project, env=cli.env,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("text", [b"wom\xffbat", b"\xc3wombat", "wombat " * 18000, "w" * 100_000],
                         ids=["not utf-8", "a cut sequence", "18,000 words", "one word of 100,000"])
def test_a_search_text_the_store_cannot_take_is_refused_in_one_line(alice: tuple[Cli, str],
                                                                   text: str | bytes) -> None:
    cli, _ = alice
    done = _search(cli, text)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "search text" in err and "team store postgresql" not in err and "sent nothing" not in err, err


@pytest.mark.parametrize("text", ["wombat", "wom.*bat|wombat$", "(2) & !of | 3*", "'; DROP TABLE x; --wombat",
                                  "wombat " * 60])
def test_any_other_text_is_searched(alice: tuple[Cli, str], text: str) -> None:
    cli, sid = alice
    done = _search(cli, text)
    assert done.returncode in (0, 1) and b"Traceback" not in done.stderr and not done.stderr, done.stderr
    if "wombat" in text.split() or text.startswith("wombat"):
        assert sid.encode() in done.stdout, done.stdout
