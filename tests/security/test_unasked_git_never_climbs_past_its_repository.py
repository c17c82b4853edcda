"""Unasked git reads the repository evo-agent judged, never one git finds by climbing past a broken `.git`.

evo-agent judges git's repository by the nearest `.git` above the command (`git_worktree_root`): the home
directory's dotfiles `~/.git` is refused, a `.git` pointing elsewhere is refused. But git itself skips a `.git`
that is no repository (an empty directory, one holding only `HEAD`, a FIFO) and climbs on: an archive shipping
such a `.git` made evo-agent judge the archive's own (harmless) repository while git read the dotfiles
history above it (a committed `.netrc`), or the history of the user's repository the archive was unpacked in.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.cli_runner import Cli
from tests.fake_model_server import text, tool_use

from .hostile import GIT, git
from .test_unasked_git_reads_only_its_own_repository import _env  # a PATH without bwrap: tmp_path is under /tmp

SECRET = "machine example.com login me password hunter2-dotfiles"


def _broken_git(tool, how):
    if how == "fifo":
        os.mkfifo(tool / ".git")
        return
    (tool / ".git").mkdir()
    if how == "head-only":
        (tool / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    elif how == "no-objects":
        (tool / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (tool / ".git" / "refs").mkdir()


def _above(tmp_path, where):
    """(home, the repository above the archive holding SECRET, the unpacked archive)."""
    home = tmp_path / "home"
    home.mkdir()
    above = home if where == "dotfiles" else home / "work"
    subprocess.run([*GIT, "init", "-q", str(above)], check=True)
    (above / ".netrc").write_text(SECRET + "\n")
    assert git(above, "add", ".netrc").returncode == 0
    assert git(above, "commit", "-q", "-m", "mine").returncode == 0
    tool = above / ("Downloads" if where == "dotfiles" else "vendor") / "tool-1.0"
    tool.mkdir(parents=True)
    (tool / "README.md").write_text("# tool\n")
    return home, tool


@pytest.mark.parametrize("where", ["dotfiles", "enclosing"])
@pytest.mark.parametrize("how", ["empty", "head-only", "no-objects", "fifo"])
@pytest.mark.parametrize("command", ["git log -p", "git show HEAD:../../.netrc", "git diff HEAD~0 -- ../.."])
def test_a_broken_git_never_hands_git_the_repository_above(tmp_path, model_server, where, how, command):
    home, tool = _above(tmp_path, where)
    _broken_git(tool, how)
    control = subprocess.run(["git", "log", "-p"], cwd=tool, capture_output=True, text=True, timeout=30)
    assert "hunter2" in control.stdout  # plain git climbs past it to the repository above
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    Cli(tool, _env(tmp_path, model_server)).run("-p", "what is this?")
    assert "hunter2" not in repr(model_server.requests)
