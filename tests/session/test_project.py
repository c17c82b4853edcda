"""Finding the project and reading git's HEAD without spawning git, checked against git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evo_agent.session import SessionStore, find_project_dir, git_branch_of, git_worktree_root
from evo_agent.session.project import git_branch_by_spawning


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def test_an_unborn_head_gives_its_branch_name(tmp_path):
    repo = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(repo)], check=True)
    assert git_branch_of(repo) == "trunk" == git(repo, "symbolic-ref", "--short", "HEAD")
    assert git_branch_by_spawning(repo) == "trunk"
    store = SessionStore(repo, warn=lambda line: None)
    assert store.create(model="m", provider="demo").meta.git_branch == "trunk"


def test_a_detached_head_gives_the_short_commit(project):
    commit = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "--detach", commit)
    assert git_branch_of(project) == git(project, "rev-parse", "--short", "HEAD") == commit[:7]
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    assert git_branch_of(deep) == commit[:7]


def test_a_branch_with_a_slash_in_a_linked_worktree(project, tmp_path):
    other = tmp_path / "wt"
    git(project, "worktree", "add", "-q", "-b", "feature/x", str(other))
    assert (other / ".git").is_file()  # `gitdir: …/.git/worktrees/wt`
    assert git_branch_of(other) == "feature/x" == git(other, "rev-parse", "--abbrev-ref", "HEAD")
    assert git_branch_of(project) == "main"
    assert git_worktree_root(other / "sub" if (other / "sub").mkdir() is None else other) == other


def test_outside_a_repository_there_is_no_branch(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    if git_worktree_root(plain) is None:  # the machine's /tmp is not inside a repository
        assert git_branch_of(plain) is None


def test_find_project_dir_prefers_the_nearest_evo_agent_then_the_git_root(project):
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_project_dir(deep) == project
    (project / "src" / ".evo-agent").mkdir()
    assert find_project_dir(deep) == project / "src"
    assert find_project_dir(project) == project
