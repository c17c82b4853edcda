"""An unasked git never waits on a file of the work tree that git itself opens (SPEC §9).

Beyond its `.git/`, git opens files in the work tree: every directory's `.gitignore` on a status, every
`.gitattributes` on the path of a file it diffs or re-hashes, the top `.mailmap` on a log that shows a name, and
each nested repository's `HEAD` and `commondir` when a status meets its directory (`is_git_directory`, also
through a `.git` file's `gitdir:`). An unpacked archive can ship any of them as a FIFO: `git status`, `git diff`,
`git log -1 --format=%aN` ran unasked and waited for a writer until the bash tool's timeout. Now they ask.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .hostile import run_bash_call, unpack_archive_of, upstream


def _fifo_at(rel: str):
    def plant(origin: Path) -> None:
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(origin / rel)

    return plant


def _nested(git_file: str | None, fifo: str):
    """A nested repository in `vendor/lib` (its `.git` a directory, or a `gitdir:` file naming `../store`) whose
    git file `fifo` is a FIFO."""
    def plant(origin: Path) -> None:
        git_dir = origin / "vendor" / ("store" if git_file else "lib/.git")
        for sub in ("objects", "refs"):
            (git_dir / sub).mkdir(parents=True, exist_ok=True)
        (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
        (git_dir / fifo).unlink(missing_ok=True)
        os.mkfifo(git_dir / fifo)
        if git_file:
            (origin / "vendor" / "lib").mkdir(parents=True, exist_ok=True)
            (origin / "vendor" / "lib" / ".git").write_text(git_file)

    return plant


# what is a FIFO, and the unasked command that opened it
CASES = {
    "top .gitignore": (_fifo_at(".gitignore"), "git status"),
    "nested .gitignore": (_fifo_at("docs/.gitignore"), "git status --short"),
    "top .gitattributes": (_fifo_at(".gitattributes"), "git diff"),
    "nested .gitattributes": (_fifo_at("docs/.gitattributes"), "git log -p -1"),
    ".mailmap": (_fifo_at(".mailmap"), "git log -1 --format=%aN"),
    "nested repository's HEAD": (_nested(None, "HEAD"), "git status"),
    "nested repository's commondir": (_nested(None, "commondir"), "git status"),
    "HEAD a nested .git file names": (_nested("gitdir: ../store\n", "HEAD"), "git status"),
}




def _archive(tmp_path, plant) -> Path:
    origin = upstream(tmp_path, {"docs/notes.txt": "a needle\n", "src/app.txt": "another\n"})
    (origin / "docs" / "notes.txt").write_text("a changed needle\n")  # a change for status and diff to show
    plant(origin)
    return unpack_archive_of(origin, tmp_path / "unpacked")


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_unasked_git_whose_work_tree_file_is_a_fifo_asks(tmp_path, model_server, case):
    plant, command = CASES[case]
    project = _archive(tmp_path, plant)
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


def test_the_control_ordinary_files_and_a_nested_repository_run_unasked(tmp_path, model_server):
    def plant(origin: Path) -> None:
        (origin / ".gitignore").write_text("*.log\n")
        (origin / "docs" / ".gitattributes").write_text("*.txt text\n")
        (origin / ".mailmap").write_text("Mallory <m@example.invalid>\n")
        store = origin / "vendor" / "store"
        for sub in ("objects", "refs"):
            (store / sub).mkdir(parents=True)
        (store / "HEAD").write_text("ref: refs/heads/main\n")
        (origin / "vendor" / "lib").mkdir()
        (origin / "vendor" / "lib" / ".git").write_text("gitdir: ../store\n")

    project = _archive(tmp_path, plant)
    result, _, block = run_bash_call(tmp_path, model_server, project, "git status --short")
    assert "needs approval" not in result.err, result.err
    assert "docs/notes.txt" in block["content"]


def _ignored_dir(tracked: bool, fifo: str = ".gitattributes"):
    """`vendor/` ignored by `.gitignore`, holding a FIFO `.gitattributes` (and, `tracked`, a force-added file that
    changed, whose attributes git reads when it diffs it)."""
    def plant(origin: Path) -> None:
        (origin / ".gitignore").write_text("vendor/\n")
        (origin / "vendor" / "pkg").mkdir(parents=True)
        if tracked:
            (origin / "vendor" / "pkg" / "keep.txt").write_text("kept\n")
            subprocess.run(["git", "add", "-f", "vendor/pkg/keep.txt"], cwd=origin, check=True)
            (origin / "vendor" / "pkg" / "keep.txt").write_text("kept, and changed\n")
        os.mkfifo(origin / "vendor" / "pkg" / fifo)

    return plant


def test_a_fifo_in_an_ignored_directory_holding_a_tracked_file_still_asks(tmp_path, model_server):
    """The walk skips what git ignores, but not a directory whose tracked file git diffs."""
    project = _archive(tmp_path, _ignored_dir(tracked=True))
    result, _, block = run_bash_call(tmp_path, model_server, project, "git diff --stat")
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


def test_a_fifo_where_git_never_looks_costs_no_question(tmp_path, model_server):
    """An ignored `vendor/` git never enters (nothing tracked there): its FIFO holds nothing, so nothing asks."""
    project = _archive(tmp_path, _ignored_dir(tracked=False))
    result, _, block = run_bash_call(tmp_path, model_server, project, "git status --short")
    assert "needs approval" not in result.err, result.err
    assert "docs/notes.txt" in block["content"] and "timed out" not in block["content"]


@pytest.mark.parametrize("command", ["git status --ignored", "git status --ignored=traditional -uall"])
def test_a_status_that_lists_ignored_files_walks_the_ignored_directories_too(tmp_path, model_server, command):
    """`--ignored` makes git enter the directories it otherwise skips, and read their `.gitignore`."""
    project = _archive(tmp_path, _ignored_dir(tracked=False, fifo=".gitignore"))
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


@pytest.mark.parametrize("command", ["git diff --stat", "git status --short", "cd src && git diff --stat"])
def test_a_fifo_beside_a_tracked_file_elsewhere_asks_when_git_runs_in_a_subdirectory(tmp_path, model_server,
                                                                                    command):
    """Started in `src/` (or the command moves there), git still reads the whole work tree: the index it was
    checked against listed `src/` alone, so the walk skipped the ignored `vendor/` whose tracked file git diffs."""
    project = _archive(tmp_path, _ignored_dir(tracked=True))
    result, _, block = run_bash_call(tmp_path, model_server, project / "src", command)
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]
