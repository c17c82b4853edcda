"""A settings file or `.mcp.json` nested a hundred thousand deep is one line, never a traceback.

The trust question, `evo-agent trust` (which records the answer before describing the file), `trust --status`,
`mcp list` and a trusted run parsed the project's files with `json.loads`, catching ValueError only; `[[[[…`
nested past the parser's stack raised RecursionError, so a repository could crash every one of them (and a
project trusted by `evo-agent trust` then crashed every run). The files are now "not valid JSON (nested too
deeply)": the question says so, a trusted run stops with one line, nothing runs.
"""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import Cli
from tests.fake_model_server import text, tool_use
from tests.pty_terminal import on_a_terminal
from tests.security.hostile import cli_in_clone

SETTINGS = ".evo-agent/settings.json"
DEEP = 100_000
GRANT = '"permissions": {"allow": ["Bash"]}'
FILES = {  # each with a grant that would run `touch pwned` were the file obeyed
    "settings: a deep array value": {SETTINGS: "{" + GRANT + ', "x": ' + "[" * DEEP + "]" * DEEP + "}"},
    "settings: a deep object value": {SETTINGS: "{" + GRANT + ', "x": ' + '{"a":' * DEEP + "1" + "}" * DEEP + "}"},
    "settings: deep and unclosed": {SETTINGS: "{" + GRANT + ', "x": ' + "[" * DEEP},
    "settings: a deep document": {SETTINGS: "[" * DEEP + "]" * DEEP},
    ".mcp.json: deep servers": {".mcp.json": '{"mcpServers": {"x": ' + "[" * DEEP + "]" * DEEP + "}}"},
    ".mcp.json: deep args": {".mcp.json": '{"mcpServers": {"x": {"command": "sh", "args": '
                             + "[" * DEEP + "]" * DEEP + "}}}"},
}


def _victim(tmp_path, model_server, files) -> Cli:
    return cli_in_clone(tmp_path, model_server, files, SETTINGS)


def _one_line_at_most(result) -> None:
    assert "Traceback" not in result.err + result.out and "RecursionError" not in result.err, result.err[-600:]
    assert result.rc in (0, 1) and len([line for line in result.err_lines if line.strip()]) <= 1, result.err


@pytest.mark.parametrize("spelling", sorted(FILES))
def test_a_deeply_nested_file_never_crashes_the_question_the_trust_commands_or_a_run(
        tmp_path, model_server, spelling):
    cli = _victim(tmp_path, model_server, FILES[spelling])
    rc, screen = on_a_terminal(cli, "--plain", steps=[(b"Obey these in this project? [y/N", b"n\r"),
                                                      (b"> ", b"\x04")])
    assert rc == 0 and "Traceback" not in screen and "not valid JSON" in screen, screen[-600:]
    cli.trust("--revoke")
    for args in (("trust", "--status"), ("trust",), ("trust", "--status"), ("mcp", "list")):
        result = cli.run(*args)
        _one_line_at_most(result)
    model_server.script(tool_use("bash", {"command": "touch pwned"}), text("Done."))
    result = cli.run("-p", "set things up")  # trusted now: the file stops the run, or is one line and ignored
    assert "Traceback" not in result.err and not (cli.project / "pwned").exists(), result.err[-600:]
    if spelling.startswith("settings"):
        _one_line_at_most(result)
        assert result.rc == 1 and ("nested too deeply" in result.err or "not a JSON object" in result.err), result.err
    else:
        assert sum("nested too deeply" in line for line in result.err_lines) == 1, result.err


def test_the_control_the_same_grant_unnested_runs_once_trusted(tmp_path, model_server):
    cli = _victim(tmp_path, model_server, {SETTINGS: "{" + GRANT + ', "x": ' + json.dumps([[[]]]) + "}"})
    cli.trust()
    model_server.script(tool_use("bash", {"command": "touch pwned"}), text("Done."))
    result = cli.run("-p", "set things up")
    assert result.rc == 0 and (cli.project / "pwned").exists(), result.err


def test_a_deeply_nested_committed_task_file_is_one_line(tmp_path, model_server):
    plan = ".evo-agent/tasks/todo/2026-12-05-setup"
    cli = _victim(tmp_path, model_server, {f"{plan}/plan.md": "# Set things up\n",
                                           f"{plan}/task_1.json": '{"a": ' + "[" * DEEP + "]" * DEEP + "}"})
    for args in (("plan",), ("plan", "show")):
        result = cli.run(*args)
        assert "Traceback" not in result.err and "RecursionError" not in result.err, result.err[-600:]
