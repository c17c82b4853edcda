"""The programs evo-agent starts by itself (git, bash, setpriv, rg) are the machine's, never ones a clone committed.

Three lookups of "a program in the absolute PATH entries" existed, and they disagreed: git's skipped entries inside
the work tree, but bash and setpriv (the shell of every bash call and of the reaper around it and every MCP server)
were taken from any absolute entry, and rg stopped searching at the first in-project one. A user who activated the
clone's in-repo virtualenv (`source .venv/bin/activate` puts `/…/clone/.venv/bin` first on PATH), or whose PATH
names a directory of the project in any spelling (`/…/clone/bin/`, `/…/clone/./bin`, `/…/x/../clone/bin`, a link
`~/tools -> ~/src/clone/bin`), ran the clone's `bash` on the first approved `echo hi`. There is now one lookup,
`evo_agent.session.absolute_program(name, outside=project)`, and every one of those programs goes through it.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from evo_agent.session import absolute_program, program_search_path
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, git, upstream

PROGRAMS = ("bash", "bwrap", "git", "rg", "setpriv")
DIRS = ("bin", ".venv/bin", "node_modules/.bin", "tools/deep/bin")


def _planted(marker_dir, name: str) -> str:
    """A program that leaves `marker_dir/name` and then does what the real one would (so nothing else breaks)."""
    real = shutil.which(name) or "/bin/false"
    return f"#!/bin/sh\ntouch '{marker_dir / name}'\nexec '{real}' \"$@\"\n"


def _armed_clone(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    files = {f"{d}/{name}": _planted(markers, name) for d in DIRS for name in PROGRAMS}
    origin = upstream(tmp_path, files)
    for rel in files:
        os.chmod(origin / rel, 0o755)
    assert git(origin, "add", "-A", "-f").returncode == 0
    assert git(origin, "commit", "-q", "-m", "tools").returncode == 0
    project = clone(origin, tmp_path / "src" / "clone")
    for rel in files:
        assert os.access(project / rel, os.X_OK)
    return project, markers


def _spellings(tmp_path, project):
    """Every way a PATH entry can name a directory of the project."""
    links = tmp_path / "links"
    links.mkdir(exist_ok=True)
    if not (links / "tools").exists():
        os.symlink(project / "bin", links / "tools")            # a directory outside, linking in
        os.symlink(project, links / "whole")                     # the project itself, by a link
    p = str(project)
    return {
        "venv": f"{p}/.venv/bin",
        "bin": f"{p}/bin",
        "trailing-slash": f"{p}/bin/",
        "dot-segment": f"{p}/./bin",
        "dotdot": f"{project.parent}/../src/clone/bin",
        "double-slash": f"{p}//node_modules//.bin",
        "deep": f"{p}/tools/deep/bin",
        "link-to-dir": str(links / "tools"),
        "link-to-project": str(links / "whole" / "bin"),
        "relative": "bin",
        "dot": ".",
        "empty": "",
    }


def _system_path() -> str:
    return os.environ["PATH"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_spelling_of_an_in_project_path_entry_supplies_a_program(tmp_path, monkeypatch, name):
    project, markers = _armed_clone(tmp_path)
    monkeypatch.chdir(project)  # a relative entry is judged from here, as the kernel would look it up
    system = shutil.which(name, path=_system_path())
    for label, entry in _spellings(tmp_path, project).items():
        environ = {"PATH": f"{entry}:{_system_path()}"}
        found = absolute_program(name, outside=project, environ=environ)
        assert found == system, (label, found)
        assert found is None or not os.path.realpath(found).startswith(str(project) + "/"), label
        assert entry.rstrip("/") not in program_search_path(project, environ).split(":") or label == "empty", label
    assert not any(markers.iterdir())


def test_a_path_entry_that_is_another_directory_in_each_process_never_counts(tmp_path, monkeypatch):
    """`/proc/self/cwd/bin` names evo-agent's directory when judged and the child's (the project root) when run."""
    project, markers = _armed_clone(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "bin").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # `--project-dir clone` from another directory
    for name in PROGRAMS:
        (elsewhere / "bin" / name).write_text("#!/bin/sh\n")
        os.chmod(elsewhere / "bin" / name, 0o755)
        for entry in ("/proc/self/cwd/bin", "/proc/thread-self/cwd/bin", f"/proc/{os.getpid()}/cwd/bin",
                      "/dev/fd/../../proc/self/cwd/bin"):
            found = absolute_program(name, outside=project, environ={"PATH": f"{entry}:{_system_path()}"})
            assert found == shutil.which(name, path=_system_path()), (entry, found)
            assert entry not in program_search_path(project, {"PATH": entry})


def test_what_an_unset_or_empty_path_means(tmp_path):
    """Unset: `os.defpath`, what execvp and a shell use then. Empty: one entry, the empty one (`.`): nothing."""
    bash = absolute_program("bash", outside=tmp_path, environ={})
    assert bash is not None and os.path.dirname(bash) in os.defpath.split(":")
    assert absolute_program("bash", outside=tmp_path, environ={"PATH": ""}) is None
    assert absolute_program("bash", outside=tmp_path, environ={"PATH": ":::"}) is None
    assert absolute_program("./bash", environ={"PATH": "/bin"}) is None  # a name, never a path
    assert absolute_program("", environ={"PATH": "/bin"}) is None


def test_a_program_linked_into_the_project_from_an_outside_entry_is_the_projects(tmp_path):
    project, markers = _armed_clone(tmp_path)
    outside = tmp_path / "usr-local-bin"
    outside.mkdir()
    os.symlink(project / "bin" / "bash", outside / "bash")
    found = absolute_program("bash", outside=project, environ={"PATH": f"{outside}:{_system_path()}"})
    assert found == shutil.which("bash", path=_system_path())


def test_the_home_directory_inside_a_project_still_supplies_the_users_own_programs(tmp_path, monkeypatch):
    """The control: a dotfiles `~/.git` makes a project hold `~`; `~/.local/bin` is still the user's own."""
    home = tmp_path / "home"
    tools = home / ".local" / "bin"
    tools.mkdir(parents=True)
    (tools / "rg").write_text("#!/bin/sh\n")
    os.chmod(tools / "rg", 0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "rg").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "bin" / "rg", 0o755)
    monkeypatch.setenv("HOME", str(home))
    assert absolute_program("rg", outside=home, environ={"PATH": str(tools)}) == str(tools / "rg")
    # a project above home: home's programs count, the rest of the project's do not
    assert absolute_program("rg", outside=tmp_path, environ={"PATH": f"{tmp_path / 'bin'}:{tools}"}) == \
        str(tools / "rg")


def _cli(tmp_path, model_server, project, entry):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Cli(project, model_server.env(clean_env(home, PATH=f"{entry}:{_system_path()}")))


@pytest.mark.parametrize("label", ["venv", "bin", "dot-segment", "dotdot", "link-to-dir", "trailing-slash"])
@pytest.mark.parametrize("how", ["bypass", "allowed-rule", "sandbox"])
def test_an_approved_call_never_runs_the_clones_bash_setpriv_or_bwrap(tmp_path, model_server, label, how):
    project, markers = _armed_clone(tmp_path)
    entry = _spellings(tmp_path, project)[label]
    cli = _cli(tmp_path, model_server, project, entry)
    model_server.script(tool_use("bash", {"command": "echo hi && touch made-by-the-call"}, id="t1"), text("done"))
    args = {"bypass": ["--permission-mode", "bypass"],
            "allowed-rule": ["--allowed-tools", "Bash(echo hi && touch made-by-the-call)"],
            "sandbox": ["--permission-mode", "bypass", "--sandbox"]}[how]
    result = cli.run("-p", "say hi", *args)
    assert result.rc == 0, result.err
    assert "hi" in repr(model_server.requests[-1])  # the call ran
    assert sorted(p.name for p in markers.iterdir()) == []


@pytest.mark.parametrize("label", ["venv", "bin", "link-to-dir"])
def test_listing_and_continuing_never_run_the_clones_git(tmp_path, model_server, label):
    project, markers = _armed_clone(tmp_path)
    cli = _cli(tmp_path, model_server, project, _spellings(tmp_path, project)[label])
    model_server.script(text("hello"), text("again"))
    assert cli.run("-p", "hi").rc == 0
    for args in (["sessions", "list"], ["-c", "-p", "more"], ["sessions", "search", "hello"]):
        result = cli.run(*args)
        assert result.rc == 0, (args, result.err)
    assert sorted(p.name for p in markers.iterdir()) == []


def test_a_users_mcp_server_never_starts_under_the_clones_setpriv_or_bash(tmp_path, model_server):
    import json

    project, markers = _armed_clone(tmp_path)
    cli = _cli(tmp_path, model_server, project, f"{project}/.venv/bin")
    config = tmp_path / "home" / ".config" / "evo-agent" / "mcp.json"
    config = __import__("pathlib").Path(cli.env["XDG_CONFIG_HOME"]) / "evo-agent" / "mcp.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"mcpServers": {"helper": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    model_server.script(text("Hello."))
    result = cli.run("-p", "hi")
    assert result.rc == 0, result.err
    assert sorted(p.name for p in markers.iterdir()) == []
