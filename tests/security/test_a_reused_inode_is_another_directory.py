"""A directory deleted and cloned again at the same path is another directory, even with the old inode number.

Trust answers and "always in this project" rules are kept with the directory they were given in (SPEC §9).
That was its device and inode, and ext4 (XFS too) gives a deleted directory's inode number to the next
directory made: `rm -rf ~/src/demo && git clone <another> ~/src/demo` got the very same pair, so the
`Bash(sh build.sh)` the user granted (or trusted in the old clone's settings) ran the new clone's build.sh
unasked. The directory is now also known by its inode's generation, drawn anew at each allocation.

Each case deletes the user's own clone and clones another upstream (made beforehand, as it would be on a
server) into the freed slot; the control runs the same rule in the directory it was granted in.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from evo_agent.session import add_user_rule, project_trusted, user_rules
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
RULES = ["Bash(sh build.sh)", "Bash(sh build.sh:*)", "Bash"]
GRANTS = {  # what the user trusted in their own clone; the other upstream commits the very same bytes
    "allow Bash(sh build.sh)": {"permissions": {"allow": ["Bash(sh build.sh)"]}},
    "allow Bash": {"permissions": {"allow": ["Bash"]}},
    "mode bypass": {"permission_mode": "bypass"},
}


def _build(cli: Cli, model_server):
    model_server.script(tool_use("bash", {"command": "sh build.sh"}), text("Built."))
    return cli.run("-p", "build it")


def _reclone(tmp_path, files_mine, files_other, model_server):
    """The user's clone (its control run done by the caller), and a function replacing it with the other."""
    home = tmp_path / "home"
    home.mkdir()
    mine = upstream(tmp_path, files_mine, name="mine")
    other = upstream(tmp_path, files_other, name="other")
    project = clone(mine, tmp_path / "demo")
    if SETTINGS in files_mine:
        os.chmod(project / SETTINGS, 0o644)
    cli = Cli(project, model_server.env(clean_env(home)))

    def replace() -> bool:
        before = os.stat(project).st_ino
        shutil.rmtree(project)
        clone(other, project)
        if SETTINGS in files_other:
            os.chmod(project / SETTINGS, 0o644)
        return os.stat(project).st_ino == before

    return cli, replace


@pytest.mark.parametrize("rule", RULES)
def test_always_rules_of_a_deleted_clone_never_run_the_next_clone_given_its_inode(tmp_path, model_server, rule):
    built, pwned = tmp_path / "built", tmp_path / "pwned"
    cli, replace = _reclone(tmp_path, {"build.sh": f"touch {built}\n"}, {"build.sh": f"touch {pwned}\n"},
                            model_server)
    add_user_rule(cli.project, rule, cli.env)  # what answering "always in this project" writes
    assert _build(cli, model_server).rc == 0 and built.exists(), "the control: the rule runs the user's build.sh"

    reused = replace()
    result = _build(cli, model_server)
    assert "Traceback" not in result.err
    assert not pwned.exists(), f"a rule of the deleted clone ran the new clone's build.sh (inode reused: {reused})"
    assert user_rules(cli.project, cli.env) == []
    assert any("set aside" in line for line in result.err_lines), result.err


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_trust_in_a_deleted_clone_never_extends_to_the_next_clone_given_its_inode(tmp_path, model_server, grant):
    built, pwned = tmp_path / "built", tmp_path / "pwned"
    settings = json.dumps(GRANTS[grant])
    cli, replace = _reclone(tmp_path, {"build.sh": f"touch {built}\n", SETTINGS: settings},
                            {"build.sh": f"touch {pwned}\n", SETTINGS: settings}, model_server)
    assert "Trusted" in cli.trust().out
    assert _build(cli, model_server).rc == 0 and built.exists(), "the control: the trusted settings are live"

    reused = replace()
    assert not project_trusted(cli.project, cli.env)
    result = _build(cli, model_server)
    assert "Traceback" not in result.err
    assert not pwned.exists(), f"the old clone's trust ran the new clone's build.sh (inode reused: {reused})"
    assert any("ignoring" in line and "changed since you answered" in line for line in result.err_lines), result.err
