"""plan_ruled_git: what a rule-approved read-only git command runs as (the settings unasked git gets)."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from evo_agent.tools.shell_allowlist import GIT_NO_SUBMODULES, GIT_SAFE_CONFIG, GIT_SAFE_DIFF
from evo_agent.tools.shell_readonly import plan_ruled_git


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_the_settings_stand_right_before_the_subcommand_and_the_words_stay(repo):
    plan = plan_ruled_git("git -c color.ui=never -C . diff --stat 'a b' src/*.py", repo)
    assert plan is not None
    words = shlex.split(plan)
    at = words.index("diff")
    assert words[at - len(GIT_SAFE_CONFIG):at] == list(GIT_SAFE_CONFIG)
    assert words[at + 1:at + 1 + len(GIT_NO_SUBMODULES) + len(GIT_SAFE_DIFF)] == [*GIT_NO_SUBMODULES, *GIT_SAFE_DIFF]
    assert words[at - len(GIT_SAFE_CONFIG) - 4:at - len(GIT_SAFE_CONFIG)] == ["-c", "color.ui=never", "-C", "."]
    assert plan.endswith(" --stat 'a b' src/*.py")  # quoted stays quoted, a glob stays bash's to expand
    assert "GIT_CONFIG_NOSYSTEM" in plan or "HOME=" in plan  # the door's environment


@pytest.mark.parametrize("command", ["git commit -m x", "git push", "git status -v | cat", "git log $REV",
                                     "git status; rm -rf x", "ls -l", "git"])
def test_what_is_not_one_read_only_git_command_runs_as_written(repo, command):
    assert plan_ruled_git(command, repo) is None
