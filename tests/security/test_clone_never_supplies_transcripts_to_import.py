"""`sessions import --all` reads this user's Claude Code or Codex transcripts, never ones a clone committed.

`$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` name the directories those agents keep their transcripts in; a relative
value names a directory of whatever project evo-agent runs in. A clone committing
`.claude/projects/<its path, mangled>/x.jsonl` (the path is known where clones land: `/workspaces/<repo>` in a
dev container) had `sessions import claude-code --all` make it a session of the user's own, never marked as
recorded elsewhere: `-c` continued it, its "user" turns read as the user's orders. Like the XDG directories,
a relative value is unset at start. The control: the same directory named absolutely is imported.
"""

from __future__ import annotations

import pytest

from evo_agent.importers.claude_code import project_folder
from tests.cli.import_helpers import fixture, recorded_in
from tests.cli_runner import Cli, clean_env
from tests.security.hostile import clone, upstream


def _victim(tmp_path, model_server) -> Cli:
    where = tmp_path / "clone"
    planted = recorded_in(fixture("claude_code", "tools"), where, tmp_path / "planted.jsonl")  # as if run there
    files = {f".claude/projects/{project_folder(where)}/planted.jsonl": planted.read_bytes()}
    project = clone(upstream(tmp_path, files), where)
    home = tmp_path / "home"
    home.mkdir()
    return Cli(project, model_server.env(clean_env(home)))


@pytest.mark.parametrize("spelling", [".claude", "./.claude", "../clone/.claude"])
def test_a_relative_claude_config_dir_imports_nothing_the_clone_committed(tmp_path, model_server, spelling):
    cli = _victim(tmp_path, model_server)
    result = cli.run("sessions", "import", "claude-code", "--all", env={**cli.env, "CLAUDE_CONFIG_DIR": spelling})
    assert "Traceback" not in result.err
    assert "planted.jsonl →" not in result.out, result.out


def test_the_control_the_same_directory_named_absolutely_is_imported(tmp_path, model_server):
    cli = _victim(tmp_path, model_server)
    env = {**cli.env, "CLAUDE_CONFIG_DIR": str(cli.project / ".claude")}
    result = cli.run("sessions", "import", "claude-code", "--all", env=env)
    assert result.rc == 0 and "planted.jsonl →" in result.out, (result.out, result.err)


def test_a_relative_codex_home_is_dropped_and_an_absolute_one_stays():
    from evo_agent.cli.startup_env import drop_relative_startup_files

    environ = {"CODEX_HOME": ".codex", "CLAUDE_CONFIG_DIR": "./.claude"}
    drop_relative_startup_files(environ)
    assert environ == {}
    own = {"CODEX_HOME": "/home/you/.codex", "CLAUDE_CONFIG_DIR": "/home/you/.claude"}
    kept = dict(own)
    drop_relative_startup_files(kept)
    assert kept == own
