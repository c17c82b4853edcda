"""In `--sandbox`, every `.git/` of the project stays read-only, not only the top one's; a new one is reported.

An approved command runs in the writable sandbox, where `.git/` and `.evo-agent/` were bound read-only so that
no hook, `core.fsmonitor` or pager could be planted for evo-agent's later git reads or the user's own git to run.
Only the project's top `.git/` was: a nested checkout's (`vendor/lib/.git/config`, an ignored
`node_modules/pkg/.git/hooks/…`) was an ordinary writable directory, and the user's next `git status` there (a
shell prompt runs one at every `cd`) ran what the command planted. A `.git` the command creates (`git init`, or
`HEAD` + `config` written by hand), or a directory git takes for a bare repository (`HEAD`, `objects/`, `refs/`),
cannot be kept out of a writable project, so the user is told about it; an existing one is bound read-only too.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evo_agent.tools.sandbox import SandboxError, check_sandbox
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, payload, upstream

NESTED = ["vendor/lib", "a/b/c", "node_modules/pkg", ".hidden/tool"]


def _project(tmp_path):
    files = {"vendor/lib/README": "lib\n", "a/b/c/README": "c\n", ".gitignore": "node_modules/\n",
             ".hidden/tool/README": "t\n"}
    project = clone(upstream(tmp_path, files), tmp_path / "clone")
    for nested in NESTED:
        (project / nested).mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", str(project / nested)], check=True, timeout=60)  # a nested checkout
    try:
        check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(f"no sandbox here: {exc}")
    return project


def _plants(nested: str, marker) -> list[str]:
    git_dir = f"{nested}/.git"
    return [
        f"git -C {nested} config core.fsmonitor {payload(marker)!r}",
        f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> {git_dir}/config",
        f"mkdir -p {git_dir}/hooks && printf '#!/bin/sh\\ntouch {marker}\\n' > {git_dir}/hooks/post-checkout "
        f"&& chmod +x {git_dir}/hooks/post-checkout",
        f"cd {nested} && cp .git/config /tmp/c && echo '[core] pager = touch {marker}' >> /tmp/c && cp /tmp/c .git/config",
        f"mv {git_dir} {nested}/.git-old && mkdir {git_dir}",
    ]


@pytest.mark.parametrize("nested", NESTED)
@pytest.mark.parametrize("how", range(5))
def test_an_approved_command_cannot_plant_into_a_nested_git_dir(tmp_path, model_server, nested, how):
    project = _project(tmp_path)
    marker = tmp_path / "PWNED"
    git_dir = project / nested / ".git"
    before = {p.relative_to(git_dir): p.read_bytes() for p in git_dir.rglob("*") if p.is_file()}
    command = _plants(nested, marker)[how] + f"; touch {project}/made-it"
    model_server.script(tool_use("bash", {"command": command, "timeout": 60}), text("Planted?"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "plant", "--permission-mode", "bypass", "--sandbox", timeout=120)
    assert result.rc == 0, result.err
    assert (project / "made-it").exists()  # the project itself is writable in --sandbox
    after = {p.relative_to(git_dir): p.read_bytes() for p in git_dir.rglob("*") if p.is_file()}
    assert after == before and not (project / nested / ".git-old").exists()
    subprocess.run(["git", "status"], cwd=project / nested, capture_output=True, timeout=60)  # the user's next look
    assert not marker.exists()


@pytest.mark.parametrize(("command", "created"), [
    ("git init -q docs", "docs/.git"),
    ("mkdir -p docs/.git/objects docs/.git/refs && printf 'ref: refs/heads/main\\n' > docs/.git/HEAD && "
     "touch docs/.git/config", "docs/.git"),
    ("git init -q a/b/new", "a/b/new/.git"),
    ("mkdir docs && printf 'gitdir: /tmp\\n' > docs/.git", "docs/.git"),
    ("git init -q --bare tools/cache", "tools/cache"),  # git takes a bare repository for one when run in it
    ("mkdir -p b/objects b/refs && printf 'ref: refs/heads/main\\n' > b/HEAD && printf '[core]\\n' > b/config", "b"),
])
def test_a_git_dir_a_sandboxed_command_creates_is_reported(tmp_path, model_server, command, created):
    project = _project(tmp_path)
    model_server.script(tool_use("bash", {"command": command, "timeout": 60}, id="t1"), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "make", "--permission-mode", "bypass", "--sandbox", timeout=120)
    assert result.rc == 0, result.err
    assert os.path.lexists(project / created)  # what was asked for was done
    told = [line for line in result.err_lines if "new git repository" in line]
    assert len(told) == 1 and created in told[0], result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert created in content and "new git repository" in content


def test_an_approved_command_cannot_plant_into_a_bare_repository_inside_the_project(tmp_path, model_server):
    """`cd tools/cache && git log` runs what that directory's `config` names: it is bound read-only like a `.git`."""
    project = _project(tmp_path)
    subprocess.run(["git", "init", "-q", "--bare", str(project / "tools" / "cache")], check=True, timeout=60)
    config = (project / "tools" / "cache" / "config").read_bytes()
    command = f"git -C tools/cache config core.fsmonitor 'touch {tmp_path}/PWNED'; touch made-it"
    model_server.script(tool_use("bash", {"command": command, "timeout": 60}), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "plant", "--permission-mode", "bypass", "--sandbox", timeout=120)
    assert result.rc == 0 and (project / "made-it").exists(), result.err
    assert (project / "tools" / "cache" / "config").read_bytes() == config


def test_the_control_an_ordinary_command_reports_nothing(tmp_path, model_server):
    project = _project(tmp_path)
    model_server.script(tool_use("bash", {"command": "mkdir -p docs && touch docs/x", "timeout": 60}), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "make", "--permission-mode", "bypass", "--sandbox", timeout=120)
    assert result.rc == 0 and "git repository" not in result.err, result.err
