"""The line print mode prints for a refused call is safe to paste into a shell.

`evo-agent: not run (needs approval): …; allow it with … --allowed-tools "Bash(<the model's command>)"` put the
model's command inside double quotes, where the shell still expands `$(…)` and backticks: a user pasting the
suggested option ran the model's `$(curl … | sh)` on the spot, without evo-agent, without any question.
The rule is now quoted for the shell: pasted, it is the one word `--allowed-tools` takes, and runs nothing.
"""

from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from tests.fake_model_server import text, tool_use


@pytest.mark.parametrize("spelling", [
    "echo $(touch {m})",
    "echo `touch {m}`",
    'echo "$(touch {m})"',
    "echo \"x\" $(touch {m}) 'y'",
    "echo '$(touch {m})' \"$(touch {m})\"",
    "echo ${{IFS}}$(touch {m})",
])
def test_the_suggested_allowed_tools_option_runs_nothing_when_pasted(cli, model_server, tmp_path, spelling):
    marker = tmp_path / "PASTED"
    command = spelling.format(m=marker)
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    result = cli.run("-p", "do it")
    [line] = [ln for ln in result.err_lines if ln.startswith("evo-agent: not run")]
    suggestion = re.search(r", (--allowed-tools .*) or a rule in", line)
    assert suggestion is not None, line
    pasted = subprocess.run(["bash", "-c", f"printf '%s\\n' {suggestion.group(1)}"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert not marker.exists()
    assert pasted.stdout.splitlines() == ["--allowed-tools", f"Bash({command})"]


@pytest.mark.parametrize("command", ["echo hi),Bash,Read(x", "true),Edit,Bash(true", "x),Bash(y"])
def test_the_suggested_rule_allows_that_command_and_nothing_more(cli, model_server, command):
    """`--allowed-tools` splits its value at commas outside parentheses: a command closing the rule's parenthesis
    (`echo hi),Bash,Read(x`) made the pasted suggestion grant a bare `Bash` (every command) beside it."""
    from evo_agent.agent.rules import Rule, parse_rules

    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    result = cli.run("-p", "do it")
    [line] = [ln for ln in result.err_lines if ln.startswith("evo-agent: not run")]
    suggestion = re.search(r", --allowed-tools (.*) or a rule in", line)
    assert suggestion is not None, line
    [value] = shlex.split(suggestion.group(1))
    assert value == "RULE" or parse_rules(value) == [Rule("Bash", command)], value


def test_a_file_name_never_turns_the_suggested_rule_into_more(cli, model_server, tmp_path):
    """The same through an edit's rule: the file `a),Bash,Edit(b` outside the project (it asks) is no rule list."""
    from evo_agent.agent.rules import parse_rules

    outside = tmp_path / "elsewhere" / "a),Bash,Edit(b"
    outside.parent.mkdir()
    model_server.script(tool_use("write_file", {"path": str(outside), "content": "x\n"}, id="t1"), text("done"))
    result = cli.run("-p", "do it")
    [line] = [ln for ln in result.err_lines if ln.startswith("evo-agent: not run")]
    suggestion = re.search(r", --allowed-tools (.*) or a rule in", line)
    assert suggestion is not None, line
    [value] = shlex.split(suggestion.group(1))
    if value != "RULE":
        for rule in parse_rules(value):
            assert rule.spec is not None and rule.kind != "Bash", line
    assert not outside.exists()
