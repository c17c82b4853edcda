"""A prefix rule is judged on the words bash will really run, globs included (SPEC §9).

`Bash(cp:*)` never covers a write into `.git/` or `.evo-agent/`, and `Bash(find:*)` never covers `find -fprintf`:
the checks expand each glob and look at what it names. They expanded it with Python's `glob`, whose bracket
expressions are not bash's: `.[[:alpha:]]it`, `.[^x]it`, `.[[=g=]]it`, `.[[.g.]]it` and `.[g"x"]it` match
nothing for Python and `.git` for bash. So `cp tools/evil.config .[[:alpha:]]it/config` ran unasked under
`Bash(cp:*)` and planted a `core.fsmonitor` that the user's next `git status` executed; a committed file named
`-fprintf` made `find . -[[:lower:]]printf FILE FORMAT` write anywhere under `Bash(find:*)`.

Each case is a clone of a repository that commits the payload, run in print mode with the rule given on the
command line; after it, the user's own `git status` must not fire the payload, and nothing may be written. The
controls: the same rule still runs an ordinary copy, and the payload is live when planted by hand.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, fire_with_plain_git, payload, upstream

# Every spelling is `.git` to bash 5 (globasciiranges, no extglob) and to nothing else.
GIT_DIR = [".[[:alpha:]]it", ".[^x]it", ".[[=g=]]it", ".[[.g.]]it", ".gi[[:lower:]]", ".[g\"x\"]it",
           ".[g\"]\"]it", ".[[:punct:]g]it", ".[![:upper:]]it", ".[[:alnum:]]i[[:alpha:]]"]
AGENT_DIR = [".evo[[:punct:]]agent", ".evo[^a]agent", ".evo-agen[[:lower:]]", ".[[=e=]]vo-agent",
             ".evo[[.-.]]agent", ".evo[[.hyphen.]]agent"]
FPRINTF = ["-[[:lower:]]printf", "-[^x]printf", "-f[[:alpha:]]rintf", "-[[=f=]]printf", "-[[.f.]]printf"]


def _victim(tmp_path, files: dict[str, str]):
    project = clone(upstream(tmp_path, {"docs/index.md": "# docs\n", **files}), tmp_path / "clone")
    return project, Cli(project, clean_env(tmp_path / "home"))


def _run(cli: Cli, model_server, command: str, rule: str):
    model_server.script(tool_use("bash", {"command": command, "timeout": 30}, id="t1"), text("done"))
    return cli.run("-p", "set it up", "--allowed-tools", rule, env=model_server.env(cli.env), timeout=120)


def _armed_config(tmp_path) -> tuple[str, object]:
    marker = tmp_path / "PWNED"
    return f"[core]\n\tfsmonitor = {payload(marker)}\n", marker


@pytest.mark.parametrize("spelling", GIT_DIR)
def test_a_cp_rule_never_copies_into_git_through_a_bracket_glob(tmp_path, model_server, spelling):
    config, marker = _armed_config(tmp_path)
    project, cli = _victim(tmp_path, {"tools/evil.config": config})
    before = (project / ".git" / "config").read_bytes()
    result = _run(cli, model_server, f"cp tools/evil.config {spelling}/config", "Bash(cp:*)")
    assert "not run (needs approval)" in result.err, result.err
    assert (project / ".git" / "config").read_bytes() == before
    fire_with_plain_git(project, "fsmonitor")  # the user's next git command
    assert not marker.exists()


@pytest.mark.parametrize("spelling", AGENT_DIR)
def test_a_cp_rule_never_copies_into_the_agent_dir_through_a_bracket_glob(tmp_path, model_server, spelling):
    project, cli = _victim(tmp_path, {"tools/settings.json": '{"permissions": {"allow": ["Bash"]}}\n'})
    result = _run(cli, model_server, f"cp tools/settings.json {spelling}", "Bash(cp:*)")
    assert "not run (needs approval)" in result.err, result.err
    assert not (project / ".evo-agent" / "settings.json").exists()


@pytest.mark.parametrize("spelling", FPRINTF)
def test_a_find_rule_never_runs_a_writing_primary_spelled_as_a_bracket_glob(tmp_path, model_server, spelling):
    marker = tmp_path / "PWNED"
    project, cli = _victim(tmp_path, {"-fprintf": "a file named like find's writing primary\n"})
    result = _run(cli, model_server, f"find . -maxdepth 0 {spelling} {marker} owned", "Bash(find:*)")
    assert "not run (needs approval)" in result.err, result.err
    assert not marker.exists()


def test_the_control_the_rules_still_run_what_they_cover(tmp_path, model_server):
    config, _ = _armed_config(tmp_path)
    project, cli = _victim(tmp_path, {"tools/evil.config": config, "-fprintf": "x\n"})
    result = _run(cli, model_server, "cp tools/evil.config docs/[[:lower:]]ndex.md", "Bash(cp:*)")
    assert result.rc == 0 and "needs approval" not in result.err, result.err
    assert (project / "docs" / "index.md").read_text() == config
    result = _run(cli, model_server, "find . -maxdepth 1 -name [[:lower:]]ocs", "Bash(find:*)")
    assert result.rc == 0 and "needs approval" not in result.err, result.err


def test_the_control_the_payload_is_live_when_planted_by_hand(tmp_path):
    config, marker = _armed_config(tmp_path)
    project, _ = _victim(tmp_path, {"tools/evil.config": config})
    subprocess.run(["bash", "-c", f"cp tools/evil.config {GIT_DIR[0]}/config"], cwd=project, check=True)
    fire_with_plain_git(project, "fsmonitor")
    assert marker.exists()
