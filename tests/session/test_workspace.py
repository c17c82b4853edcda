"""Workspace trust records (session/workspace.py): keyed by real path, directory and content; private; locked."""

from __future__ import annotations

import os
import stat
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import (
    add_user_rule,
    project_trusted,
    remember_trust,
    revoke_trust,
    user_config_dir,
    user_record_path,
    user_rules,
    workspace_trust,
)


def _env(tmp_path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def test_the_record_lives_in_the_users_config_private_and_honours_xdg(tmp_path):
    env = _env(tmp_path)
    assert user_config_dir(env) == tmp_path / "config" / "evo-agent"
    assert user_config_dir({"HOME": str(tmp_path / "h")}) == tmp_path / "h" / ".config" / "evo-agent"
    project = tmp_path / "p"
    (project / ".evo-agent").mkdir(parents=True)
    (project / ".evo-agent" / "settings.json").write_text('{"permission_mode": "bypass"}')
    path = remember_trust(workspace_trust(project, env), True, env)
    assert path == user_record_path(project, env) and (tmp_path / "config") in path.parents
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert project_trusted(project, env)
    link = tmp_path / "link"
    link.symlink_to(project)
    assert project_trusted(link, env)  # the real path is the key: a link to a trusted project is that project


def test_revoking_forgets_the_answer_and_keeps_the_users_rules(tmp_path):
    env = _env(tmp_path)
    project = tmp_path / "p"
    project.mkdir()
    add_user_rule(project, "Bash(npm test)", env)
    remember_trust(workspace_trust(project, env), True, env)
    assert revoke_trust(project, env) and not revoke_trust(project, env)
    assert not project_trusted(project, env) and user_rules(project, env) == ["Bash(npm test)"]


def test_rules_added_at_once_by_many_writers_are_all_kept(tmp_path):
    env = _env(tmp_path)
    project = tmp_path / "p"
    project.mkdir()
    rules = [f"Bash(make t{i})" for i in range(24)]
    threads = [threading.Thread(target=add_user_rule, args=(project, r, env)) for r in rules]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(user_rules(project, env)) == sorted(rules)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trusted=st.binary(max_size=200), changed=st.binary(max_size=200), name=st.sampled_from(
    [".evo-agent/settings.json", ".mcp.json"]))
def test_trust_holds_for_exactly_the_bytes_that_were_trusted(tmp_path, trusted, changed, name):
    env = _env(tmp_path)
    project = tmp_path / "p"
    (project / ".evo-agent").mkdir(parents=True, exist_ok=True)
    for rel in (".evo-agent/settings.json", ".mcp.json"):
        if os.path.lexists(project / rel):
            os.unlink(project / rel)
    (project / name).write_bytes(trusted)
    remember_trust(workspace_trust(project, env), True, env)
    assert project_trusted(project, env)
    (project / name).write_bytes(changed)
    assert project_trusted(project, env) == (changed == trusted)
    (project / name).write_bytes(trusted)
    assert project_trusted(project, env)
    os.unlink(project / name)
    (project / name).symlink_to(project / "elsewhere")  # the same name, now a link: something else
    assert not project_trusted(project, env)
