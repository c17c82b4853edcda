"""A FIFO an unpacked archive puts where evo-agent reads git's files never hangs its start.

tar keeps FIFOs. `.git/HEAD` (or `.git` itself, or the `HEAD` of the directory a `gitdir:` file names) as a
FIFO made `evo-agent -p hi` block forever before its first request, reading the branch for the session's
record. Only regular files are read; the branch is then unknown (and git is not asked: it would block too).
"""

from __future__ import annotations

import json
import os

import pytest

from evo_agent.session.git import repository
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text


def _plant(tool, where):
    if where == "HEAD":
        (tool / ".git").mkdir()
        os.mkfifo(tool / ".git" / "HEAD")
    elif where == ".git":
        os.mkfifo(tool / ".git")
    else:  # a gitdir: file naming a directory whose HEAD is a FIFO
        (tool / "gd").mkdir()
        os.mkfifo(tool / "gd" / "HEAD")
        (tool / ".git").write_text("gitdir: gd\n")


@pytest.mark.parametrize("where", ["HEAD", ".git", "gitdir"])
def test_a_fifo_for_git_s_files_never_hangs_the_start(tmp_path, model_server, where):
    tool = tmp_path / "tool"
    tool.mkdir()
    _plant(tool, where)
    model_server.script(text("hello"))
    cli = Cli(tool, model_server.env(clean_env(tmp_path / "home")))
    result = cli.run("-p", "hi", timeout=120)  # a hang fails here, whatever the machine's speed
    assert result.rc == 0, result.err
    assert result.out.strip() == "hello"
    assert cli.run("sessions", "list", timeout=120).rc == 0
    assert repository(tool) is None  # git is never started on it: it would block until its timeout (10 s)


def test_a_fifo_for_a_sessions_fetched_marker_never_hangs_the_listing(tmp_path, model_server):
    """A session directory unpacked with `fetched` (whose copy it is) as a FIFO: listing and `-c` read it."""
    tool = tmp_path / "tool"
    sid = "1796400000000_deadbeef"
    session = tool / ".evo-agent" / "sessions" / sid
    session.mkdir(parents=True)
    for directory in (tool / ".evo-agent", session.parent, session):
        os.chmod(directory, 0o700)
    (session.parent / ".gitignore").write_text("*\n")
    start = {"type": "session_start", "session_id": sid, "timestamp": "2026-01-01T00:00:00.000+00:00",
             "cwd": str(tool), "model": "m", "provider": "anthropic"}
    (session / "messages.jsonl").write_text(json.dumps(start) + "\n")
    os.mkfifo(session / "fetched")
    cli = Cli(tool, model_server.env(clean_env(tmp_path / "home")))
    assert cli.run("sessions", "list", timeout=120).rc == 0
    assert cli.run("sessions", "list", "--all", timeout=120).rc == 0
    continued = cli.run("-c", "-p", "hi", timeout=120)
    assert "no session to continue" in continued.err  # it ends, and the planted one is not continued
