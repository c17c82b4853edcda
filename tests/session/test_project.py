"""Finding the project and reading git's HEAD without spawning git, checked against git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evo_agent.session import SessionStore, find_project_dir, git_branch_of, git_worktree_root
from evo_agent.session.project import _include_paths, git_branch_by_spawning, included_special_file


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


# Fragments of git configuration an attacker may combine to hide an `include.path` from a reader that is not git.
_HEADERS = ["[include]", "[INCLUDE]", "[Include]", '[includeIf "gitdir:/"]', '[includeif "onbranch:m\\"x]"]',
            '[include "sub"]', "[core]", "[include.sub]", "[includeIf]"]
_KEYS = ["path", "PATH", "Path", "x", "path2"]
_VALUES = ["/a", '"/b c"', "/d/\\\ne", '"/f"g', "/h ; comment", "/i # c", "/j\\\\", '"/k\\"l"', "/m\\tn", "  /o  ",
           "/p\tq r", "/s\u00a0t", "/u\x0bv", "\t/w\t", "/x\\", "/y\0z"]
_SEPARATORS = ["\n", " ", "\t", "\r\n", "\n# comment\n", "\n; [include] path = /no\n"]


@st.composite
def _configs(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(_HEADERS)))
        key, value = draw(st.sampled_from(_KEYS)), draw(st.sampled_from(_VALUES))
        parts.append(f"{key}{draw(st.sampled_from([' = ', '=', ' =']))}{value}")
        parts.append(draw(st.sampled_from(_SEPARATORS)))
    return "[core]\n" + "\n".join(parts) + draw(st.sampled_from(["\n", ""]))  # the end of the file ends a line


@settings(max_examples=60, deadline=None)
@given(config=_configs())
def test_the_include_paths_read_are_the_ones_git_reads(tmp_path_factory, config):
    """project._include_paths (what evo-agent judges before any git runs) against git's own parser, on every valid
    spelling of headers, keys, quotes, escapes, comments, continued values, whitespace inside a value (a tab, a no-break
    space git takes as a letter, a vertical tab) and a file ending without a newline."""
    path = tmp_path_factory.mktemp("cfg") / "config"
    path.write_bytes(config.encode())
    got = subprocess.run(["git", "config", "--file", str(path), "--no-includes", "--null", "--get-regexp",
                          r"^include(if\..*)?\.path$"], capture_output=True, timeout=30)
    assume(got.returncode in (0, 1))  # 1: no such key; anything else: a file git refuses (and reads no further)
    by_git = [item.split(b"\n", 1)[1].decode() for item in got.stdout.split(b"\0") if item]
    ours = _include_paths(config.encode())  # each value in every spelling a git version gives it
    assert len(ours) == len(by_git), (ours, by_git)
    assert all(value in spellings for value, spellings in zip(by_git, ours)), (ours, by_git)


@settings(max_examples=200, deadline=None)
@given(tail=st.binary(max_size=600), text=st.text(max_size=300))
def test_judging_the_includes_of_any_configuration_never_raises(tmp_path_factory, tail, text):
    """Whatever bytes an archive's `.git/config` holds, the check answers (a path or None), never a traceback."""
    path = tmp_path_factory.mktemp("any") / "config"
    path.write_bytes(b"[include]\n\tpath = " + text.encode("utf-8", "surrogatepass") + b"\n" + tail)
    found = included_special_file(str(path))
    assert found is None or isinstance(found, str)
