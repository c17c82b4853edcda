"""evo-agent's own git is the system's, never a `git` the clone committed (SPEC §9: its git reads never run
repository code).

The door (session/git.py) named everything on git's command line but the program: `git`, looked up in the
user's PATH from the repository's root. A PATH with a relative entry (`node_modules/.bin`, `.`, `bin`, an
empty entry) then ran the clone's own `node_modules/.bin/git` on `evo-agent sessions list` and `-c`, before
any question. The door now runs git by its absolute path from an absolute PATH entry outside the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from evo_agent.session import run_git
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text

from .hostile import clone, git, upstream

WHERE = {"node_modules/.bin": "node_modules/.bin/git", ".": "git", "bin": "bin/git", "": "git"}


def _armed_clone(tmp_path, entry):
    marker = tmp_path / "PWNED"
    origin = upstream(tmp_path, {WHERE[entry]: f"#!/bin/sh\ntouch {marker}\nexec /usr/bin/git \"$@\"\n"})
    os.chmod(origin / WHERE[entry], 0o755)
    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "a tool").returncode == 0
    project = clone(origin, tmp_path / "clone")
    assert os.access(project / WHERE[entry], os.X_OK)
    return project, marker


@pytest.mark.parametrize("entry", sorted(WHERE))
def test_the_door_never_runs_a_git_the_clone_committed(tmp_path, monkeypatch, entry):
    project, marker = _armed_clone(tmp_path, entry)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", f"{entry}:{os.environ['PATH']}")
    head = run_git(project, "rev-parse", "HEAD")
    assert head is not None and len(head.strip()) == 40  # git ran, and answered
    assert run_git(project, "ls-files") is not None
    assert not marker.exists()


@pytest.mark.parametrize("entry", ["node_modules/.bin", "bin"])
def test_listing_and_continuing_in_the_clone_never_run_its_git(tmp_path, model_server, entry):
    project, marker = _armed_clone(tmp_path, entry)
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home, PATH=f"{entry}:{os.environ['PATH']}")))
    model_server.script(text("hello"), text("again"))
    assert cli.run("-p", "hi").rc == 0
    for args in (["sessions", "list"], ["-c", "-p", "more"], ["sessions", "list", "--json"]):
        result = cli.run(*args)
        assert result.rc == 0, result.err
        assert not marker.exists(), args


@pytest.mark.parametrize("entry", sorted(WHERE))
def test_without_a_system_git_the_door_runs_none_rather_than_the_clones(tmp_path, monkeypatch, entry):
    """No git in any absolute PATH entry (a minimal container, an archive unpacked without git): the door must
    not fall back to a bare `git`, which the kernel's lookup would find in the relative entry, the clone's."""
    project, marker = _armed_clone(tmp_path, entry)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", f"{entry}:{tmp_path / 'no-git-here'}")
    assert run_git(project, "rev-parse", "HEAD") is None  # as a machine without git answers
    assert not marker.exists()


def test_a_git_installed_in_home_still_serves_a_dotfiles_repository(tmp_path, monkeypatch):
    """The control: a dotfiles `~/.git` makes `~` the work tree of what lies below it, and the user's own git may
    live in `~` too (conda, a build in ~/.local/bin): that one is no clone's, and still runs."""
    home = tmp_path / "home"
    real_git = shutil.which("git")
    assert real_git is not None
    subprocess.run([real_git, "init", "-q", str(home)], check=True)
    own = home / ".local" / "bin"
    own.mkdir(parents=True)
    (own / "git").write_text(f"#!/bin/sh\nexec {real_git} \"$@\"\n")
    os.chmod(own / "git", 0o755)
    tool = home / "Downloads" / "tool-1.0"
    tool.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(own))
    assert run_git(tool, "rev-parse", "--show-toplevel") is not None
