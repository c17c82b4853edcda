"""An unasked `rg` does what its checked words say, nothing a clone's files add (SPEC §9).

ripgrep reads options from the file `$RIPGREP_CONFIG_PATH` names, which the allowlist never sees. A relative value
(`.ripgreprc`, as a per-project setup writes it) names a file of whatever project rg runs in: a clone commits
`.ripgreprc` holding `--pre=sh`, and the first unasked `rg needle` runs `sh` on every file it searches (inside the
read-only sandbox: the payload still runs and its output reaches the model; where bubblewrap cannot run, it writes
too). And ripgrep follows an ignore file that is a symlink: a clone commits `.ignore -> ../../.netrc`, and every line
of it that is not a valid glob (`password=hunter{2`) was quoted in an error message to the model. Unasked rg now
runs with `--no-config --no-messages --no-ignore-messages` (a missing path shows as exit code 2 alone).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, upstream

pytestmark = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")

SECRET = "password=hunter{2-the-secret\ntoken=[not-a-glob\n"
COMMANDS = ["rg -n needle", "rg needle .", "rg -l needle src", "rg --files", "rg -i NEEDLE notes.txt"]


def _armed_clone(tmp_path):
    """A clone whose `.ripgreprc` runs every searched file with sh, and whose files say what ran."""
    marker = tmp_path / "pwned"
    files = {".ripgreprc": "--pre=sh\n", "conf/rg": "--pre=sh\n",
             "notes.txt": f"echo the needle PRE-$((6*7)); touch '{marker}'\n",
             "src/app.txt": f"echo the needle PRE-$((6*7)); touch '{marker}'\n"}
    return clone(upstream(tmp_path, files), tmp_path / "src" / "clone"), marker


def _config_spellings(project) -> list[str]:
    return [".ripgreprc", "./.ripgreprc", "conf/rg", "src/../.ripgreprc", str(project / ".ripgreprc")]


def _run_plan(command: str, project, **env: str) -> subprocess.CompletedProcess:
    """The plan for `command` run as the bash tool runs it, without the sandbox (where the payload could write)."""
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    return subprocess.run(["bash", "-c", plan.command], cwd=project, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env, "PATH": plan.path})


@pytest.mark.parametrize("command", COMMANDS)
def test_a_relative_ripgrep_config_never_adds_options(tmp_path, command):
    project, marker = _armed_clone(tmp_path)
    for spelling in _config_spellings(project):
        ran = _run_plan(command, project, RIPGREP_CONFIG_PATH=spelling)
        assert "PRE-42" not in ran.stdout + ran.stderr, (spelling, ran.stdout)
        assert not marker.exists(), spelling

    # The control: plain rg obeys the clone's config, and the payload runs.
    subprocess.run(["bash", "-c", "rg -n needle"], cwd=project, capture_output=True, timeout=60,
                   env={**os.environ, "RIPGREP_CONFIG_PATH": ".ripgreprc"})
    assert marker.exists()


def test_through_the_agent_the_clones_config_never_runs(tmp_path, model_server):
    """The whole path a user meets: the model's `rg needle`, run unasked in print mode."""
    project, marker = _armed_clone(tmp_path)
    model_server.script(tool_use("bash", {"command": "rg -n needle"}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home", RIPGREP_CONFIG_PATH=".ripgreprc"))
    result = Cli(project, env).run("-p", "find the needle")
    assert result.rc == 0, result.err
    assert "needs approval" not in result.err  # it ran unasked, as a read-only search does
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert "notes.txt" in content and "PRE-42" not in content, content
    assert not marker.exists()


@pytest.mark.parametrize("name", [".ignore", ".rgignore", ".gitignore", "src/.ignore", "src/deep/.rgignore"])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_ignore_file_linking_out_of_the_project_is_never_quoted(tmp_path, name, command):
    (tmp_path / ".netrc").write_text(SECRET)  # the victim's file, two levels above the clone
    depth = name.count("/") + 2
    origin = upstream(tmp_path, {"notes.txt": "the needle\n", "src/app.txt": "the needle\n",
                                 "src/deep/x.txt": "the needle\n"}, {name: "../" * depth + ".netrc"})
    project = clone(origin, tmp_path / "src" / "clone")
    assert (project / name).read_text() == SECRET  # the link reaches the victim's file

    ran = _run_plan(command, project)
    assert "hunter" not in ran.stdout + ran.stderr and "not-a-glob" not in ran.stdout + ran.stderr, ran.stderr
    assert ran.stdout  # the search itself still works (exit code 2: the ignore file does not parse)

    control = subprocess.run(["bash", "-c", "rg -n needle"], cwd=project, capture_output=True, text=True, timeout=60)
    assert "hunter{2" in control.stderr  # plain rg quotes the secret's lines


@pytest.mark.parametrize("command", ["rg needle nosuchdir", "rg -n needle notes.txt nosuch.txt"])
def test_the_model_is_told_why_a_quiet_rg_failed(tmp_path, command):
    """With its messages off, a path rg cannot open shows only as exit code 2: the result says so."""
    from evo_agent.tools import ToolContext
    from evo_agent.tools.bash import run_bash

    project, _marker = _armed_clone(tmp_path)
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    result = run_bash({"command": command}, ToolContext(project, read_only=plan))
    assert result.content.endswith("[exit code 2]"), result.content
    assert "a path it could not open or read" in result.content
    found = run_bash({"command": "rg -n needle notes.txt"},
                     ToolContext(project, read_only=plan_read_only("rg -n needle notes.txt", project)))
    assert found.content.endswith("[exit code 0]") and "could not open" not in found.content
