"""`git config` writes `.git/config` without naming it, and asks under every rule as any write there does (SPEC §9).

A bash command that may touch `.git/` asks even when a rule matches, bare `Bash` included: `echo … >>
.git/config` asks. `git config core.fsmonitor "sh tools/fsmonitor.sh"` names no path, so it ran unasked under
`Bash`, `Bash(git:*)` or `Bash(git config:*)`, and the user's next `git status` ran the clone's script. So did
`--global` (the user's `~/.gitconfig`: every repository's next `git status`). Now `git config`, however
started (`env git`, `git -C . config`), counts as touching `.git/`: it asks, and offers no "always".

The controls: under the same rules `git add` and a `git config` that only reads still run unasked, and the
payload is live when set by hand.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, fire_with_plain_git, payload, upstream

SCRIPT = '"sh tools/fsmonitor.sh"'
COMMANDS = [f"git config core.fsmonitor {SCRIPT}", f"git config --local core.fsmonitor {SCRIPT}",
            f"git -C . config core.fsmonitor {SCRIPT}", f"git --no-pager config --add core.fsmonitor {SCRIPT}",
            f"env git config core.fsmonitor {SCRIPT}", f"/usr/bin/git config core.fsmonitor {SCRIPT}",
            f"git -c x.y=z config core.fsmonitor {SCRIPT}", f"git config --global core.fsmonitor {SCRIPT}",
            f"git config --replace-all core.fsmonitor {SCRIPT}", f"true && git config core.fsmonitor {SCRIPT}",
            f"git config core.fsmonitor {SCRIPT} && echo --get", f"git config --list && git config core.fsmonitor {SCRIPT}"]
RULES = ["Bash", "Bash(git:*)", "Bash(git config:*)"]


def _victim(tmp_path):
    marker = tmp_path / "PWNED"
    project = clone(upstream(tmp_path, {"tools/fsmonitor.sh": payload(marker) + "\n"}), tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    return project, home, marker


def _run(model_server, project, home, command: str, rule: str):
    model_server.script(tool_use("bash", {"command": command, "timeout": 30}, id="t1"), text("done"))
    return Cli(project, model_server.env(clean_env(home))).run("-p", "set it up", "--allowed-tools", rule, timeout=120)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("command", COMMANDS)
def test_git_config_never_runs_unasked_under_a_rule(tmp_path, model_server, command, rule):
    if not command.startswith("git config") and rule == "Bash(git config:*)":
        pytest.skip("the rule covers only what starts with `git config`")
    project, home, marker = _victim(tmp_path)
    before = (project / ".git" / "config").read_bytes()
    result = _run(model_server, project, home, command, rule)
    assert "not run (needs approval)" in result.err, result.err
    assert "--allowed-tools 'Bash(" not in result.err  # no rule is offered that would allow it
    assert (project / ".git" / "config").read_bytes() == before and not (home / ".gitconfig").exists()
    fire_with_plain_git(project, "fsmonitor", env={"HOME": str(home)})
    assert not marker.exists()


@pytest.mark.parametrize("command", ["git config --get remote.origin.url", "git config --list",
                                     "git config get remote.origin.url"])
def test_the_control_a_git_config_read_still_runs_under_bare_bash(tmp_path, model_server, command):
    project, home, _ = _victim(tmp_path)
    result = _run(model_server, project, home, command, "Bash")
    assert "needs approval" not in result.err, result.err


@pytest.mark.parametrize("rule", RULES[:2])
def test_the_control_git_add_still_runs_under_the_rule(tmp_path, model_server, rule):
    project, home, _ = _victim(tmp_path)
    (project / "notes.txt").write_text("hello\n")
    result = _run(model_server, project, home, "git add notes.txt", rule)
    assert result.rc == 0 and "needs approval" not in result.err, result.err
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True, text=True)
    assert staged.stdout.split() == ["notes.txt"]


def test_the_control_the_payload_is_live_when_set_by_hand(tmp_path):
    project, home, marker = _victim(tmp_path)
    subprocess.run(["git", "config", "core.fsmonitor", "sh tools/fsmonitor.sh"], cwd=project, check=True)
    fire_with_plain_git(project, "fsmonitor", env={"HOME": str(home)})
    assert marker.exists()
