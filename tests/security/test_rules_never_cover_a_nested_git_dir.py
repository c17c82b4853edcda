"""A `Bash(prefix:*)` rule never covers a write into any `.git/` of the project, however it is reached (SPEC §9).

The file tools ask for every `.git/` below the project, in any letter case (tests/security/
test_nested_git_dirs_ask.py); the bash check looked for a `.git` word, or a path resolving into the top
`.git/` only. A clone committing `tools/lib-meta -> ../vendor/lib/.git` (a nested checkout's git directory)
made `cp tools/evil.config tools/lib-meta/config` an ordinary copy under `Bash(cp:*)`: its `core.fsmonitor`
ran at the user's next `git status` in `vendor/lib`. `.GIT/config` is `.git/config` on a case-insensitive file
system (macOS's default), and was copied unasked there too.

The control: the same rule copies into an ordinary directory, and the payload is live when planted by hand.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, fire_with_plain_git, payload, upstream

LINKS = {"tools/lib-meta": "../vendor/lib/.git", "tools/lib-hooks": "../vendor/lib/.git/hooks",
         "tools/lib": "../vendor/lib", "meta": "vendor/lib/.git"}
SPELLINGS = ["tools/lib-meta/config", "tools/lib-meta", "./tools/lib-meta/", "tools/../meta/config", "meta",
             "tools/lib-[m]eta/config", "tools/lib-m*/config", "tools/lib-hooks/post-checkout",
             "--target-directory=tools/lib-meta", "-ttools/lib-meta", ".GIT/config", ".Git", "vendor/lib/.GIT/config"]


def _victim(tmp_path):
    marker = tmp_path / "PWNED"
    origin = upstream(tmp_path, {"vendor/lib/README": "lib\n", "tools/evil.config": f"[core]\n\tfsmonitor = "
                                 f"{payload(marker)}\n", "tools/post-checkout": f"#!/bin/sh\n{payload(marker)}\n"},
                      links=LINKS)
    project = clone(origin, tmp_path / "clone")
    subprocess.run(["git", "init", "-q", str(project / "vendor" / "lib")], check=True)  # the nested checkout
    return project, marker


def _copy(tmp_path, model_server, project, destination: str):
    source = "tools/post-checkout" if "hooks" in destination else "tools/evil.config"
    command = f"cp {destination} {source}" if destination.startswith("-") else f"cp {source} {destination}"
    model_server.script(tool_use("bash", {"command": command, "timeout": 30}, id="t1"), text("done"))
    return Cli(project, model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "set it up", "--allowed-tools", "Bash(cp:*)", timeout=120)


@pytest.mark.parametrize("destination", SPELLINGS)
def test_a_cp_rule_never_copies_into_a_nested_git_dir(tmp_path, model_server, destination):
    project, marker = _victim(tmp_path)
    nested = project / "vendor" / "lib" / ".git"
    before = {p: p.read_bytes() for p in nested.rglob("*") if p.is_file()}
    result = _copy(tmp_path, model_server, project, destination)
    assert "not run (needs approval)" in result.err, result.err
    assert {p: p.read_bytes() for p in nested.rglob("*") if p.is_file()} == before
    fire_with_plain_git(project / "vendor" / "lib", "fsmonitor")  # the user's next git command there
    assert not marker.exists()


def test_the_control_the_rule_copies_into_an_ordinary_directory(tmp_path, model_server):
    project, _ = _victim(tmp_path)
    result = _copy(tmp_path, model_server, project, "tools/lib/README")
    assert result.rc == 0 and "needs approval" not in result.err, result.err
    assert "fsmonitor" in (project / "vendor" / "lib" / "README").read_text()


def test_the_control_the_payload_is_live_when_planted_by_hand(tmp_path):
    project, marker = _victim(tmp_path)
    subprocess.run(["cp", "tools/evil.config", "tools/lib-meta/config"], cwd=project, check=True)
    fire_with_plain_git(project / "vendor" / "lib", "fsmonitor")
    assert marker.exists()


@pytest.mark.parametrize("destination", ["up/config", "up", "pkg-up/pkg/up/config", "u[p]/config"])
def test_a_cp_rule_never_copies_into_the_repository_above_a_project_in_a_subdirectory(tmp_path, model_server,
                                                                                      destination):
    """A clone committing `pkg/.evo-agent/` makes `pkg/` the project when evo-agent starts there: the repository's
    own `.git/` is then outside the project, and `pkg/up -> ../.git` led a rule-covered copy into it."""
    marker = tmp_path / "PWNED"
    origin = upstream(tmp_path, {"pkg/.evo-agent/.keep": "", "pkg/tools/evil.config": f"[core]\n\tfsmonitor = "
                                 f"{payload(marker)}\n"}, links={"pkg/up": "../.git", "pkg/pkg-up": ".."})
    project = clone(origin, tmp_path / "clone")
    before = (project / ".git" / "config").read_bytes()
    model_server.script(tool_use("bash", {"command": f"cp tools/evil.config {destination}", "timeout": 30}, id="t1"),
                        text("done"))
    result = Cli(project / "pkg", model_server.env(clean_env(tmp_path / "home"))).run(
        "-p", "set it up", "--allowed-tools", "Bash(cp:*)", timeout=120)
    assert "not run (needs approval)" in result.err, result.err
    assert (project / ".git" / "config").read_bytes() == before
    fire_with_plain_git(project, "fsmonitor")
    assert not marker.exists()
