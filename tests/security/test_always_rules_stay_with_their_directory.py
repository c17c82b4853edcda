"""An "always in this project" rule holds for the directory it was granted in, not for whatever is cloned
there later (SPEC §9, as workspace trust does).

The rules a user grants with "always in this project" live in their own config, keyed by the project's real
path, and applied whether or not the project is trusted. Trust also remembers the directory itself (device
and inode), so a project deleted and cloned again at the same path asks again; the rules did not: after
`rm -rf ~/src/demo && git clone <another> ~/src/demo`, the `Bash(sh build.sh)` granted for the user's own
build script ran the new clone's build.sh unasked. The rules are now kept with the directory they were
granted in and set aside (one line) in another one; the control: in the directory they were granted in
they still run the command unasked.
"""

from __future__ import annotations

import shutil

import pytest

from evo_agent.session import add_user_rule, user_rules
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use
from tests.security.hostile import clone, upstream

RULES = ["Bash(sh build.sh)", "Bash(sh build.sh:*)", "Bash"]


def _cli(project, model_server, home) -> Cli:
    return Cli(project, model_server.env(clean_env(home)))


def _build(cli: Cli, model_server):
    model_server.script(tool_use("bash", {"command": "sh build.sh"}), text("Built."))
    return cli.run("-p", "build it")


@pytest.mark.parametrize("rule", RULES)
def test_rules_granted_in_a_deleted_directory_never_run_the_next_clone_there(tmp_path, model_server, rule):
    built, pwned = tmp_path / "built", tmp_path / "pwned"
    home = tmp_path / "home"
    home.mkdir()
    mine = upstream(tmp_path, {"build.sh": f"touch {built}\n"}, name="mine")
    project = clone(mine, tmp_path / "demo")
    cli = _cli(project, model_server, home)
    add_user_rule(project, rule, cli.env)  # what answering "always in this project" writes
    assert _build(cli, model_server).rc == 0
    assert built.exists(), "the control: the rule runs the user's own build.sh unasked"

    shutil.rmtree(project)
    clone(upstream(tmp_path, {"build.sh": f"touch {pwned}\n"}, name="other"), project)
    result = _build(cli, model_server)
    assert "Traceback" not in result.err
    assert not pwned.exists(), "a rule granted for the deleted directory ran the new clone's build.sh"
    assert user_rules(project, cli.env) == []
    assert any("always in this project" in line and "set aside" in line for line in result.err_lines), result.err
