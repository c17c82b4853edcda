"""The sandboxes (issue #26): what runs unasked runs read-only; `.git/` and `.evo-agent/` stay read-only in
every sandbox; Unix sockets outside the sandbox's own /tmp are unreachable. Real bwrap, real files."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from evo_agent.tools import ToolContext
from evo_agent.tools import sandbox as sandbox_module
from evo_agent.tools.bash import run_bash
from evo_agent.tools.confine import real
from evo_agent.tools.sandbox import SandboxError, check_sandbox, read_only_sandbox
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, safe_search_path
from tests.builders import make_agent, server_provider
from tests.fake_model_server import text, tool_use
from tests.helpers import QuietFront


@pytest.fixture
def bwrap(project: Path):
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


def _agent_dir(project: Path) -> Path:
    settings = project / ".evo-agent" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text("{}")
    return settings


PLANTS = [
    "echo '[core]' >> .git/config; echo 'fsmonitor = touch /tmp/x' >> .git/config",
    "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
    "rm -rf .git/hooks",
    "mv .git .git-old && mkdir .git",
    "cp /dev/null .evo-agent/settings.json",
    "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .evo-agent/settings.json",
    "rm -rf .evo-agent",
    "mv .evo-agent elsewhere",
    "ln -sf /tmp .git/hooks/x",
]


@pytest.mark.parametrize("command", PLANTS)
def test_the_writable_sandbox_keeps_git_and_the_agent_dir_read_only(project, bwrap, command):
    settings = _agent_dir(project)
    config = (project / ".git" / "config").read_bytes()
    hooks = sorted(p.name for p in (project / ".git" / "hooks").iterdir()) if (project / ".git" / "hooks").exists() else []
    ctx = ToolContext(project_dir=project, sandbox=check_sandbox(project))
    run_bash({"command": f"{command}; touch written-inside"}, ctx)
    assert (project / "written-inside").exists()  # the project itself stays writable
    assert (project / ".git" / "config").read_bytes() == config and settings.read_text() == "{}"
    now = sorted(p.name for p in (project / ".git" / "hooks").iterdir()) if (project / ".git" / "hooks").exists() else []
    assert now == hooks and not (project / ".git-old").exists() and not (project / "elsewhere").exists()


@pytest.mark.parametrize("command", ["touch new.txt", "echo x >> README.md", "rm README.md", "mkdir d",
                                     "touch .git/hooks/x", "git commit --allow-empty -m x", "touch /var/tmp/x$$"])
def test_a_misclassified_command_cannot_write_in_the_read_only_sandbox(project, bwrap, command):
    """The backstop: even if the allowlist let a writing command through, it runs where nothing can be written."""
    readme = (project / "README.md").read_bytes()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout
    plan = ReadOnlyPlan(command, safe_search_path(os.environ["PATH"], real(project)))
    result = run_bash({"command": "ignored: the plan runs"}, ToolContext(project_dir=project, read_only=plan))
    assert result.is_error, result.content
    assert (project / "README.md").read_bytes() == readme and not (project / "new.txt").exists()
    assert not (project / "d").exists() and not (project / ".git" / "hooks" / "x").exists()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout == head


def test_a_read_only_plan_runs_and_reads(project, bwrap):
    plan = plan_read_only("cat README.md | wc -l", project)
    result = run_bash({"command": "cat README.md | wc -l"}, ToolContext(project_dir=project, read_only=plan))
    assert not result.is_error and result.content.split()[0].isdigit()


EVERY_PROGRAM = ["ls -l", "cat README.md", "head -1 README.md", "tail -1 README.md", "wc -l README.md",
                 "grep -rn test .", "egrep -c test README.md", "fgrep -c test README.md", "rg -n test", "rg --files",
                 "stat -c %s README.md", "stat -f -c %T .", "nl README.md", "cut -c1-3 README.md",
                 "sort -R README.md", "sort --parallel=2 -S 1M README.md", "uniq -c README.md",
                 "basename a/b", "dirname a/b", "pwd", "whoami", "sleep 0", "echo x", "printf x", "true",
                 "find . -type f -name '*.md'", "git status --short", "git log -1 --oneline", "git diff --stat",
                 "git show --stat HEAD", "cat README.md | tr a-z A-Z | sort | uniq"]


@pytest.mark.parametrize("command", EVERY_PROGRAM)
def test_every_allowlisted_program_runs_alike_without_devices_or_proc(project, bwrap, command):
    """The read-only sandbox's /dev holds /dev/null only and its /proc is empty: no allowlisted program notices
    (the same output as outside any sandbox)."""
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    inside = run_bash({"command": command}, ToolContext(project_dir=project, read_only=plan))
    assert not inside.is_error, inside.content
    outside = subprocess.run(["bash", "-c", plan.command], cwd=project, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60, env={**os.environ, "PATH": plan.path})
    assert inside.content.rsplit("\n[exit code", 1)[0].rstrip("\n") == (outside.stdout.rstrip("\n") or "(no output)")


def test_the_read_only_sandbox_has_no_device_but_dev_null_and_an_empty_proc(project, bwrap):
    sandbox = read_only_sandbox(project)
    assert sandbox is not None
    listed = subprocess.run(sandbox.wrap(["bash", "-c", "ls -A /dev /proc; echo x > /dev/null && echo ok"]),
                            capture_output=True, text=True, timeout=60)
    assert listed.stdout.split() == ["/dev:", "null", "/proc:", "ok"], listed


def _socket_dir() -> Path | None:
    """A directory under /run (or $XDG_RUNTIME_DIR) this test may create a socket in."""
    for base in ("/run", os.environ.get("XDG_RUNTIME_DIR", "")):
        if base and os.access(base, os.W_OK) and not real(base).is_relative_to("/tmp"):
            return Path(base) / f"evo-agent-test-{os.getpid()}"
    return None


@pytest.mark.parametrize("writable", [True, False])
def test_unix_sockets_under_run_are_unreachable_in_every_sandbox(project, bwrap, writable):
    directory = _socket_dir()
    if directory is None:
        pytest.skip("no writable /run or $XDG_RUNTIME_DIR outside /tmp to put a socket in")
    directory.mkdir(exist_ok=True)
    path = directory / "agent.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        server.listen(5)
        probe = f"python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{path}\")' && echo CONNECTED"
        outside = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
        assert "CONNECTED" in outside.stdout  # the control: the socket works outside
        sandbox = check_sandbox(project, writable=writable)
        inside = subprocess.run(sandbox.wrap(["bash", "-c", probe]), cwd=project, capture_output=True, text=True)
        assert "CONNECTED" not in inside.stdout
    finally:
        server.close()
        path.unlink(missing_ok=True)
        directory.rmdir()


def test_an_auto_approved_command_runs_in_the_read_only_sandbox(project, bwrap, model_server):
    """Through the agent: `ls` runs unasked, inside bwrap, with the project read-only (argv observed, not faked)."""
    model_server.script(tool_use("bash", {"command": "ls"}, id="t1"), text("listed"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    seen: list[list[str]] = []
    real_popen = subprocess.Popen

    def spy(argv, *args, **kw):
        seen.append(list(argv))
        return real_popen(argv, *args, **kw)

    subprocess.Popen = spy
    try:
        agent.run_turn("list", QuietFront())
    finally:
        subprocess.Popen = real_popen
    argv = [a for a in seen if any("bwrap" in w for w in a)][-1]  # the last: the call itself, after the probe
    assert "--ro-bind" in argv and "--unshare-net" in argv and "--bind" not in argv
    assert "README.md" in model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert agent.read_only_backstop is True



def test_without_bwrap_the_verdict_stands_and_the_user_is_told_once(project, model_server, monkeypatch):
    key = str(real(project))
    monkeypatch.setitem(sandbox_module._read_only, key, None)  # as on a machine where bwrap cannot run
    monkeypatch.setattr(sandbox_module, "_notice_given", False)
    model_server.script(tool_use("bash", {"command": "ls"}, id="t1"), tool_use("bash", {"command": "pwd"}, id="t2"),
                        text("done"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    front = QuietFront()
    agent.run_turn("list", front)
    assert front.notices == [sandbox_module.NO_BACKSTOP_NOTICE]
    assert agent.read_only_backstop is False
    assert "README.md" in model_server.requests[1]["messages"][-1]["content"][0]["content"]
    assert read_only_sandbox(project) is None


def test_a_symlinked_git_dir_inside_the_project_is_read_only_too(project, bwrap):
    (project / ".git").rename(project / "repo.git")
    (project / ".git").symlink_to("repo.git")
    ctx = ToolContext(project_dir=project, sandbox=check_sandbox(project))
    run_bash({"command": "touch .git/hooks/planted; touch repo.git/hooks/planted2; touch ok"}, ctx)
    assert (project / "ok").exists()
    assert not (project / "repo.git" / "hooks" / "planted").exists()
    assert not (project / "repo.git" / "hooks" / "planted2").exists()


@pytest.mark.parametrize("entry", [".", "node_modules/.bin", "{project}/bin"])
def test_a_bwrap_planted_in_the_project_is_never_the_one_run(project, bwrap, tmp_path, monkeypatch, entry):
    marker = tmp_path / "pwned"
    directory = Path(entry.format(project=project))
    directory = directory if directory.is_absolute() else project / directory
    directory.mkdir(parents=True, exist_ok=True)
    planted = directory / "bwrap"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\n")
    planted.chmod(0o755)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", f"{entry.format(project=project)}:{os.environ['PATH']}")
    for sandbox in (check_sandbox(project), read_only_sandbox(project)):
        assert sandbox is not None and not sandbox.bwrap.startswith(str(project))
        subprocess.run(sandbox.wrap(["true"]), cwd=project, check=True)
    plan = plan_read_only("ls", project)
    run_bash({"command": "ls"}, ToolContext(project_dir=project, read_only=plan))
    assert not marker.exists()


def test_bash_runs_in_the_start_directory_inside_every_sandbox_and_never_outside_the_project(project, bwrap,
                                                                                            tmp_path):
    """Started in a subdirectory (ToolContext.cwd), bash runs there, sandboxed or not; a cwd outside the
    project is never where a sandbox starts."""
    sub = project / "pkg" / "web"
    sub.mkdir(parents=True)
    (sub / "notes.txt").write_text("web notes\n")
    plan = plan_read_only("cat notes.txt", project, cwd=sub)
    assert isinstance(plan, ReadOnlyPlan)
    unasked = run_bash({"command": "cat notes.txt"}, ToolContext(project_dir=project, read_only=plan, cwd=sub))
    assert unasked.content.startswith("web notes")
    writable = check_sandbox(project)
    asked = run_bash({"command": "pwd"}, ToolContext(project_dir=project, sandbox=writable, cwd=sub))
    assert asked.content.startswith(f"{real(sub)}\n")
    outside = writable.wrap(["pwd"], cwd=tmp_path)
    assert outside[outside.index("--chdir") + 1] == str(real(project))
    assert ToolContext(project_dir=project, cwd=tmp_path).work_dir == project  # never where nobody checked


def test_relative_operands_and_globs_are_judged_from_the_start_directory(project, tmp_path):
    sub = project / "pkg" / "web"
    sub.mkdir(parents=True)
    (sub / "a.txt").write_text("a")
    (tmp_path / "secret.txt").write_text("s")
    assert isinstance(plan_read_only("cat a.txt ../../README.md", project, cwd=sub), ReadOnlyPlan)
    assert isinstance(plan_read_only("cat ../../../secret.txt", project, cwd=sub), str)  # outside the project
    assert isinstance(plan_read_only("cat ../../../secret.txt", project), str)
    planned = plan_read_only("cat *.txt", project, cwd=sub)
    assert isinstance(planned, ReadOnlyPlan) and "a.txt" in planned.command  # expanded where it runs
    assert isinstance(plan_read_only("cat notes.txt", project, cwd=tmp_path), ReadOnlyPlan)  # judged at the root
