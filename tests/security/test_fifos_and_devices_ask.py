"""A FIFO, socket or device never makes a read hang: the file tools refuse it, an unasked command asks (SPEC §9).

tar keeps FIFOs, so an unpacked archive can put one anywhere, `.git/` included; a clone can commit a symlink to
one (or to `/dev/zero`). An open of a FIFO waits for a writer forever: `cat pipe`, `wc -l *` or `grep -D read -r`
ran unasked and hung until the bash tool's timeout, and so did an unasked `git status` whose `.git/config`,
`.git/index` or `.git/packed-refs` was a FIFO. Now such a command asks, and so do `grep -D`/`--devices` (which
make a recursive grep read FIFOs and devices it skips by default).

Every run is bounded: the bash tool's own `timeout` and the subprocess's.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import run_bash_call, unpack_archive_of, upstream

COMMANDS = ["cat pipe", "head -5 pipe", "wc -l *", "grep needle pipe", "rg needle pipe", "tail -n 3 docs/../pipe",
            "nl link", "sort link", "cut -c1 docs/*", "cat docs/notes.txt | grep needle - pipe",
            "grep -r -D read needle .", "grep -rD read needle .", "grep -r --devices=read needle .",
            "grep -r --devices read needle docs", "egrep -r -Dread needle ."]
GIT_FILES = ["HEAD", "config", "index", "packed-refs", "info/exclude", "info/attributes",
             "objects/info/alternates", "commondir"]


def _archive(tmp_path, plant) -> Cli:
    """A repository, unpacked from a tarball after `plant(origin)` put its special files in."""
    origin = upstream(tmp_path, {"docs/notes.txt": "a needle\n", "src/app.txt": "another needle\n"},
                      {"link": "pipe", "docs/link": "../pipe"})
    plant(origin)
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    return project


def _fifos(origin) -> None:
    os.mkfifo(origin / "pipe")
    os.mkfifo(origin / "docs" / "pipe")




@pytest.mark.parametrize("command", COMMANDS)
def test_an_unasked_read_of_a_fifo_asks_instead_of_hanging(tmp_path, model_server, command):
    project = _archive(tmp_path, _fifos)
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert block["is_error"] and "Not run" in block["content"] and "timed out" not in block["content"]


def test_the_control_the_same_search_without_special_files_runs_unasked(tmp_path, model_server):
    project = _archive(tmp_path, lambda origin: None)
    result, _, block = run_bash_call(tmp_path, model_server, project, "grep -rn needle docs")
    assert "needs approval" not in result.err
    assert "docs/notes.txt:1:a needle" in block["content"]


def _planter(name: str, kind: str = "fifo"):
    """Put a FIFO (or a link to /dev/zero) where git's own file `name` is."""
    def plant(origin):
        target = origin / ".git" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(target)
        else:
            target.symlink_to("/dev/zero")

    return plant


def _branch_ref(kind: str):
    """The current branch's loose ref (which `git log` and `git status` open through HEAD) as a FIFO or a link."""
    def plant(origin):
        ref = (origin / ".git" / "HEAD").read_text().split(":", 1)[1].strip()
        _planter(ref, kind)(origin)

    return plant


def _head_commit_object(origin) -> None:
    """HEAD's commit, a loose object (never packed here), as a FIFO: every `git log` opens it."""
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=origin, capture_output=True, text=True,
                         check=True).stdout.strip()
    _planter(f"objects/{sha[:2]}/{sha[2:]}")(origin)


def _long_commondir(origin) -> None:
    """`.git` holding HEAD and a `commondir` of 2,000 `./` before `../.shared` (git reads it whole; the check read
    4 KiB, judged `.git` itself, and never saw the FIFO at `.shared/packed-refs`)."""
    (origin / ".git").rename(origin / ".shared")
    (origin / ".git").mkdir()
    (origin / ".git" / "HEAD").write_text((origin / ".shared" / "HEAD").read_text())
    (origin / ".git" / "commondir").write_text("./" * 2100 + "../.shared\n")
    os.mkfifo(origin / ".shared" / "packed-refs")


def _include_fifo(origin) -> None:
    """`.git/config` including `../pipe`, a FIFO: git's configuration reading waits on it, so did the check's scan
    of the filter drivers (10 s), which then read as "none" and let `git log` run into the same wait."""
    with open(origin / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = ../pipe\n")
    os.mkfifo(origin / "pipe")


def _shared_index_fifo(origin) -> None:
    """A split index (`git update-index --split-index`): `.git/index` names `.git/sharedindex.<hash>`, which every
    read of the index opens, here a FIFO."""
    subprocess.run(["git", "update-index", "--split-index"], cwd=origin, check=True, capture_output=True)
    [shared] = (origin / ".git").glob("sharedindex.*")
    shared.unlink()
    os.mkfifo(shared)


def _worktree_lock_fifo(origin) -> None:
    """A linked worktree's record (`.git/worktrees/<id>/`, the worktree itself not shipped) whose `locked` is a
    FIFO: `git worktree list` (`sessions list --worktrees`) opens it."""
    subprocess.run(["git", "worktree", "add", "-q", str(origin.parent / "elsewhere")], cwd=origin, check=True,
                   capture_output=True)
    [record] = (origin / ".git" / "worktrees").iterdir()
    os.mkfifo(record / "locked")


def _alternate_pack_fifo(inside: bool):
    """The objects packed and moved to an alternate object directory (`clone --shared` makes one), in the project
    (`../../vendor/objects`) or outside it, whose pack index is a FIFO: git opens it looking up any object (a log, a
    status, evo-agent's own `rev-parse --short HEAD`)."""
    def plant(origin):
        subprocess.run(["git", "repack", "-q", "-a", "-d"], cwd=origin, check=True, capture_output=True)
        store = origin / "vendor" / "objects" if inside else origin.parent / "elsewhere" / "objects"
        (store / "pack").mkdir(parents=True)
        for pack in (origin / ".git" / "objects" / "pack").iterdir():
            pack.rename(store / "pack" / pack.name)
        line = "../../vendor/objects" if inside else str(store)
        (origin / ".git" / "objects" / "info" / "alternates").write_text(f"{line}\n")
        [index] = (store / "pack").glob("*.idx")
        index.unlink()
        os.mkfifo(index)

    return plant


SPECIALS = [(name, "fifo") for name in GIT_FILES] + [(name, "link to /dev/zero") for name in ("HEAD", "config", "index")]
# Beyond git's named files: the refs and objects it opens on a status or log (refs/heads/<branch>, a loose object)
DEEPER = {"branch ref fifo": _branch_ref("fifo"), "branch ref link to /dev/zero": _branch_ref("link"),
          "loose commit object fifo": _head_commit_object, "fifo behind a long commondir": _long_commondir,
          "config include of a fifo": _include_fifo, "split index's shared index fifo": _shared_index_fifo,
          "pack index fifo in an alternate in the project": _alternate_pack_fifo(inside=True)}
# What only evo-agent's own git opens: `git worktree list` (`sessions list --worktrees`) reads each linked worktree's
# record under `.git/worktrees/`.
# (An unasked git asks for any alternate outside the project: test_unasked_git_reads_only_its_own_repository.py.)
DOOR_ONLY = {"linked worktree's lock fifo": _worktree_lock_fifo,
             "pack index fifo in an alternate outside": _alternate_pack_fifo(inside=False)}


@pytest.mark.parametrize(("name", "kind"), SPECIALS)
@pytest.mark.parametrize("command", ["git status", "git log -1 --oneline", "git diff --stat"])
def test_an_unasked_git_whose_own_files_are_fifos_asks(tmp_path, model_server, name, kind, command):
    project = _archive(tmp_path, _planter(name, kind))
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


@pytest.mark.parametrize("where", sorted(DEEPER))
@pytest.mark.parametrize("command", ["git status", "git log -1 --oneline"])
def test_an_unasked_git_whose_refs_or_objects_hold_a_fifo_asks(tmp_path, model_server, where, command):
    project = _archive(tmp_path, DEEPER[where])
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


def _state(name: str, *, with_files: dict[str, str] | None = None):
    """A FIFO at `.git/<name>` (with `with_files` beside it: what makes git read it), the current branch's commit
    written where `{head}` stands."""
    def plant(origin):
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=origin, capture_output=True, text=True,
                              check=True).stdout.strip()
        for rel, content in (with_files or {}).items():
            (origin / ".git" / rel).parent.mkdir(parents=True, exist_ok=True)
            (origin / ".git" / rel).write_text(content.format(head=head))
        _planter(name)(origin)

    return plant


# git's state files beyond its refs and objects, and the unasked command that opens each: a reflog (`-g`, and the
# stash's on `status --show-stash`), a cherry-pick's todo list, an interactive rebase's.
STATE = {"branch reflog": (_state("logs/refs/heads/main"), "git log -g main -1"),
         "stash reflog": (_state("logs/refs/stash", with_files={"refs/stash": "{head}\n"}), "git status --show-stash"),
         "cherry-pick todo": (_state("sequencer/todo", with_files={"CHERRY_PICK_HEAD": "{head}\n"}), "git status"),
         "rebase todo": (_state("rebase-merge/git-rebase-todo", with_files={
             "rebase-merge/interactive": "", "rebase-merge/head-name": "refs/heads/main\n",
             "rebase-merge/onto": "{head}\n"}), "git status")}


@pytest.mark.parametrize("where", sorted(STATE))
def test_an_unasked_git_whose_reflog_or_todo_list_is_a_fifo_asks(tmp_path, model_server, where):
    plant, command = STATE[where]
    project = _archive(tmp_path, plant)
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


@pytest.mark.parametrize("command", ["git log -1 --oneline", "git show --stat", "git status"])
def test_an_unasked_git_whose_configuration_includes_a_fifo_asks(tmp_path, model_server, command):
    """The command asks before any git reads the configuration (session.git_special_file follows its includes),
    and evo-agent's own git door skips such a repository (below, DEEPER)."""
    project = _archive(tmp_path, _include_fifo)
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


# A setting naming a file git opens, the command that opens it, and where the FIFO is named from.
NAMED_FILES = [("core.excludesFile", "git status"), ("mailmap.file", "git log -1"), ("diff.orderFile", "git diff")]


@pytest.mark.parametrize(("key", "command"), NAMED_FILES)
@pytest.mark.parametrize("spelling", ["relative", "absolute"])
def test_an_unasked_git_whose_configuration_names_a_fifo_asks(tmp_path, model_server, key, command, spelling):
    def plant(origin):
        os.mkfifo(origin / "pipe")
        (origin / "src" / "app.txt").write_text("changed\n")  # a diff to make
        value = "pipe" if spelling == "relative" else str(tmp_path / "unpacked" / "pipe")
        subprocess.run(["git", "config", key, value], cwd=origin, check=True)

    project = _archive(tmp_path, plant)
    result, _, block = run_bash_call(tmp_path, model_server, project, command)
    assert result.rc == 0, result.err
    assert "not run (needs approval)" in result.err, (result.err, block)
    assert "timed out" not in block["content"]


@pytest.mark.parametrize(("name", "kind"), [*SPECIALS, *((where, "deeper") for where in sorted({**DEEPER,
                                                                                             **DOOR_ONLY}))])
def test_evo_agent_s_own_git_reads_never_wait_on_a_fifo_of_git_s(tmp_path, model_server, name, kind):
    """The door (session/git.py) skips such a repository: the start and `sessions list` take no git timeout."""
    project = _archive(tmp_path, {**DEEPER, **DOOR_ONLY}[name] if kind == "deeper" else _planter(name, kind))
    bin_dir, log = _logging_git(tmp_path)
    model_server.script(text("hello"))
    env = model_server.env(clean_env(tmp_path / "home"))
    cli = Cli(project, {**env, "PATH": f"{bin_dir}:{env['PATH']}"})
    result = cli.run("-p", "hi", timeout=120)
    assert result.rc == 0 and result.out.strip() == "hello", result.err
    assert cli.run("sessions", "list", timeout=120).rc == 0
    assert cli.run("sessions", "list", "--worktrees", timeout=120).rc == 0
    # git blocks opening the FIFO until the door's timeout kills it: it must not be started at all
    assert not log.exists() or str(project) not in log.read_text(), log.read_text()


def test_the_control_evo_agent_s_own_git_reads_an_ordinary_repository(tmp_path, model_server):
    project = _archive(tmp_path, lambda origin: None)
    bin_dir, log = _logging_git(tmp_path)
    model_server.script(text("hello"))
    env = model_server.env(clean_env(tmp_path / "home"))
    cli = Cli(project, {**env, "PATH": f"{bin_dir}:{env['PATH']}"})
    assert cli.run("-p", "hi", timeout=120).rc == 0 and cli.run("sessions", "list", timeout=120).rc == 0
    assert f"--git-dir={project}/.git" in log.read_text()


def _logging_git(tmp_path):
    """A `git` (outside the project, first on PATH) that logs its arguments, then runs the real one."""
    bin_dir = tmp_path / "logging-bin"
    bin_dir.mkdir()
    log = tmp_path / "git.log"
    (bin_dir / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    return bin_dir, log


@pytest.mark.parametrize("path", ["pipe", "link", "docs/link", "docs/pipe"])
def test_the_file_tools_refuse_a_fifo_in_one_line(tmp_path, model_server, path):
    project = _archive(tmp_path, _fifos)
    model_server.script(tool_use("read_file", {"path": path}, id="r1"), tool_use("grep", {"pattern": "x", "path": path},
                                                                                 id="g1"), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run("-p", "look", timeout=120)
    assert result.rc == 0, result.err
    for request in model_server.requests[1:3]:  # read_file's result, then grep's
        block = request["messages"][-1]["content"][0]
        assert block["is_error"] and "not a regular file" in block["content"] and "\n" not in block["content"]


def test_an_alternate_is_searched_only_where_git_looks_for_objects(tmp_path, model_server):
    """An alternate naming a big directory (`/home/u`, say) is scanned as git reads an object directory: its
    `pack/`, `info/` and two-digit fan-out directories, never the whole tree (a scan of a home directory held every
    start). A FIFO deep below it, where git never looks, leaves the repository readable."""
    def plant(origin):
        home = origin.parent / "a-home"
        (home / "projects" / "deep").mkdir(parents=True)
        os.mkfifo(home / "projects" / "deep" / "pipe")
        (origin / ".git" / "objects" / "info" / "alternates").write_text(f"{home}\n")

    project = _archive(tmp_path, plant)
    bin_dir, log = _logging_git(tmp_path)
    model_server.script(text("hello"))
    env = model_server.env(clean_env(tmp_path / "home"))
    cli = Cli(project, {**env, "PATH": f"{bin_dir}:{env['PATH']}"})
    assert cli.run("-p", "hi", timeout=120).rc == 0 and cli.run("sessions", "list", timeout=120).rc == 0
    assert f"--git-dir={project}/.git" in log.read_text()
