"""`printf -v` cannot point an unasked git at a configuration the repository planted (SPEC §9).

`printf -v NAME VALUE` is bash's builtin assignment: `printf -v HOME <clone>/cfg && git diff` ran unasked (printf
only prints, the allowlist said), and HOME is exported, so git read `<clone>/cfg/.gitconfig` as the user's own
configuration. The filter scan that switches off every clean filter by name had read the real HOME, so the
planted `filter.evil.clean` ran on the file the user had edited. Now `printf -v` asks, and every git evo-agent
starts unasked runs with HOME and XDG_CONFIG_HOME pinned to an empty private directory and
GIT_CONFIG_NOSYSTEM=1 (no user, system or planted global configuration at all).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, upstream

SPELLINGS = ["printf -v HOME {cfg} && git diff", "printf -vHOME {cfg} && git diff --stat",
             "printf -v 'HOME' {cfg} && git diff", "true && printf -v XDG_CONFIG_HOME {cfg} && git diff",
             "false || printf -v HOME {cfg} && git diff", "printf -v HOME {cfg} | git diff",
             "printf '-v' HOME {cfg} && git diff"]


RAN = "PLANTED-FILTER-RAN"  # what the filter adds to the diff: seen even where the read-only sandbox kept the marker


def _victim(tmp_path):
    """A clone whose `cfg/` holds a global git configuration (both spellings) with a clean filter that leaves a
    marker, `.gitattributes` routing every .txt through it, and a tracked file the user has since edited."""
    marker = tmp_path / "PWNED"
    config = f'[filter "evil"]\n\tclean = \"touch {marker}; echo {RAN}; cat\"\n\trequired = false\n'
    origin = upstream(tmp_path, {".gitattributes": "*.txt filter=evil\n", "notes.txt": "hello\n",
                                 "cfg/.gitconfig": config, "cfg/git/config": config})
    project = clone(origin, tmp_path / "clone")
    (project / "notes.txt").write_text("hello, edited by the user\n")
    return project, marker


def test_the_control_the_planted_configuration_is_live(tmp_path):
    project, marker = _victim(tmp_path)
    diff = subprocess.run(["git", "diff"], cwd=project, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(project / "cfg")})
    assert marker.exists() and f"+{RAN}" in diff.stdout


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_printf_v_cannot_hand_an_unasked_git_a_planted_configuration(tmp_path, model_server, spelling):
    project, marker = _victim(tmp_path)
    command = spelling.format(cfg=project / "cfg")
    model_server.script(tool_use("bash", {"command": command, "timeout": 30}, id="t1"), text("done"))
    result = Cli(project, model_server.env(clean_env(tmp_path / "home"))).run("-p", "look", timeout=120)
    assert result.rc == 0, result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert not marker.exists() and RAN not in content, content
    assert "not run (needs approval)" in result.err


@pytest.mark.parametrize("variable", ["HOME", "XDG_CONFIG_HOME"])
def test_an_unasked_git_never_reads_a_configuration_the_environment_names(tmp_path, model_server, variable):
    """Whatever HOME or XDG_CONFIG_HOME evo-agent was started with, its unasked git reads no global config."""
    project, marker = _victim(tmp_path)
    (project / "cfg" / ".gitconfig").write_text("[alias]\n\tx = log\n[log]\n\tdecorate = full\n[core]\n\tabbrev = 20\n")
    (project / "cfg" / "git" / "config").write_text("[core]\n\tabbrev = 20\n")
    env = {**clean_env(tmp_path / "home"), variable: str(project / "cfg")}
    model_server.script(tool_use("bash", {"command": "git log -1 --oneline"}, id="t1"), text("done"))
    result = Cli(project, model_server.env(env)).run("-p", "look", timeout=120)
    assert result.rc == 0, result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    short = content.split()[0]
    assert len(short) < 20, content  # core.abbrev = 20 from the planted file was not obeyed
