"""The line print mode prints for a refused call is safe to paste into a shell.

`evo-agent: not run (needs approval): …; allow it with … --allowed-tools "Bash(<the model's command>)"` put the
model's command inside double quotes, where the shell still expands `$(…)` and backticks: a user pasting the
suggested option ran the model's `$(curl … | sh)` on the spot, without evo-agent, without any question.
The rule is now quoted for the shell: pasted, it is the one word `--allowed-tools` takes, and runs nothing.
"""

from __future__ import annotations

import re
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
