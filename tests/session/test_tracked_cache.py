"""git's answer of which sessions it tracks is kept only while the git index is the one it read.

A session git tracks is foreign (trust.py): the kept answer must never let one through. Each test
builds the repository the way an attacker would hand it over (init, add -f, commit, clone) and
checks the verdict, not the cache's internals; "git is gone from PATH" is how a test sees that an
answer came from the cache and not from a process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from evo_agent.session import SessionStore, tracked_session_ids
from evo_agent.session import tracked_cache as tracked_cache_module
from tests.builders import make_git_project, seed_session

RACY_NS = 50_000_000  # above the file clock's tick; `settle()` waits it out (the real window is 2 s)


@pytest.fixture(autouse=True)
def short_racy_window(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tracked_cache_module, "RACY_NS", RACY_NS)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def settle() -> None:
    """Let the index just written leave the racy window, so its answer may be kept."""
    time.sleep(3 * RACY_NS / 1e9)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   check=True, capture_output=True)


def _session(project: Path) -> str:
    """A session recorded in `project` by this user (0700/0600), answered once."""
    return seed_session(project, ("hello", "hi"))


def _commit_session(root: Path, sid: str) -> None:
    _git(root, "add", "-f", f".evo-agent/sessions/{sid}/messages.jsonl")
    _git(root, "commit", "-q", "-m", "plant")


@pytest.fixture
def no_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # noqa: ANN201
    """Call it to take git off PATH: from then on only a kept answer can say what git tracks."""
    empty = tmp_path / "no-git-bin"
    empty.mkdir()
    return lambda: monkeypatch.setenv("PATH", str(empty))


def test_the_answer_is_kept_while_the_index_is_unchanged(tmp_path, no_git):
    project = make_git_project(tmp_path)
    planted = _session(project)
    _commit_session(project, planted)
    settle()
    sessions = project / ".evo-agent" / "sessions"
    assert tracked_session_ids(sessions) == {planted}  # git ran, its answer kept
    no_git()
    assert tracked_session_ids(sessions) == {planted}  # no git on PATH: the kept answer
    for path in (tmp_path / "user-cache").rglob("*.tracked.json"):
        path.unlink()
    assert tracked_session_ids(sessions) == frozenset()  # nothing kept, no git: "none tracked", as before


def test_a_session_committed_after_the_answer_was_kept_is_tracked(tmp_path):
    project = make_git_project(tmp_path)
    sid = _session(project)
    settle()
    store = SessionStore(project, warn=lambda line: None)
    assert tracked_session_ids(store.sessions_dir) == frozenset()  # kept: none tracked
    _commit_session(project, sid)  # a new index (git renames one over the old)
    assert tracked_session_ids(store.sessions_dir) == {sid}
    settle()
    assert tracked_session_ids(store.sessions_dir) == {sid}
    assert "tracked by git" in (SessionStore(project).foreign_reason(sid) or "")
    _git(project, "rm", "-q", "--cached", "-r", ".evo-agent/sessions")
    assert tracked_session_ids(store.sessions_dir) == frozenset()


def test_a_racy_index_is_never_kept(tmp_path, no_git, monkeypatch):
    monkeypatch.setattr(tracked_cache_module, "RACY_NS", 3600 * 10**9)  # whatever the load: still in the window
    project = make_git_project(tmp_path)
    sid = _session(project)
    _commit_session(project, sid)  # the index is younger than the racy window
    sessions = project / ".evo-agent" / "sessions"
    assert tracked_session_ids(sessions) == {sid}
    no_git()
    assert tracked_session_ids(sessions) == frozenset()  # nothing was kept: git's answer is not there to reuse


def test_a_hostile_clone_at_the_same_path_is_asked_again(tmp_path):
    """The user's project listed (its answer kept), then replaced by a clone that commits a session."""
    (tmp_path / "hostile").mkdir()
    hostile_project = make_git_project(tmp_path / "hostile")
    planted = _session(hostile_project)
    _commit_session(hostile_project, planted)
    (tmp_path / "mine").mkdir()
    work = make_git_project(tmp_path / "mine")
    _session(work)
    settle()
    assert [row.foreign for row in SessionStore(work).list()] == [None]  # our own, none tracked: kept
    shutil.rmtree(work)
    subprocess.run(["git", "clone", "-q", str(hostile_project), str(work)], check=True, capture_output=True)
    sessions = work / ".evo-agent" / "sessions"
    for path in (sessions, sessions / planted):
        path.chmod(0o700)  # as the user's own would be: only git's answer can tell
    (sessions / planted / "messages.jsonl").chmod(0o600)
    for _ in range(2):  # racy, then kept
        rows = {row.id: row for row in SessionStore(work).list()}
        assert "tracked by git" in (rows[planted].foreign or ""), rows[planted].foreign
        settle()
    assert SessionStore(work).latest() is None  # never continued by -c


def test_a_cache_file_that_is_a_link_or_garbage_is_ignored(tmp_path):
    project = make_git_project(tmp_path)
    planted = _session(project)
    _commit_session(project, planted)
    settle()
    sessions = project / ".evo-agent" / "sessions"
    assert tracked_session_ids(sessions) == {planted}
    [kept] = (tmp_path / "user-cache").rglob("*.tracked.json")
    text = kept.read_text()
    assert planted in text
    lie = tmp_path / "lie.json"
    lie.write_text(text.replace(f'"{planted}"', ""))  # the right key, no id: what a planted file would say
    stale = text.replace(f'"{planted}"', "").replace('"version": 1, "key": [', '"version": 1, "key": ["/elsewhere", ')
    for planted_file in ("link", "garbage", "another key"):
        kept.unlink()
        if planted_file == "link":
            kept.symlink_to(lie)
        elif planted_file == "garbage":
            kept.write_bytes(b"\x00{not json")
        else:
            kept.write_text(stale)
        assert tracked_session_ids(sessions) == {planted}, planted_file
    assert not os.path.islink(kept)  # replaced by the answer git gave, never written through the link


def test_an_index_rewritten_in_place_with_its_size_and_mtime_kept_is_asked_again(tmp_path):
    """The same inode, the same size, the mtime put back (`touch -d`, os.utime): only the ctime moved.

    The kept answer says "none tracked" (the session sat at a path of the same length outside `sessions/`);
    the rewritten index tracks the session itself. The verdict must come from git again, not the cache.
    """
    project = make_git_project(tmp_path)
    sid = _session(project)
    decoy = project / ".evo-agent" / "sessionz" / sid / "messages.jsonl"  # as long a path, not in sessions/
    decoy.parent.mkdir(parents=True)
    decoy.write_text("{}\n")
    _git(project, "add", "-f", str(decoy))
    _git(project, "commit", "-q", "-m", "decoy")
    index = project / ".git" / "index"
    innocent = index.read_bytes()
    _git(project, "rm", "-q", "--cached", str(decoy))
    _commit_session(project, sid)
    guilty = index.read_bytes()
    assert len(guilty) == len(innocent) and guilty != innocent
    with open(index, "r+b") as f:  # back to the innocent index, in place
        f.write(innocent)
    settle()
    sessions = project / ".evo-agent" / "sessions"
    assert tracked_session_ids(sessions) == frozenset()  # git's answer for the innocent index, kept
    before = os.lstat(index)
    with open(index, "r+b") as f:  # the guilty bytes, the same inode and size
        f.write(guilty)
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime put back
    after = os.lstat(index)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    for _ in range(2):  # racy, then kept
        assert tracked_session_ids(sessions) == {sid}
        assert "tracked by git" in (SessionStore(project).foreign_reason(sid) or "")
        settle()
