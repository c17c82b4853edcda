"""A prefix rule never covers a write into `.git/` spelled with one of bash's tilde prefixes (SPEC §9).

bash reads `~+` (and `~0`, `~+0`) as the directory the command runs in, `~-` as `$OLDPWD`, and expands a
tilde after the `=` of a word shaped like an assignment (`of=~+/x`). The rule check only knew `~` and
`~user`: with a clone committing `gitlink -> .git`, `cp tools/evil.config ~+/gitlink/config` was a copy to a
directory named `~+` under `Bash(cp:*)`, and `dd if=… of=~+/gitlink/config` under `Bash(dd:*)`, both run
unasked: the planted `core.fsmonitor` ran at the user's next `git status`.

The controls: the same rules still copy into an ordinary directory so spelled, and the payload is live.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, fire_with_plain_git, payload, upstream

SPELLINGS = [("Bash(cp:*)", "cp tools/evil.config ~+/gitlink/config"),
             ("Bash(cp:*)", "cp tools/evil.config ~0/gitlink/config"),
             ("Bash(cp:*)", "cp tools/evil.config ~+0/gitlink"),
             ("Bash(cp:*)", "cp tools/evil.config ~-/gitlink/config"),
             ("Bash(cp:*)", "cp tools/evil.config ~+/gitl?nk/config"),
             ("Bash(cp:*)", "cp tools/evil.config ~+/[g]itlink"),
             ("Bash(cp:*)", "cp tools/evil.config ~+/tools/../gitlink/config"),
             ("Bash(cp:*)", "cp -t ~+/gitlink tools/evil.config"),
             ("Bash(dd:*)", "dd if=tools/evil.config of=~+/gitlink/config"),
             ("Bash(dd:*)", "dd if=tools/evil.config of=~-/gitlink/config")]


def _victim(tmp_path):
    marker = tmp_path / "PWNED"
    origin = upstream(tmp_path, {"tools/evil.config": f"[core]\n\tfsmonitor = {payload(marker)}\n",
                                 "docs/index.md": "# docs\n"}, links={"gitlink": ".git", "docslink": "docs"})
    project = clone(origin, tmp_path / "clone")
    # cp's destination is named `config`: the payload is copied under that name
    subprocess.run(["cp", project / "tools" / "evil.config", project / "tools" / "config"], check=True)
    env = clean_env(tmp_path / "home", OLDPWD=str(project))  # the shell the user started evo-agent from
    return project, marker, env


def _run(model_server, project, env, rule: str, command: str):
    model_server.script(tool_use("bash", {"command": command, "timeout": 30}, id="t1"), text("done"))
    return Cli(project, model_server.env(env)).run("-p", "set it up", "--allowed-tools", rule, timeout=120)


@pytest.mark.parametrize(("rule", "command"), SPELLINGS)
def test_a_rule_never_writes_into_git_through_a_tilde_prefix(tmp_path, model_server, rule, command):
    project, marker, env = _victim(tmp_path)
    before = (project / ".git" / "config").read_bytes()
    result = _run(model_server, project, env, rule, command.replace("tools/evil.config", "tools/config"))
    assert "not run (needs approval)" in result.err, result.err
    assert (project / ".git" / "config").read_bytes() == before
    fire_with_plain_git(project, "fsmonitor")
    assert not marker.exists()


@pytest.mark.parametrize(("rule", "command"), [("Bash(cp:*)", "cp tools/config ~+/docslink/x"),
                                               ("Bash(dd:*)", "dd if=tools/config of=~+/docslink/x")])
def test_the_control_the_rules_still_write_an_ordinary_file_so_spelled(tmp_path, model_server, rule, command):
    project, _, env = _victim(tmp_path)
    result = _run(model_server, project, env, rule, command)
    assert result.rc == 0 and "needs approval" not in result.err, result.err
    assert "fsmonitor" in (project / "docs" / "x").read_text()


def test_the_control_the_payload_is_live_when_copied_by_hand(tmp_path):
    project, marker, _ = _victim(tmp_path)
    subprocess.run(["bash", "-c", "cp tools/config ~+/gitlink/config"], cwd=project, check=True)
    fire_with_plain_git(project, "fsmonitor")
    assert marker.exists()
