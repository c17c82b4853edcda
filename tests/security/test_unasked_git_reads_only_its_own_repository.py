"""Unasked git reads the checkout's own repository, never one a `.git` file or link points it to.

An archive can ship `.git` as a file (`gitdir: ../work/.git`) or a symbolic link (`.git -> ../../.dotfiles`):
unpacked in `~/src/tool` next to the victim's `~/src/work`, or in `~/Downloads/tool` below a dotfiles bare
repository, every unasked `git log -p` / `git show HEAD:.env` read that other repository's history into the
session. A `.git` may still point out of the project where git itself made it so: a linked worktree (its git
directory names this `.git` back) and a submodule (the superproject's `.git/modules/<name>` above it).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_runner import Cli
from tests.fake_model_server import text, tool_use

from .hostile import GIT, env_without_bwrap, git

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-the-victims-own"


def _env(tmp_path, model_server):
    return env_without_bwrap(tmp_path, model_server)


def _victims_repo(src):
    work = src / "work"
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    (work / "deploy.env").write_text(SECRET + "\n")
    assert git(work, "add", "-A").returncode == 0
    assert git(work, "commit", "-q", "-m", "deploy settings").returncode == 0
    return work


def _archive(src, how):
    tool = src / "tool"
    tool.mkdir()
    (tool / "README.md").write_text("# tool\n")
    if how == "commondir":  # a .git directory of two files: HEAD, and where refs, objects and config are
        (tool / ".git").mkdir()
        (tool / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (tool / ".git" / "commondir").write_text("../../work/.git\n")
    elif how == "gitdir-file":
        (tool / ".git").write_text("gitdir: ../work/.git\n")
    elif how == "gitdir-absolute":
        (tool / ".git").write_text(f"gitdir: {src / 'work' / '.git'}\n")
    elif how in ("inner-links", "alternates", "objects-link"):  # a .git directory whose insides lead next door
        subprocess.run([*GIT, "init", "-q", str(tool)], check=True)
        inner = tool / ".git"
        victim = src / "work" / ".git"
        if how == "inner-links":  # refs and objects are the victim's
            for name in ("refs", "objects"):
                shutil.rmtree(inner / name)
                os.symlink(f"../../work/.git/{name}", inner / name)
        else:
            if how == "alternates":  # the victim's objects are this repository's too
                (inner / "objects" / "info" / "alternates").write_text(f"{victim / 'objects'}\n")
            else:
                shutil.rmtree(inner / "objects" / "pack")
                os.symlink(f"{victim / 'objects' / 'pack'}", inner / "objects" / "pack")
                assert git(src / "work", "gc", "-q").returncode == 0  # the victim's history packed
            shutil.rmtree(inner / "refs")
            os.symlink("../../work/.git/refs", inner / "refs")
            os.symlink("../../work/.git/packed-refs", inner / "packed-refs")  # where `gc` put the branch
    else:
        os.symlink("../work/.git", tool / ".git")
    return tool


@pytest.mark.parametrize("how", ["gitdir-file", "gitdir-absolute", "symlink", "commondir", "inner-links", "alternates",
                                 "objects-link"])
@pytest.mark.parametrize("command", ["git log -p", "git show HEAD:deploy.env", "git diff HEAD", "git status"])
def test_a_git_file_or_link_pointing_at_another_repository_is_not_read_unasked(tmp_path, model_server, how,
                                                                                command):
    src = tmp_path / "src"
    src.mkdir()
    _victims_repo(src)
    tool = _archive(src, how)
    assert "wJalrXUtnFEMI" in subprocess.run(["git", "log", "-p"], cwd=tool, capture_output=True,
                                              text=True).stdout  # plain git reads the other repository
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    result = Cli(tool, _env(tmp_path, model_server)).run("-p", "what is this?")
    assert "wJalrXUtnFEMI" not in repr(model_server.requests)
    assert "needs approval" in result.err


def test_the_control_a_linked_worktree_and_a_submodule_still_run_git_unasked(tmp_path, model_server):
    src = tmp_path / "src"
    src.mkdir()
    work = _victims_repo(src)
    assert git(work, "worktree", "add", "-q", str(src / "linked")).returncode == 0
    superproject = src / "super"
    subprocess.run([*GIT, "init", "-q", str(superproject)], check=True)
    assert git(superproject, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(work),
               "sub").returncode == 0
    for checkout in (src / "linked", superproject / "sub"):
        assert (checkout / ".git").is_file()
        model_server.script(tool_use("bash", {"command": "git log -1 --format=%s"}, id="t1"), text("done"))
        result = Cli(checkout, _env(tmp_path, model_server)).run("-p", "last commit?")
        assert "needs approval" not in result.err, result.err
        assert "deploy settings" in repr(model_server.requests[-1]["messages"][-1])
