"""A git older than 2.31 never runs a repository's filter driver unasked (SPEC §9).

Unasked git turns off each clean/smudge filter (and textconv driver) the repository's configuration defines through
`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which take a driver's name verbatim. git reads those
variables only since 2.31 (March 2021): Debian 11's git (2.30) and Ubuntu 20.04's (2.25) ignore them, so on those
machines an unpacked archive's `[filter "trap"] clean = <payload>` with `* filter=trap` ran its payload on an
unasked `git status` or `git diff` (which re-hash the files an archive's index has other stat data for), and on a
`git status` a user's `Bash(git status:*)` rule allowed. Now such a git is found out (it does not see a setting given
that way) and the command asks.

The older git is the machine's own git with those variables taken away before it starts: exactly what git before
2.31 does with them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, plan_ruled_git
from tests.security.partial_clone import filter_named


def _older_git(tmp_path: Path) -> Path:
    """A directory holding a `git` that reads no GIT_CONFIG_COUNT/KEY_n/VALUE_n, as git before 2.31."""
    bin_dir = tmp_path / "old-git"
    bin_dir.mkdir()
    real = shutil.which("git")
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        "unset GIT_CONFIG_COUNT\n"
        'i=0; while [ $i -lt 100 ]; do unset "GIT_CONFIG_KEY_$i" "GIT_CONFIG_VALUE_$i"; i=$((i + 1)); done\n'
        f'exec {real} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    return bin_dir


def _run(command: str, project: Path, path: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": path})


@pytest.mark.parametrize("command", ["git status", "git diff", "git status --short"])
def test_an_older_git_never_runs_a_filter_unasked(tmp_path, command):
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, "trap")
    path = f"{_older_git(tmp_path)}:{os.environ['PATH']}"
    plan = plan_read_only(command, repo, search_path=path)
    if isinstance(plan, ReadOnlyPlan):
        _run(plan.command, repo, plan.path)
    assert not marker.exists(), plan
    assert isinstance(plan, str) and "2.31" in plan, plan  # it asks, and says why


def test_an_older_git_never_runs_a_filter_under_a_users_rule(tmp_path):
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, "trap")
    path = f"{_older_git(tmp_path)}:{os.environ['PATH']}"
    ruled = plan_ruled_git("git status -v", repo, search_path=path)
    assert ruled is not None
    _run(ruled, repo, path)
    assert not marker.exists()


def test_a_repository_cannot_pass_for_a_newer_git(tmp_path):
    """The probe's value is drawn anew each time: a configuration that sets the probe's key itself proves nothing."""
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, "trap")
    subprocess.run(["git", "config", "evo-agent.probe", "1"], cwd=repo, check=True)
    plan = plan_read_only("git status", repo, search_path=f"{_older_git(tmp_path)}:{os.environ['PATH']}")
    assert isinstance(plan, str), plan


def test_the_control_the_older_git_runs_the_filter_when_told_through_those_variables(tmp_path):
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, "trap")
    _run("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=filter.trap.clean GIT_CONFIG_VALUE_0= git status", repo,
         f"{_older_git(tmp_path)}:{os.environ['PATH']}")
    assert marker.exists()


def test_the_control_the_machines_git_runs_unasked_with_the_filter_off(tmp_path):
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, "trap")
    plan = plan_read_only("git status", repo)
    assert isinstance(plan, ReadOnlyPlan), plan
    _run(plan.command, repo, plan.path)
    assert not marker.exists()
