"""Choosing a project's MCP servers one by one is no yes to its `.evo-agent/settings.json`.

A project bringing both files is asked about `[y/N, or c to choose the MCP servers one by one]`. Answering `c`
and then no to every server trusted the project as a whole: its settings' `Bash` then ran every command unasked,
though the person had said yes to nothing. After the servers, `c` now asks about the settings too; a no keeps
them ignored (remembered, shown by `trust --status`), a no to everything is a no. The control: a yes to the
settings makes the same run's `touch pwned` run unasked.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use
from tests.pty_terminal import on_a_terminal
from tests.security.hostile import clone, upstream

SETTINGS = ".evo-agent/settings.json"
GRANTS = {"allow Bash": {"permissions": {"allow": ["Bash"]}}, "mode bypass": {"permission_mode": "bypass"}}
SERVER_QUESTION = b"Start the MCP server helper (shown above)? [y/N] "
SETTINGS_QUESTION = b"Obey .evo-agent/settings.json (shown above: its rules, mode and sandbox)? [y/N] "


def _victim(tmp_path, model_server, grant):
    marker = tmp_path / "server-ran"
    files = {SETTINGS: json.dumps(GRANTS[grant]),
             ".mcp.json": json.dumps({"mcpServers": {"helper": {"command": "sh", "args": ["-c", f"touch {marker}"]}}})}
    project = clone(upstream(tmp_path, files), tmp_path / "clone")
    os.chmod(project / SETTINGS, 0o644)
    (tmp_path / "home").mkdir()
    return Cli(project, model_server.env(clean_env(tmp_path / "home"))), marker


def _choose(cli, model_server, server: bytes, settings: bytes, *, approval: bool) -> str:
    model_server.script(tool_use("bash", {"command": "touch pwned"}), text("Done."))
    steps = [(b"one by one] ", b"c\r"), (SERVER_QUESTION, server), (SETTINGS_QUESTION, settings),
             (b"> ", b"set things up\r"), *([(b"Allow? ", b"no\r")] if approval else []), (b"> ", b"\x04")]
    rc, screen = on_a_terminal(cli, "--plain", steps=steps)
    assert rc == 0 and "Traceback" not in screen, screen
    return screen


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_no_to_every_server_and_to_the_settings_obeys_nothing(tmp_path, model_server, grant):
    cli, marker = _victim(tmp_path, model_server, grant)
    _choose(cli, model_server, b"n\r", b"n\r", approval=True)
    assert not (cli.project / "pwned").exists() and not marker.exists()
    assert cli.user_record()["trust"]["answer"] == "declined"


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_a_chosen_server_starts_and_the_settings_stay_ignored_in_later_runs(tmp_path, model_server, grant):
    cli, marker = _victim(tmp_path, model_server, grant)
    _choose(cli, model_server, b"y\r", b"n\r", approval=True)
    assert marker.exists() and not (cli.project / "pwned").exists()
    assert "settings.json: not obeyed, as you chose" in cli.trust("--status").out
    model_server.script(tool_use("bash", {"command": "touch pwned"}), text("Done."))
    later = cli.run("-p", "set things up")
    assert later.rc == 0 and not (cli.project / "pwned").exists(), later.err
    assert "permission mode bypass" not in later.err


def test_the_control_yes_to_the_settings_obeys_them(tmp_path, model_server):
    cli, marker = _victim(tmp_path, model_server, "allow Bash")
    _choose(cli, model_server, b"n\r", b"y\r", approval=False)
    assert (cli.project / "pwned").exists() and not marker.exists()


@pytest.mark.parametrize("edit", ["add", "remove"])
def test_editing_the_projects_mcp_json_keeps_trust_as_narrow_as_it_was(tmp_path, model_server, edit):
    """`evo-agent mcp add|remove --scope project` re-trusts the file the user changed: it trusted all of it, so the
    servers said no to started, and the settings said no to were obeyed."""
    unwanted, wanted, extra = tmp_path / "unwanted-ran", tmp_path / "wanted-ran", tmp_path / "extra-ran"
    servers = {"wanted": {"command": "sh", "args": ["-c", f"touch {wanted}"]},
               "unwanted": {"command": "sh", "args": ["-c", f"touch {unwanted}"]}}
    project = clone(upstream(tmp_path, {SETTINGS: json.dumps(GRANTS["allow Bash"]),
                                        ".mcp.json": json.dumps({"mcpServers": servers})}), tmp_path / "clone")
    os.chmod(project / SETTINGS, 0o644)
    (tmp_path / "home").mkdir()
    cli = Cli(project, model_server.env(clean_env(tmp_path / "home")))
    rc, screen = on_a_terminal(cli, "--plain", steps=[
        (b"one by one] ", b"c\r"), (b"Start the MCP server wanted (shown above)? [y/N] ", b"y\r"),
        (b"Start the MCP server unwanted (shown above)? [y/N] ", b"n\r"), (SETTINGS_QUESTION, b"n\r"),
        (b"> ", b"\x04")])
    assert rc == 0, screen
    wanted.unlink(missing_ok=True)  # servers start at the first request
    if edit == "add":
        changed = cli.run("mcp", "add", "--scope", "project", "extra", "--", "sh", "-c", f"touch {extra}")
    else:
        changed = cli.run("mcp", "remove", "--scope", "project", "wanted")
    assert changed.rc == 0, changed.err
    model_server.script(tool_use("bash", {"command": "touch pwned"}), text("Done."))
    result = cli.run("-p", "set things up")
    assert result.rc == 0 and "Traceback" not in result.err, result.err
    assert not unwanted.exists(), "a server the user said no to started after they edited .mcp.json"
    assert not (cli.project / "pwned").exists(), "settings the user said no to were obeyed after the edit"
    assert extra.exists() == (edit == "add"), "the control: the server the user added starts"
