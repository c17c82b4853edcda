"""evo-agent's own git processes never run a repository's code (issue #25, SPEC §9).

Two ways a repository's git configuration reaches a directory evo-agent works in, each built for real:
a clone committing `.evo-agent/sessions/{HEAD,config,index,objects,refs}` (the sessions directory becomes a
git directory to plain git), and an unpacked archive whose `.git/config` names programs (fsmonitor,
hooks, pager, external diff, textconv, filters, ssh). Every evo-agent command and library entry point
that spawns git runs there; the markers stay absent. Each payload is then fired with plain git: live.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from evo_agent.session import (
    GitRefused,
    git_branch_of,
    git_worktrees,
    run_git,
    tracked_session_ids,
    workspace_trust,
)
from evo_agent.session.git import git_argv
from evo_agent.session.project import git_branch_by_spawning
from evo_agent.sync.identity import project_identity
from tests.cli_runner import Cli, clean_env
from tests.security.hostile import (
    CONFIG_PAYLOADS,
    arm_repository,
    clone,
    fire_with_plain_git,
    git,
    payload,
    sessions_as_git_dir,
    unpack_archive_of,
    upstream,
)


def _embedded_configs(marker) -> dict[str, tuple[str, dict[str, str]]]:
    """Spellings of "run this on the next index read" in a committed sessions/config."""
    run = payload(marker)
    return {
        "plain": (f'[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = "{run}"\n', {}),
        "mixed case": (f'[CORE]\n\tRepositoryFormatVersion = 0\n\tBare = false\n\tWorkTree = ..\n\tFSMonitor = "{run}"\n', {}),
        "include": ("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n[include]\n\tpath = more.conf\n",
                    {"more.conf": f'[core]\n\tfsmonitor = "{run}"\n'}),
        "includeIf": ('[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n[includeIf "gitdir:**"]\n\tpath = more.conf\n',
                      {"more.conf": f'[core]\n\tfsmonitor = "{run}"\n'}),
    }


@pytest.mark.parametrize("spelling", ["plain", "mixed case", "include", "includeIf"])
def test_a_sessions_directory_that_looks_like_a_repository_never_reaches_git(tmp_path, model_server, spelling):
    marker = tmp_path / "pwned"
    config, extra = _embedded_configs(marker)[spelling]
    victim = clone(upstream(tmp_path, sessions_as_git_dir(tmp_path, config, extra)), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(victim, model_server.env(clean_env(home)))
    sessions = victim / ".evo-agent" / "sessions"

    for args in (["sessions", "list"], ["sessions", "list", "--json"], ["sessions", "search", "x"], ["-p", "hi"],
                 ["-c", "-p", "hi"], ["sessions", "list", "--worktrees"]):
        result = cli.run(*args)
        assert result.rc == 1 and len(result.err_lines) == 1, (args, result.out, result.err)
        assert "which are not a session (it looks like a git repository)" in result.err_lines[0], result.err
    assert "sessions fsck --repair" in result.err_lines[0]
    report = cli.run("sessions", "fsck", "--json")
    kinds = {(p["kind"], p["path"].rsplit("/", 1)[-1]) for p in json.loads(report.out)["problems"]}
    assert {("unexpected", "HEAD"), ("unexpected", "config"), ("unexpected", "objects")} <= kinds
    assert tracked_session_ids(sessions) == frozenset()  # the library's own git read, straight at it
    assert model_server.requests == []
    assert not marker.exists()

    fire_with_plain_git(sessions, "fsmonitor")  # the control: plain git in that directory runs the payload
    assert marker.exists()


def test_fsck_repair_moves_the_planted_repository_aside_and_sessions_work_again(tmp_path, model_server):
    marker = tmp_path / "pwned"
    config, _ = _embedded_configs(marker)["plain"]
    victim = clone(upstream(tmp_path, sessions_as_git_dir(tmp_path, config)), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(victim, model_server.env(clean_env(home)))
    repaired = cli.run("sessions", "fsck", "--repair")
    assert "moves it to" in repaired.out and "repaired" in repaired.out
    assert sorted(p.name for p in (victim / ".evo-agent" / "sessions").iterdir()) == [".gitignore"]
    from tests.fake_model_server import text

    model_server.script(text("Hello."))
    result = cli.run("-p", "hi")
    assert result.rc == 0 and result.out == "Hello.\n", result.err
    assert cli.run("sessions", "list").rc == 0
    assert not marker.exists()


@pytest.fixture
def armed(tmp_path):
    """An unpacked archive of a repository whose own `.git/config` names a program for every payload."""
    made = upstream(tmp_path, {"src/app.py": "print('hi')\n"}, name="made")
    markers = tmp_path / "markers"
    arm_repository(made, markers)
    project = unpack_archive_of(made, tmp_path / "downloaded")
    marker = arm_repository(project, markers)  # the unpacked copy's config names its own paths
    return project, marker


def test_every_git_evo_agent_runs_in_an_armed_repository_runs_none_of_its_programs(armed, tmp_path, model_server):
    project, marker = armed
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    from tests.builders import seed_session

    seed_session(project, ("hello", "hi"))
    from tests.fake_model_server import text

    model_server.script(text("Fine."), text("Fine again."))
    for args in (["-p", "hi"], ["sessions", "list"], ["sessions", "list", "--worktrees", "--json"],
                 ["sessions", "fsck"], ["trust", "--status"], ["-c", "-p", "again"]):
        result = cli.run(*args, "--project-dir", str(project)) if args[0] != "trust" else cli.run(*args)
        assert result.rc in (0, 1) and "Traceback" not in result.err, (args, result.err)
    # The library's entry points that spawn git, each once.
    assert project_identity(project).repo == "example.invalid/mallory/project"
    assert git_branch_by_spawning(project) == "main" and git_branch_of(project) == "main"
    assert [w.path for w in git_worktrees(project)] == [project]
    assert tracked_session_ids(project / ".evo-agent" / "sessions") == frozenset()
    assert run_git(project, "ls-files", "-z") is not None
    workspace_trust(project)
    assert sorted(m.name for m in marker.values() if m.exists()) == []

    for name in CONFIG_PAYLOADS:  # the controls: plain git runs each program
        fire_with_plain_git(project, name)
        assert marker[name].exists(), name


@pytest.mark.parametrize("command, payload_name", [
    (["status"], "fsmonitor"),
    (["ls-files", "--modified"], "fsmonitor"),
    (["-c", "user.name=x", "-c", "user.email=y@z", "commit", "-q", "--allow-empty", "-m", "x"], "hook"),
    (["fetch", "origin"], "ssh"),
    (["diff"], "external_diff"),
])
def test_the_command_line_settings_outrank_the_repositorys_even_for_commands_evo_agent_never_runs(
        armed, command, payload_name):
    """Defence in depth: the door's `-c` settings alone, with commands outside its allowlist, run nothing."""
    project, marker = armed
    prefix = git_argv(project, project / ".git", ["rev-parse"])[:-1]
    subprocess.run([*prefix, *command], cwd=project, capture_output=True, timeout=60)
    assert not marker[payload_name].exists()
    fire_with_plain_git(project, payload_name)
    assert marker[payload_name].exists()


@pytest.mark.parametrize("args", [
    ("status",), ("diff",), ("log",), ("show",), ("commit",), ("add", "."), ("checkout", "x"), ("fetch",),
    ("config", "core.fsmonitor", "x"), ("config", "--global", "a.b", "c"), ("worktree", "add", "x"),
    ("-c", "core.fsmonitor=x", "ls-files"), ("--git-dir=x", "ls-files"), ("submodule", "update"), ("grep", "x"),
    ("cat-file", "--textconv", "HEAD:x"), ("archive", "HEAD"), ("blame", "x"), (),
])
def test_the_door_runs_only_read_only_plumbing(project, args):
    with pytest.raises(GitRefused):
        run_git(project, *args)


def test_a_git_environment_inherited_from_the_caller_cannot_redirect_the_door(project, tmp_path, monkeypatch):
    other = upstream(tmp_path, {"x.txt": "x\n"}, name="other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{payload(tmp_path / 'env-marker')}'")
    assert run_git(project, "ls-files").split() == ["README.md"]
    assert not (tmp_path / "env-marker").exists()


def test_a_repository_another_user_owns_above_the_project_is_never_read(tmp_path):
    """git's safe.directory refuses a discovered repository of another owner; an explicit --git-dir would not."""
    import os

    if os.geteuid() != 0:
        pytest.skip("handing a directory to another user needs root")
    shared = upstream(tmp_path, {"x.txt": "x\n"}, name="shared")
    arm_repository(shared, tmp_path / "markers")
    work = shared / "work"
    work.mkdir()
    assert "x.txt" in run_git(work, "ls-files")  # the control: while it is ours, the door reads it
    for root, dirs, files in os.walk(shared / ".git"):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), 65534, 65534)
    os.lchown(shared / ".git", 65534, 65534)
    assert run_git(work, "ls-files") is None and git_worktrees(work) == []
    assert not any((tmp_path / "markers" / name).exists() for name in CONFIG_PAYLOADS)


def test_another_worktrees_planted_sessions_directory_is_refused_when_listing_worktrees(tmp_path, model_server):
    marker = tmp_path / "pwned"
    config, _ = _embedded_configs(marker)["plain"]
    victim = clone(upstream(tmp_path, sessions_as_git_dir(tmp_path, config)), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(victim, model_server.env(clean_env(home)))
    assert cli.run("sessions", "fsck", "--repair").rc == 0  # this worktree repaired; a second one checks it out again
    other = tmp_path / "second"
    subprocess.run(["git", "-C", str(victim), "worktree", "add", "-q", "-b", "second", str(other)], check=True)
    listed = cli.run("sessions", "list", "--worktrees")
    assert listed.rc == 0, listed.err
    assert [line for line in listed.err_lines if str(other) in line and "not a session" in line], listed.err
    assert not marker.exists()
    fire_with_plain_git(other / ".evo-agent" / "sessions", "fsmonitor")
    assert marker.exists()


def _shared_repository_and_unpacked_project(tmp_path):
    """A repository whose configuration plants `evil.planted`, soon handed to another user, and an empty
    directory for the archive unpacked beside it (root only: lchown to nobody)."""
    import os

    if os.geteuid() != 0:
        pytest.skip("handing a directory to another user needs root")
    shared = upstream(tmp_path, {"x.txt": "x\n"}, name="shared")
    assert git(shared, "config", "evil.planted", "yes").returncode == 0
    project = tmp_path / "unpacked"
    project.mkdir()
    return shared, project


@pytest.mark.parametrize("how", [".git a link of ours", "gitdir file naming a link of ours"])
def test_a_link_of_ours_to_a_repository_another_user_owns_is_never_read(tmp_path, how):
    """`.git -> /tmp/theirs/.git` (an archive keeps the link): the link is ours, the repository git reads is not."""
    import os

    shared, project = _shared_repository_and_unpacked_project(tmp_path)
    if how == ".git a link of ours":
        (project / ".git").symlink_to(shared / ".git")
    else:
        (project / "meta").symlink_to(shared / ".git")
        (project / ".git").write_text("gitdir: meta\n")
    assert run_git(project, "config", "--get", "evil.planted") == "yes\n"  # the control: ours, it is read
    for root, dirs, files in os.walk(shared / ".git"):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), 65534, 65534)
    os.lchown(shared / ".git", 65534, 65534)
    assert run_git(project, "config", "--get", "evil.planted") is None


@pytest.mark.parametrize("how", ["commondir relative", "commondir absolute", "gitdir file, then commondir",
                                 "commondir through a link of ours"])
def test_a_commondir_into_a_repository_another_user_owns_is_never_read(tmp_path, how):
    """A git directory of this user's (an archive's `.git` holding HEAD and `commondir`) whose common directory,
    where git reads `config`, refs and objects, is another user's: that user rewrites the configuration at any
    time (an include of a FIFO or a terminal after the door checked it), so the door reads it no more than a
    repository that user owns outright."""
    import os

    shared, project = _shared_repository_and_unpacked_project(tmp_path)
    inner = project / ".git" if how != "gitdir file, then commondir" else project / "meta" / "wt"
    inner.mkdir(parents=True)
    (inner / "HEAD").write_text("ref: refs/heads/main\n")
    common = shared / ".git"
    (inner / "commondir").write_text(f"{common}\n" if how == "commondir absolute"
                                     else "../common\n" if how == "commondir through a link of ours"
                                     else os.path.relpath(common, inner) + "\n")
    (project / "common").symlink_to(common)
    if how == "gitdir file, then commondir":
        (project / ".git").write_text("gitdir: meta/wt\n")
    assert run_git(project, "config", "--get", "evil.planted") == "yes\n"  # the control: ours, it is read
    for root, dirs, files in os.walk(common):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), 65534, 65534)
    os.lchown(common, 65534, 65534)
    assert run_git(project, "config", "--get", "evil.planted") is None
    assert run_git(project, "rev-parse", "HEAD") is None
