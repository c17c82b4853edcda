"""`git diff` run unasked reads the project's files, never a work tree the repository's config names elsewhere.

A downloaded archive keeps its `.git/config`; `core.worktree` there moves git's work tree anywhere (`~`), and
an index the archive ships lists `.ssh/id_rsa` with some dummy blob. The model's unasked `git diff` then
printed the victim's real key as the "change" (`-dummy` / `+-----BEGIN …`), and `git status` listed the home
directory. The checked command now names the work tree on git's command line: the directory holding `.git`.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import GIT, unpack_archive_of

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- the-victims-real-key"


def _armed_archive(tmp_path, worktree: str):
    victim = tmp_path / "home"  # the archive is unpacked below it: ~/Downloads/tool
    (victim / ".ssh").mkdir(parents=True)
    (victim / ".ssh" / "id_rsa").write_text(KEY + "\n")
    (victim / "taxes-2025.pdf").write_text("private\n")
    scratch = tmp_path / "scratch"
    (scratch / ".ssh").mkdir(parents=True)
    (scratch / ".ssh" / "id_rsa").write_text("dummy\n")
    repo = tmp_path / "mallory"
    subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("# tool\n")
    git_dir = str(repo / ".git")
    subprocess.run([*GIT, f"--git-dir={git_dir}", f"--work-tree={scratch}", "add", ".ssh/id_rsa"], check=True)
    subprocess.run([*GIT, f"--git-dir={git_dir}", "config", "core.worktree",
                    worktree.format(victim=victim)], check=True)
    (victim / "Downloads").mkdir()
    project = unpack_archive_of(repo, victim / "Downloads" / "tool")
    return project, victim


@pytest.mark.parametrize("worktree", ["{victim}", "../../.."])  # relative to the git directory: ~
@pytest.mark.parametrize("command", ["git diff", "git diff --stat", "git status", "git status -uall --short",
                                     "git diff HEAD", "git log -p"])
def test_a_work_tree_the_archive_config_names_is_never_read_unasked(tmp_path, model_server, worktree, command):
    project, victim = _armed_archive(tmp_path, worktree)
    control = subprocess.run(["git", "diff"], cwd=project, capture_output=True, text=True)
    assert "the-victims-real-key" in control.stdout  # plain git would print the key
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    # A PATH without bwrap: where the sandbox cannot run (and under a real ~, which the read-only sandbox shows
    # as it is; pytest's tmp_path lies under /tmp, which the sandbox replaces), the checked command alone holds.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "bash", "setpriv"):
        found = shutil.which(program)
        if found:
            os.symlink(found, bin_dir / program)
    env = model_server.env(clean_env(victim, PATH=str(bin_dir)))
    result = Cli(project, env).run("-p", "what changed?")
    assert result.rc == 0, result.err
    sent = repr(model_server.requests)
    assert "the-victims-real-key" not in sent and "taxes-2025" not in sent
