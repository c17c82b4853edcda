"""Run as root (a container, a CI job, a dev VM), a sandboxed command cannot undo the sandbox's mounts (SPEC §9).

bubblewrap started by root makes no user namespace and keeps every capability: the command was root with
CAP_SYS_ADMIN in its own mount namespace, and `mount -o remount,bind,rw <project>` made the read-only sandbox of an
unasked command writable, `umount .git` (or a remount) in `--sandbox`'s writable one let a hostile repository's
`npm test` plant a hook or a `core.fsmonitor` that the user's next `git status` outside ran, `umount -l /tmp`
showed the host's `/tmp`, and unmounting the empty directory over `~/.config/evo-agent` showed the agent's own
config. Every sandbox now drops all capabilities (`--cap-drop ALL`); as any other user, bwrap's user namespace
already locked those mounts. Real bwrap, real mounts, run through the bash tool.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evo_agent.tools import ToolContext
from evo_agent.tools.bash import run_bash
from evo_agent.tools.confine import real
from evo_agent.tools.sandbox import SandboxError, check_sandbox
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, safe_search_path

from .hostile import clone, upstream

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only bwrap started by root keeps capabilities")
SECRET = "team-store-password-0f9e8d"


@pytest.fixture
def victim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clone the user works in, with `.evo-agent/`, and the user's evo-agent config holding a secret."""
    project = clone(upstream(tmp_path, {"src/app.txt": "app\n"}), tmp_path / "work" / "clone")
    (project / ".evo-agent").mkdir()
    (project / ".evo-agent" / "settings.json").write_text("{}")
    config = tmp_path / "config"
    (config / "evo-agent").mkdir(parents=True)
    (config / "evo-agent" / "credentials").write_text(f"{SECRET}\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")
    return project


def _writable(project: Path, command: str) -> str:
    """`command` approved and run in `--sandbox`'s writable sandbox."""
    return run_bash({"command": command}, ToolContext(project_dir=project, sandbox=check_sandbox(project))).content


def _unasked(project: Path, command: str) -> str:
    """`command` run as the allowlist runs what it lets through: in the read-only sandbox (the backstop for a
    command it misjudged)."""
    plan = ReadOnlyPlan(command, safe_search_path(os.environ["PATH"], real(project)))
    return run_bash({"command": "ignored: the plan runs"}, ToolContext(project_dir=project, read_only=plan)).content


RUNS = {"writable": _writable, "read-only": _unasked}
HOOK = ".git/hooks/pre-commit"
GIT_PLANTS = [
    "mount -o remount,bind,rw {project}/.git; echo 'touch x' > {project}/" + HOOK,
    "mount -o remount,rw {project}/.git && echo 'touch x' > {project}/" + HOOK,
    "umount {project}/.git; echo 'touch x' > {project}/" + HOOK,
    "umount -l {project}/.git; echo 'touch x' > {project}/" + HOOK,
    "mount -o remount,bind,rw {project}; mount -o remount,bind,rw {project}/.git; echo x > {project}/" + HOOK,
    "umount -R {project}; echo 'touch x' > {project}/" + HOOK,
    "mount --bind {project}/src {project}/.git/hooks 2>&1; touch {project}/src/pre-commit",
]


@pytest.mark.parametrize("kind", sorted(RUNS))
@pytest.mark.parametrize("command", GIT_PLANTS)
def test_no_sandboxed_command_as_root_writes_git(victim, kind, command):
    RUNS[kind](victim, command.format(project=victim))
    assert not (victim / HOOK).exists()
    assert not (victim / ".git" / "hooks" / "pre-commit").exists()


@pytest.mark.parametrize("kind", sorted(RUNS))
@pytest.mark.parametrize("command", [
    "mount -o remount,bind,rw {project}/.evo-agent; echo '{{\"x\":1}}' > {project}/.evo-agent/settings.json",
    "umount {project}/.evo-agent; echo '{{\"x\":1}}' > {project}/.evo-agent/settings.json",
    "mount -o remount,bind,rw {project}; echo '{{\"x\":1}}' > {project}/.evo-agent/settings.json",
])
def test_no_sandboxed_command_as_root_writes_the_agent_dir(victim, kind, command):
    RUNS[kind](victim, command.format(project=victim))
    assert (victim / ".evo-agent" / "settings.json").read_text() == "{}"


@pytest.mark.parametrize("command", ["mount -o remount,bind,rw {project}; touch {project}/written",
                                     "mount -o remount,rw {project} && touch {project}/written",
                                     "umount -l {project}; touch {project}/written",
                                     "mount -o remount,bind,rw / ; touch {project}/written"])
def test_the_read_only_sandbox_stays_read_only_as_root(victim, command):
    _unasked(victim, command.format(project=victim))
    assert not (victim / "written").exists()


@pytest.mark.parametrize("kind", sorted(RUNS))
@pytest.mark.parametrize("command", ["umount -l /tmp; touch {outside}/pwned",
                                     "umount -R /tmp; touch {outside}/pwned",
                                     "mount -o remount,bind,rw / && umount -l /tmp; touch {outside}/pwned"])
def test_no_sandboxed_command_as_root_writes_outside(victim, kind, command):
    outside = victim.parent.parent  # the test's tmp_path, under the host's /tmp
    RUNS[kind](victim, command.format(outside=outside))
    assert not (outside / "pwned").exists()


@pytest.mark.parametrize("kind", sorted(RUNS))
@pytest.mark.parametrize("command", ["umount {config}; cat {config}/credentials",
                                     "umount -l {config}; cat {config}/credentials",
                                     "umount -l /tmp; cat {config}/credentials"])
def test_no_sandboxed_command_as_root_reads_the_agents_config(victim, kind, command):
    config = real(os.environ["XDG_CONFIG_HOME"]) / "evo-agent"
    assert SECRET not in RUNS[kind](victim, command.format(config=config))


def test_sandboxed_commands_still_run_as_root(victim):
    """The legitimate use: the writable sandbox writes the project, the read-only one reads it, git included."""
    assert "[exit code 0]" in _writable(victim, "echo built > out.txt && git status --short")
    assert (victim / "out.txt").read_text() == "built\n"
    plan = plan_read_only("git log --oneline -1", victim)
    assert isinstance(plan, ReadOnlyPlan)
    result = run_bash({"command": "git log --oneline -1"}, ToolContext(project_dir=victim, read_only=plan))
    assert "init" in result.content and not result.is_error, result.content


def test_control_without_dropping_capabilities_root_remounts(victim):
    """The payload is real: bwrap run by root with the sandbox's mounts but its capabilities kept."""
    argv = check_sandbox(victim).wrap(["bash", "-c", f"mount -o remount,bind,rw {victim}/.git && "
                                                     f"touch {victim}/.git/hooks/control"])
    kept = [word for i, word in enumerate(argv) if word != "--cap-drop" and argv[i - 1] != "--cap-drop"]
    subprocess.run(kept, cwd=victim, capture_output=True, timeout=60)
    assert (victim / ".git" / "hooks" / "control").exists()


@pytest.mark.parametrize("writable", [True, False])
def test_every_sandbox_still_runs_for_a_user_without_root(tmp_path, monkeypatch, writable):
    """`--cap-drop ALL` is accepted by bwrap run by an ordinary user (in its user namespace, where it changes
    nothing): the same sandbox, run as `nobody`, still starts and runs the command."""
    import shutil
    import tempfile

    from evo_agent.tools import sandbox as sandbox_module
    from evo_agent.tools.sandbox import Sandbox, no_unix_socket_filter

    setpriv, bwrap = shutil.which("setpriv"), shutil.which("bwrap")
    if setpriv is None or bwrap is None:
        pytest.skip("needs setpriv and bwrap")
    as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    if subprocess.run([*as_nobody, bwrap, "--ro-bind", "/", "/", "true"], capture_output=True).returncode != 0:
        pytest.skip("bwrap cannot run as nobody here (no unprivileged user namespaces)")
    shared = Path(tempfile.mkdtemp(prefix="evo-agent-nobody-", dir="/tmp"))  # (tmp_path is root's alone)
    try:
        shared.chmod(0o755)
        project = shared / "project"
        project.mkdir()
        (project / "README.md").write_text("readable\n")
        program = no_unix_socket_filter()
        if program is not None:  # the filter file, where nobody can read it (evo-agent writes it as its own user)
            (shared / "filter.bpf").write_bytes(program)
            monkeypatch.setitem(sandbox_module._filter_files, program, str(shared / "filter.bpf"))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
        argv = Sandbox(project, bwrap=bwrap, writable=writable).wrap(["cat", "README.md"])
        assert "--cap-drop" in argv
        ran = subprocess.run([*as_nobody, *argv], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0 and ran.stdout == "readable\n", ran.stderr
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture
def others_project(victim: Path) -> Path:
    """The clone owned by another user (a container's root in `-v $PWD:/work`: files of uid 1000), a 0600 file."""
    (victim / ".env").write_text("TOKEN=x\n")
    (victim / ".env").chmod(0o600)
    for path in [victim, *victim.rglob("*")]:
        os.lchown(path, 65534, 65534)
    return victim


def test_root_still_reads_and_writes_a_project_another_user_owns(others_project):
    """Control of the above: dropping every capability also dropped root's file access, so `--sandbox` could not
    write a project a container's root works in (`Permission denied`) nor the read-only one read its `.env`."""
    assert "TOKEN=x" in _unasked(others_project, "cat .env")
    _writable(others_project, "echo more >> src/app.txt; touch src/new.txt; chmod 600 src/new.txt")
    assert (others_project / "src" / "app.txt").read_text() == "app\nmore\n"
    assert (others_project / "src" / "new.txt").exists()


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_root_keeping_its_file_access_still_cannot_remount(others_project, kind):
    RUNS[kind](others_project, f"mount -o remount,bind,rw {others_project}/.git; echo x > {others_project}/{HOOK}")
    assert not (others_project / HOOK).exists()
